"""Review fixes: the release's trigram query rules in ``openclaw-current`` (spec
openclaw-current §5.2), NaN in importance and MMR, one owner per list."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memlab.openclaw_current.retrieval import (
    keyword_candidates,
    path_ranks,
    query_tokenizer,
    substring_filter,
)
from memlab.store import MemoryIndex
from tests.conftest import write
from tests.release_oracle import rank_hits

NOTES = "Merged OC-4412 PR\n"


pytestmark = pytest.mark.usefixtures("private_cache")  # tests/conftest.py


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "memory/notes.md", NOTES)
    write(root, "memory/other.md", "OC-4412 closed without review\n")
    write(root, "memory/plain.md", "nothing here\n")
    write(root, "memory/prs/list.md", "a list\n")
    return root


def _index(ws: Path, tok: str) -> MemoryIndex:
    ix = MemoryIndex(
        ws,
        embedder=None,
        memory_files="openclaw-2026.9",
        progress=False,
        fts_tokenizer=tok,
        db_path=ws.parent / f"{tok}.sqlite",
    )
    ix.sync()
    return ix


def _hit_paths(ix: MemoryIndex, query: str) -> list[tuple[str, bool]]:
    hits, _, _ = keyword_candidates(ix, query)
    return [(str(ix.table.paths[h.pos]), h.has_body) for h in hits]


@pytest.mark.parametrize("tok", ["unicode61", "trigram", "porter"])
def test_keyword_candidates_follow_the_index_tokenizer(ws: Path, tok: str) -> None:
    # "OC-4412 PR": unicode61 ANDs three tokens; trigram MATCHes "4412" and keeps the
    # chunks holding "OC" and "PR" as substrings (other.md has no "PR")
    assert _hit_paths(_index(ws, tok), "OC-4412 PR") == [("memory/notes.md", True)]


def test_trigram_short_tokens_filter_before_the_limit_and_substring_only_has_no_rank(
    ws: Path,
) -> None:
    ix = _index(ws, "trigram")
    hits, bm25, paths = keyword_candidates(ix, "PR")
    body = {str(ix.table.paths[h.pos]): h for h in hits if h.has_body}
    # substring-only: case-insensitive, textScore 0, no bm25 rank
    assert set(body) == {"memory/notes.md"}
    assert body["memory/notes.md"].text_score == 0 and body["memory/notes.md"].bm25 is None
    assert list(bm25["PR"].values()) == [None]
    # the path leg: every path holding "pr" (any case) with rank 0 = path score 1
    assert paths["PR"] == {"memory/prs/list.md": 0.0}
    # unicode61 rules on the same index would find nothing: the fix is the tokenizer
    assert keyword_candidates(ix, "PR", "unicode61")[0] == []


def test_path_ranks_trigram_match_and_filter(ws: Path) -> None:
    ix = _index(ws, "trigram")
    assert set(path_ranks(ix.table, "list pr", "trigram")) == {"memory/prs/list.md"}
    assert path_ranks(ix.table, "list xy", "trigram") == {}
    assert path_ranks(ix.table, "", "trigram") == {}


def test_rank_hits_agrees_with_the_legs_under_trigram(ws: Path) -> None:
    """rank_hits on the legs keyword_candidates ran keeps the same keyword hits, in the
    same order, the substring-only path row (rank 0) among them."""
    ix = _index(ws, "trigram")
    t = ix.table
    chunks = [
        {
            "id": str(t.ids[k]),
            "path": str(t.paths[k]),
            "startLine": int(t.start_lines[k]),
            "endLine": int(t.end_lines[k]),
            "text": txt,
        }
        for k, txt in enumerate(ix.texts(list(range(len(t)))))
    ]
    hits, bm25, paths = keyword_candidates(ix, "PR")
    kw = dict(now_ms=0.0, min_score=0.0, max_results=50)
    got = rank_hits("PR", chunks, None, bm25, path_rows=paths, tokenizer="trigram", **kw)
    assert [r["id"] for r in got] == [str(t.ids[h.pos]) for h in hits]
    assert "memory/prs/list.md" in {r["path"] for r in got}


def test_query_tokenizer_and_substring_filter() -> None:
    assert [query_tokenizer(t) for t in ("unicode61", "porter", "trigram")] == [
        "unicode61",
        "unicode61",
        "trigram",
    ]
    ok = substring_filter(["oc", "É"])
    assert ok("Merged OC-4412 \u00e9t\u00e9")  # case-insensitive
    assert ok("OC e\u0301")  # NFD text normalised to NFC first
    assert not ok("OC only")
    assert substring_filter([])("anything")


# ------------------------------------------------------------------ NaN importance
def test_importance_multiplier_nan_is_no_importance() -> None:
    from memlab.openclaw_current import importance_multiplier

    assert importance_multiplier(math.nan) == 1.0 == importance_multiplier(None)
    assert importance_multiplier(8) == pytest.approx(1.15)


def test_rank_hits_nan_importance_ranks_as_none() -> None:
    chunks = [
        {"id": i, "path": f"memory/{i}.md", "startLine": 1, "endLine": 1, "text": f"router {i}"}
        for i in ("a", "b")
    ]
    kw = dict(now_ms=0.0, min_score=0.0, mtimes={"memory/a.md": 0.0, "memory/b.md": 0.0})
    vec = {"a": 0.9, "b": 0.8}
    plain = rank_hits("router", chunks, vec, None, **kw)
    nan = rank_hits("router", [dict(chunks[0], importance=math.nan), chunks[1]], vec, None, **kw)
    assert [(r["id"], r["score"]) for r in nan] == [(r["id"], r["score"]) for r in plain]
    assert [r["id"] for r in plain] == ["a", "b"]


# ------------------------------------------------------------------ one owner per list
def test_default_memory_files_has_one_owner() -> None:
    import dataclasses
    import inspect

    from memlab import tools
    from memlab.cli import build_parser
    from memlab.config import vocab
    from memlab.eval.lab import Lab
    from memlab.pipeline import Pipeline
    from memlab.retrieval.candidates import RetrievalSpec
    from memlab.store import filerules

    d = vocab.DEFAULT_MEMORY_FILES
    assert d in vocab.MEMORY_FILE_RULES and filerules.DEFAULT_MEMORY_FILES is d
    assert Pipeline().memory_files == d
    spec_default = {f.name: f.default for f in dataclasses.fields(RetrievalSpec)}
    assert spec_default["memory_files"] == d
    assert inspect.signature(Lab.__init__).parameters["memory_files"].default == d
    for fn in (tools.resolve_memory_path, tools.memory_path_refusal, tools.get_root_file_allowed):
        assert inspect.signature(fn).parameters["rules"].default == d
    args = build_parser().parse_args(["files", "."])
    assert args.memory_files == d


def test_get_root_files_cover_exactly_the_memory_file_rules() -> None:
    import subprocess
    import sys

    from memlab import tools
    from memlab.config import vocab

    assert set(tools.GET_ROOT_FILES_BY_RULES) == set(vocab.MEMORY_FILE_RULES)
    code = (
        "import memlab.config.vocab as v\n"
        "v.MEMORY_FILE_RULES = (*v.MEMORY_FILE_RULES, 'openclaw-2027.1')\n"
        "import memlab.tools\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode != 0
    assert "GET_ROOT_FILES_BY_RULES" in res.stderr and "openclaw-2027.1" in res.stderr


def test_modalities_and_utf16_len_live_in_one_place() -> None:
    from memlab.config import vocab
    from memlab.config.release import check_search_keys
    from memlab.retrieval import textquery
    from memlab.tools import release as current_tools

    assert current_tools.utf16_len is textquery.utf16_len
    assert textquery.utf16_len("a😀") == 3
    check_search_keys({"multimodal": {"modalities": list(vocab.MULTIMODAL_MODALITIES)}})
    with pytest.raises(ValueError) as err:
        check_search_keys({"multimodal": {"modalities": ["video"]}})
    assert all(m in str(err.value) for m in vocab.MULTIMODAL_MODALITIES)
