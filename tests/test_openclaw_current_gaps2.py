"""Four gaps of the 2026.9.6 release path, run through the CLI as a user would (spec
openclaw-current.md §1, §2, §8, §11, §12): ``{path, pattern}`` extra paths reach discovery,
a ``memory.search`` config indexes the release's files, ``importance`` is an integer, and
``memlab chunk WS --memory-files`` prints the chunks an index of that rule stores."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memlab.chunking import ChunkerConfig
from memlab.files.workspace import discover_memory_files
from memlab.openclaw_current import chunk_markdown, list_memory_files
from tests.conftest import cli, write

CURRENT = "openclaw-2026.9"
OLD = "openclaw-2026.4"
PATTERNED = {"path": "notes", "pattern": "sub/**/*.md"}
MEMORY = (
    "# Infra\n"
    "- The router VLAN lives on the gateway <!-- importance: 8 -->\n"
    "  second line of the router entry\n"
    "- Router firmware notes, no annotation\n"
)


@pytest.fixture
def ws(tmp_path: Path, private_home: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", MEMORY)
    write(root, "memory/2026-11-02.md", "# Day\nrouter reboot at noon\n")
    write(root, "notes/top.md", "top-level note, outside the pattern\n")
    write(root, "notes/sub/a.md", "router in sub\n")
    write(root, "notes/sub/deep/b.md", "router deeper\n")
    write(root, "notes/sub/c.txt", "not markdown\n")
    write(root, "more/extra.md", "a plain string extra path\n")
    return root


def config(tmp_path: Path, search: dict[str, Any], name: str = "openclaw.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps({"memory": {"search": search}}))
    return p


def indexed_files(*args: str) -> tuple[str, list[str]]:
    """Index with ``args`` (hashing embedder), then the rule and files of that index."""
    code, _, err = cli("index", *args, "--embedder", "hashing", "--quiet")
    assert code == 0, err
    code, out, err = cli("status", *args, "--embedder", "hashing", "--json")
    assert code == 0, err
    st = json.loads(out)
    with sqlite3.connect(st["index_path"]) as db:
        files = [r[0] for r in db.execute("SELECT path FROM files ORDER BY rowid")]
    return st["fingerprint"]["memory_files"], files


# ------------------------------------------------------------------ 1. {path, pattern}
def test_patterned_extra_path_reaches_discovery(ws: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, {"extraPaths": [PATTERNED, "more"]})
    rule, files = indexed_files(str(ws), "--config", str(cfg))
    want = [f.path for f in list_memory_files(ws, [PATTERNED, "more"])]
    assert rule == CURRENT and files == want
    assert "notes/sub/a.md" in files and "notes/sub/deep/b.md" in files
    assert "notes/top.md" not in files and "notes/sub/c.txt" not in files  # the pattern
    assert "more/extra.md" in files  # a string extra walks its folder as before
    # the 2026-04 rule walks the entry's folder (its own discovery order) and keeps what
    # the pattern matches, as a QMD collection's files (memlab.store.filerules)
    rule, files = indexed_files(str(ws), "--config", str(cfg), "--memory-files", OLD)
    assert rule == OLD
    walked = [f.path for f in discover_memory_files(ws, ["notes", "more"])]
    assert files == [f for f in walked if f != "notes/top.md"]
    assert "notes/sub/a.md" in files and "more/extra.md" in files


def test_patterned_and_plain_entries_are_distinct_index_identities(ws: Path) -> None:
    from memlab.config import MemorySearchConfig
    from memlab.store import MemoryIndex

    cfg = MemorySearchConfig(extra_paths=("notes", PATTERNED, dict(PATTERNED), "notes"))
    assert cfg.extra_paths == ("notes", PATTERNED)  # duplicates dropped, order kept
    plain = MemoryIndex(ws, embedder=None, extra_paths=["notes", Path("notes")], progress=False)
    assert plain.extra_paths == ("notes",)
    blank = MemoryIndex(ws, embedder=None, extra_paths=[{"path": "notes"}], progress=False)
    assert blank.extra_paths == ("notes",)  # no pattern: the plain path, same identity
    pat = MemoryIndex(ws, embedder=None, extra_paths=[PATTERNED], progress=False)
    assert pat.fingerprint()["extra_paths"] != plain.fingerprint()["extra_paths"]
    assert blank.fingerprint() == plain.fingerprint()


# ------------------------------------------------------------------ 2. default rule
def test_release_config_defaults_index_and_status_to_release_files(
    ws: Path, tmp_path: Path
) -> None:
    cfg = config(tmp_path, {})
    rule, files = indexed_files(str(ws), "--config", str(cfg))
    assert rule == CURRENT and files == [f.path for f in list_memory_files(ws)]
    rule, _ = indexed_files(str(ws), "--config", str(cfg), "--memory-files", OLD)
    assert rule == OLD  # an explicit --memory-files wins
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps({"agents": {"defaults": {"memorySearch": {}}}}))
    rule, _ = indexed_files(str(ws), "--config", str(legacy))
    assert rule == OLD  # the 2026-04 layout keeps the 2026-04 files
    rule, _ = indexed_files(str(ws))
    assert rule == OLD


# ------------------------------------------------------------------ 3. importance int
def test_search_json_importance_is_an_integer(ws: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, {"query": {"maxResults": 10, "minScore": 0}})
    code, out, err = cli(
        "search", str(ws), "router vlan gateway", "--config", str(cfg), "--embedder", "hashing",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    results = json.loads(out)["results"]
    marked = [r for r in results if "importance" in r]
    assert [r["importance"] for r in marked] == [8]
    assert type(marked[0]["importance"]) is int and '"importance": 8,' in out
    assert marked[0]["startLine"] == 2 and marked[0]["endLine"] == 3
    assert all("importance" not in r for r in results if r["startLine"] != 2)


# ------------------------------------------------------------------ 4. memlab chunk
def test_chunk_workspace_under_the_release_rule(ws: Path) -> None:
    code, out, err = cli("chunk", str(ws), "--memory-files", CURRENT, "--json")
    assert code == 0, err
    rows = json.loads(out)
    want = [
        (f.path, c.start_line, c.end_line, c.text, c.importance, c.triggers, c.project_key)
        for f in list_memory_files(ws)
        for c in chunk_markdown(f.abspath.read_text(), f.path)
    ]
    got = [
        (r["path"], r["start_line"], r["end_line"], r["text"], r["importance"], r["triggers"],
         r["project"])
        for r in rows
    ]  # fmt: skip
    assert got == want
    memory = [r for r in rows if r["path"] == "MEMORY.md"]
    spans = [(1, 1), (2, 3), (4, 5)]  # the final newline: an empty line 5
    assert [(r["start_line"], r["end_line"]) for r in memory] == spans
    assert memory[1]["text"] == (
        "- The router VLAN lives on the gateway\n  second line of the router entry"
    )
    assert memory[1]["importance"] == 8 and memory[2]["importance"] is None
    assert not any("<!--" in r["text"] for r in rows)
    code, out, err = cli("chunk", str(ws), "--memory-files", CURRENT, "--show")
    assert code == 0, err
    assert "importance" in out.splitlines()[0] and f"chunk(s) from 2 file(s) under {CURRENT}" in out
    assert "--- MEMORY.md lines 2-3 ---" in out


def test_chunk_workspace_under_the_old_rule_and_errors(ws: Path) -> None:
    code, out, err = cli(
        "chunk", str(ws), "--memory-files", OLD, "--extra", "notes", "--json", "--tokens", "50",
        "--overlap", "10",
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)
    chunker = ChunkerConfig("openclaw", 50, 10)
    want = [
        (f.path, c.start_line, c.end_line, c.text)
        for f in discover_memory_files(ws, ["notes"])
        for c in chunker.chunk(f.abspath.read_text())
    ]
    assert [(r["path"], r["start_line"], r["end_line"], r["text"]) for r in rows] == want
    assert "importance" not in rows[0]
    assert any("<!--" in r["text"] for r in rows)  # 2026-04 keeps the comments
    code, _, err = cli("chunk", str(ws))  # no rule: one Markdown file, as before
    assert code == 2 and "is a directory" in err and "--memory-files" in err
    code, _, err = cli("chunk", str(ws / "nope"), "--memory-files", CURRENT)
    assert code == 2 and "file not found" in err
