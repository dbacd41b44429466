from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.store import MemoryIndex
from memlab.tools import (
    SearchArgumentError,
    citation,
    memory_get,
    memory_path_refusal,
    memory_search,
)
from tests.conftest import write


@pytest.fixture
def index(small_workspace: Path, hashing) -> MemoryIndex:
    idx = MemoryIndex(
        small_workspace, embedder=hashing, db_path=small_workspace.parent / "t.sqlite"
    )
    idx.sync()
    return idx


def test_search_shape_and_citations(index: MemoryIndex) -> None:
    out = memory_search(index, "MEM-4821 flaky watcher", minScore=0.0)
    assert set(out) == {"results", "provider", "model", "fallback", "citations", "mode"}
    assert out["provider"] == "hashing" and out["mode"] == "hybrid"
    r = out["results"][0]
    assert set(r) == {"path", "startLine", "endLine", "score", "snippet", "source", "citation"}
    assert r["citation"] == f"{r['path']}#L{r['startLine']}-L{r['endLine']}"
    assert r["snippet"].endswith(f"\n\nSource: {r['citation']}")
    scores = [x["score"] for x in out["results"]]
    assert scores == sorted(scores, reverse=True)
    off = memory_search(index, "MEM-4821 flaky watcher", minScore=0.0, citations="off")
    assert "citation" not in off["results"][0] and "Source:" not in off["results"][0]["snippet"]
    assert len(memory_search(index, "coffee", maxResults=1, minScore=0.0)["results"]) == 1


def test_citation_format() -> None:
    assert citation("memory/a.md", 5, 7) == "memory/a.md#L5-L7"
    assert citation("memory/a.md", 5, 5) == "memory/a.md#L5"


def test_snippet_is_700_utf16_units(tmp_path: Path, hashing) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "x" * 699 + "😀" + "tail words here")
    idx = MemoryIndex(ws, embedder=hashing, db_path=tmp_path / "s.sqlite")
    out = memory_search(idx, "tail words", minScore=0.0, citations="off")
    snip = out["results"][0]["snippet"]
    assert snip == "x" * 699  # the emoji would cross 700 units: not split, dropped


def test_search_failure_payload(index: MemoryIndex) -> None:
    """An outage (a provider down under a system without a keyword leg to fall back on)
    answers OpenClaw's payload."""
    from memlab.embed import EmbeddingError
    from memlab.pipeline.presets import preset

    class Down:
        provider, model = index.embedder.provider, index.embedder.model
        dimensions, identity_key = index.embedder.dimensions, index.embedder.identity_key

        def embed_query(self, text: str) -> None:
            raise EmbeddingError("provider down")

    index.embedder = Down()
    out = memory_search(index, "gateway", pipeline=preset("vector"))
    assert out["results"] == [] and out["disabled"] and out["unavailable"]
    assert {"error", "warning", "action"} <= set(out)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("",), "query must be a non-empty text"),
        (("   ",), "query must be a non-empty text"),
        (("tea", -3), "maxResults must be an integer >= 1, got -3"),
        (("tea", 0), "maxResults must be an integer >= 1, got 0"),
        (("tea", 2.5), "maxResults must be an integer >= 1, got 2.5"),
        (("tea", None, float("nan")), "minScore must be a finite number, got nan"),
    ],
)
def test_bad_arguments_are_the_callers_mistake(index: MemoryIndex, args, named) -> None:
    """A bad argument raises SearchArgumentError naming it and its range,
    never the unavailable payload an outage gets."""
    with pytest.raises(SearchArgumentError, match=re.escape(named)):
        memory_search(index, *args)


def test_get_rules(small_workspace: Path, tmp_path: Path) -> None:
    ws = small_workspace
    assert memory_get(ws, "MEMORY.md")["text"].startswith("# Memory")
    assert memory_get(ws, str(ws / "MEMORY.md"))["path"] == "MEMORY.md"
    got = memory_get(ws, "memory/2026-01-05.md", 2, 1)
    assert got == {
        "text": "- Preference: Peter likes dark roast coffee.",
        "path": "memory/2026-01-05.md",
    }
    assert memory_get(ws, "memory/2026-01-05.md", 99)["text"] == ""
    assert memory_get(ws, "memory/2026-09-09.md") == {"text": "", "path": "memory/2026-09-09.md"}
    write(tmp_path, "secret.md", "SECRET")
    write(ws, "other.md", "not memory")
    os.symlink(tmp_path / "secret.md", ws / "memory" / "link.md")
    for bad in (
        "../secret.md",
        str(tmp_path / "secret.md"),
        "memory/../other.md",
        "other.md",
        "notes.txt",
        "memory/link.md",
        "memory\\2026-01-05.md",
        "memory/2026-01-05.md\x00.md",
        "",
    ):
        res = memory_get(ws, bad)
        assert res.get("error") == "path required", bad
        assert "SECRET" not in str(res)
    # extra paths are readable
    write(tmp_path, "extra/notes.md", "extra notes")
    assert (
        memory_get(ws, str(tmp_path / "extra/notes.md"), extra_paths=[str(tmp_path / "extra")])[
            "text"
        ]
        == "extra notes"
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"./\\%2e~ab", "..", "memory", "MEMORY.md", "secret.md", "\x00", "/"]),
        max_size=10,
    ).map("".join)
)
def test_get_never_leaks_outside(tmp_path_factory, path: str) -> None:
    base = tmp_path_factory.getbasetemp() / "leak"
    ws = base / "ws"
    if not ws.exists():
        write(base, "secret.md", "SECRET")
        write(ws, "secret.md", "SECRET")
        write(ws, "MEMORY.md", "ok")
        write(ws, "memory/a.md", "ok")
    res = memory_get(ws, path)
    assert "SECRET" not in res.get("text", "")


def test_get_refusal_names_the_rule(small_workspace: Path, tmp_path: Path) -> None:
    """The tool keeps OpenClaw's bare ``path required``; memory_path_refusal says why."""
    ws = small_workspace
    write(tmp_path, "secret.md", "SECRET")
    write(ws, "other.md", "not memory")
    os.symlink(tmp_path / "secret.md", ws / "memory" / "link.md")
    cases = {
        "": "the path is empty",
        "memory/a.md\x00.md": "NUL byte",
        "memory\\2026-01-05.md": "backslash",
        "notes.txt": "not a .md file",
        "memory": "not a .md file",
        "../secret.md": "outside the workspace",
        str(tmp_path / "secret.md"): "outside the workspace",
        "other.md": "not MEMORY.md, memory.md or dreams.md nor under memory/",
        "memory/../other.md": "not MEMORY.md, memory.md or dreams.md nor under memory/",
        "memory/link.md": "a symlink",
    }
    for path, rule in cases.items():
        res = memory_get(ws, path)
        assert res == {"error": "path required", "path": path}, path  # shape unchanged
        why = memory_path_refusal(ws, path)
        assert why is not None and rule in why, (path, why)
    for ok in ("MEMORY.md", "memory/2026-01-05.md", "memory/2026-09-09.md", "dreams.md"):
        assert memory_path_refusal(ws, ok) is None, ok
    extra = write(tmp_path, "extra/notes.md", "extra")
    assert memory_path_refusal(ws, str(extra), [str(tmp_path / "extra")]) is None
    assert "outside the workspace" in memory_path_refusal(ws, str(extra))
