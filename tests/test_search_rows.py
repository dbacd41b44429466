"""The warm search answer is built from the ranking's arrays, not a DataFrame.

``memlab.tools.memory_search`` (plain ``--json`` and the MCP server) makes its results from
``memlab.pipeline.explain.result_rows``; ``ranking_frame`` (``memlab search``, ``--explain``,
the lab) reads the same rows. These tests build the answer the old way, from the frame,
and require it to equal the array-built one field for field (ids, order, scores, snippets,
citations) for several presets on a generated workspace, queries taken from its questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.pipeline.explain import ranking_frame, result_rows
from memlab.pipeline.presets import preset
from memlab.retrieval.rerank import snippet as make_snippet
from memlab.store import MemoryIndex
from memlab.tools import SNIPPET_CHARS, citation, memory_search, search_with_fallback

PRESETS = ("openclaw", "wsum", "memlab-best", "openclaw-current")
NOW = 1_800_000_000.0  # a fixed clock: decay must not depend on when the test runs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("rows") / "corpus"
    ds = generate(SynthConfig(days=12, seed=5, queries_per_type=3), root)
    (group, ws), *_ = ds.workspaces.items()
    queries = ds.queries.loc[ds.queries["group"] == group, "query"].tolist()
    return ws, queries[:12]


def index_for(ws: Path, name: str, tmp: Path) -> MemoryIndex:
    """An index of the kind the preset is defined on (tokenizer, memory-file rule)."""
    spec = preset(name).retrieval_spec()
    opts: dict[str, Any] = {}
    if spec.fts_tokenizer:
        opts["fts_tokenizer"] = spec.fts_tokenizer
    if spec.memory_files:
        opts["memory_files"] = spec.memory_files
    return MemoryIndex(ws, db_path=tmp / f"{name}.sqlite", embedder=HashingEmbedder(), **opts)


def frame_results(df: Any, cite: bool) -> list[dict[str, Any]]:
    """The answer as memory_search built it before: from the results DataFrame."""
    out = []
    cols = [df[c].tolist() for c in ("text", "path", "start_line", "end_line", "score", "source")]
    for text, path, start, end, score, source in zip(*cols, strict=True):
        snip = make_snippet(text, SNIPPET_CHARS)
        item: dict[str, Any] = {
            "path": path,
            "startLine": int(start),
            "endLine": int(end),
            "score": float(score),
            "snippet": snip,
            "source": source,
        }
        if cite:
            c = citation(path, int(start), int(end))
            item["snippet"] = f"{snip}\n\nSource: {c}"
            item["citation"] = c
        out.append(item)
    out.sort(key=lambda r: (-r["score"], r["path"]))
    return out


@pytest.mark.parametrize("name", PRESETS)
def test_array_built_answer_equals_the_frame_built_one(
    corpus: tuple[Path, list[str]], name: str, tmp_path: Path
) -> None:
    ws, queries = corpus
    index = index_for(ws, name, tmp_path)
    p = preset(name, min_score=0.0)  # min 0: every query returns a full page to compare
    try:
        returned = 0
        for citations in ("on", "off"):
            for q in queries:
                res = memory_search(index, q, pipeline=p, citations=citations, now=NOW)
                assert "error" not in res, res
                out = search_with_fallback(index, p, q, now=NOW)
                want = frame_results(out.frame, citations == "on")
                assert res["results"] == want, (name, q)  # every field, in order, exactly
                returned += len(want)
        assert returned > 0  # the comparison saw results
    finally:
        index.close()


@pytest.mark.parametrize("name", PRESETS)
def test_result_rows_are_the_frame_columns(
    corpus: tuple[Path, list[str]], name: str, tmp_path: Path
) -> None:
    ws, queries = corpus
    index = index_for(ws, name, tmp_path)
    p = preset(name, min_score=0.0)
    try:
        cs = p.retrieve(index, queries, qids=[f"q{i}" for i in range(len(queries))])
        r = p.rank(cs)
        rows = result_rows(cs, r)
        df = ranking_frame(cs, r, p.name)
        assert len(df) == len(rows["pos"]) > 0
        for key in ("qid", "docno", "score", "rank", "path", "start_line", "end_line", "pos"):
            assert df[key].tolist() == rows[key].tolist(), key
        assert df["source"].tolist() == rows["source"].tolist()
        # rank order within each query: slots 0, 1, 2 ... and scores as ranked
        for qid in dict.fromkeys(rows["qid"].tolist()):
            ranks = rows["rank"][rows["qid"] == qid]
            assert ranks.tolist() == list(range(len(ranks)))
    finally:
        index.close()


def test_the_frame_is_built_only_when_asked(
    corpus: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.pipeline.explain

    ws, queries = corpus
    index = index_for(ws, "openclaw", tmp_path)
    calls: list[int] = []
    real = memlab.pipeline.explain.ranking_frame

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(memlab.pipeline.explain, "ranking_frame", counting)
    try:
        res = memory_search(index, queries[0], minScore=0.0, now=NOW)
        assert res["results"] and calls == []  # the answer never made a DataFrame
        out = search_with_fallback(index, preset("openclaw", min_score=0.0), queries[0], now=NOW)
        assert calls == []
        assert np.array_equal(out.frame["score"].to_numpy(), out.frame["score"].to_numpy())
        assert calls == [1]  # built on first access, then cached
    finally:
        index.close()
