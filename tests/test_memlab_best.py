"""memlab-best: its stages (neighbour context, heading filter), vector caching, the lab
running each system on its own tokenizer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.datasets.base import Dataset
from memlab.embed import CachedEmbedder, HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.fastsweep import fast_path_reason
from memlab.eval.lab import Lab
from memlab.eval.sweep import sweep
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import (
    PRESETS,
    TURN_CONTEXT_OFF,
    memlab_best,
    memlab_best_chunk,
    preset,
)
from memlab.stages.context import heading_chunks, neighbor_positions, neighbor_scores
from memlab.store import ChunkTable, MemoryIndex
from tests.conftest import line_index

TURNS = [
    "## Session 1 — 1:00 pm on 8 May, 2023",
    "[D1:1] Ana: did you adopt the grey kitten from the shelter",
    "[D1:2] Ben: yes we did last week and she is called Luna",
    "[D1:3] Ana: my garden tomatoes are finally ripe",
    "[D1:4] Ben: I cooked pasta with basil for dinner",
    "[D1:5] Ana: we painted the fence blue on sunday",
    "[D1:6] Ben: the marathon training starts in june",
]


def table(paths: list[str], starts: list[int], ends: list[int] | None = None) -> ChunkTable:
    n = len(paths)
    return ChunkTable(
        rowids=np.arange(n, dtype=np.int64),
        ids=np.array([f"c{i}" for i in range(n)], dtype=object),
        paths=np.array(paths, dtype=object),
        sources=np.array(["memory"] * n, dtype=object),
        start_lines=np.array(starts, dtype=np.int64),
        end_lines=np.array(ends if ends is not None else starts, dtype=np.int64),
        mtimes=np.zeros(n),
        vectors=None,
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> MemoryIndex:
    ws = tmp_path_factory.mktemp("ws")
    return line_index(ws, {"memory/2023-05-08.md": "\n".join(TURNS) + "\n"})


# ---------------------------------------------------------------------- presets
def test_presets_registered_and_overridable() -> None:
    assert {"memlab-best", "memlab-best-chunk"} <= set(PRESETS)
    p = preset("memlab-best")
    assert isinstance(p, Pipeline) and p == memlab_best()
    assert p.neighbor_prev > 0 and p.drop_headings and p.fts_tokenizer == "porter"
    assert p.keyword_mode == "or" and p.depth == 1000 == p.at_k(10).depth
    q = preset("memlab-best", neighbor_next=0.0, max_results=3)
    assert (q.neighbor_next, q.max_results, q.name) == (0.0, 3, "memlab-best")
    c = memlab_best_chunk()
    assert c.name == "memlab-best-chunk" and c.vector_weight + c.text_weight == pytest.approx(1)


@pytest.mark.parametrize(
    ("field", "value"),
    [("neighbor_prev", 1.5), ("neighbor_next", -0.1), ("neighbor_prev", True)],
)
def test_neighbour_weights_validated(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        memlab_best(**{field: value})


def test_tokenizer_and_flag_validated() -> None:
    with pytest.raises(ValueError, match="fts_tokenizer"):
        memlab_best(fts_tokenizer="snowball")
    with pytest.raises(ValueError, match="drop_headings"):
        memlab_best(drop_headings=1)


# ---------------------------------------------------------------------- neighbours
def test_neighbor_positions_links_adjacent_lines_of_one_file_and_segment() -> None:
    t = table(
        ["a", "a", "a", "b", "b", "a", "a"],
        [1, 2, 4, 1, 2, 1, 2],
    )
    prev, nxt = neighbor_positions(t)
    # 0-1 adjacent; 1-2 has a gap (line 3); 2-3 other file; 3-4 adjacent; 4-5 other file;
    # 5-6 adjacent (a new run of file "a" starting at line 1 is not linked to position 4).
    assert prev.tolist() == [-1, 0, -1, -1, 3, -1, 5]
    assert nxt.tolist() == [1, -1, -1, 4, -1, 6, -1]
    # A segment boundary (a lab's merged indexes) cuts the link 5-6 would otherwise make.
    t2 = table(["a", "a", "a"], [1, 2, 3])
    prev2, _ = neighbor_positions(t2, offsets=[0, 2])
    assert prev2.tolist() == [-1, 0, -1]


def test_neighbor_positions_link_overlapping_chunks() -> None:
    t = table(["a", "a", "a"], [1, 10, 30], [12, 25, 40])
    prev, nxt = neighbor_positions(t)
    assert prev.tolist() == [-1, 0, -1]  # 30 > 25 + 1: not adjacent
    assert nxt.tolist() == [1, -1, -1]


def test_neighbor_scores_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    n, q, c = 30, 5, 12
    neighbor = np.where(rng.random(n) < 0.7, rng.integers(0, n, n), -1)
    pos = np.stack([rng.permutation(n)[:c] for _ in range(q)])
    scores = rng.random((q, c))
    valid = rng.random((q, c)) < 0.8
    got = neighbor_scores(pos, scores, valid, neighbor, n)
    for i in range(q):
        for j in range(c):
            want = 0.0
            if valid[i, j] and neighbor[pos[i, j]] >= 0:
                hit = np.nonzero((pos[i] == neighbor[pos[i, j]]) & valid[i])[0]
                want = scores[i, hit[0]] if hit.size else 0.0
            assert got[i, j] == pytest.approx(want)


def test_context_stage_adds_weighted_neighbour_score(index: MemoryIndex) -> None:
    base = memlab_best(
        neighbor_prev=0.0, neighbor_next=0.0, drop_headings=False, **TURN_CONTEXT_OFF
    )
    ctx = base.replace(neighbor_prev=0.5, neighbor_next=0.25)
    cs = ctx.retrieve(index, ["adopt grey kitten"], depth=50)
    f0 = base.scores(cs)["final"][0]
    st = ctx.scores(cs)
    pos = cs.pos[0]
    at = {int(p): j for j, p in enumerate(pos) if p >= 0}
    prev, nxt = neighbor_positions(cs.table)
    for p, j in at.items():
        fp = f0[at[prev[p]]] if prev[p] in at else 0.0
        fn = f0[at[nxt[p]]] if nxt[p] in at else 0.0
        want = f0[j] + max(0.5 * fp, 0.25 * fn, 0.0)
        assert st["final"][0, j] == pytest.approx(want)
    # The reply right after the question that holds the query words moves up.
    texts = lambda df: [t.split("]")[0] for t in df["text"]]  # noqa: E731
    strong = ctx.replace(drop_headings=True, neighbor_prev=1.0)
    with_ctx = texts(strong.search(index, "adopt grey kitten"))
    without = texts(base.replace(drop_headings=True).search(index, "adopt grey kitten"))
    assert with_ctx[0] == without[0] == "[D1:1"
    assert with_ctx.index("[D1:2") < without.index("[D1:2")


def test_heading_only_chunks_are_never_results(index: MemoryIndex) -> None:
    keep = memlab_best(drop_headings=False)
    drop = memlab_best()
    query = "Session May 2023"  # only the heading line holds these words
    assert keep.search(index, query)["text"].iloc[0].startswith("## Session")
    assert not drop.search(index, query)["text"].str.startswith("#").any()
    cs = drop.retrieve(index, [query], depth=50)
    flags = heading_chunks(cs, cs.pos)
    texts = cs.texts(cs.pos[0][cs.pos[0] >= 0])
    assert flags[0][cs.pos[0] >= 0].tolist() == [t.startswith("## ") for t in texts]


def test_sweep_never_takes_the_fast_path_for_a_subclass(index: MemoryIndex) -> None:
    cs = memlab_best().retrieve(index, ["kitten"], depth=50)
    assert fast_path_reason(cs, [memlab_best()]) is not None
    assert fast_path_reason(cs, [Pipeline(keyword_mode="or")]) is None


# ---------------------------------------------------------------------- cached vectors
class QueryCounter(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dimensions=32)
        self.queries = 0
        self.documents = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return super().embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents += len(texts)
        return super().embed_documents(texts)


def test_cached_embedder_is_transparent_and_persistent(tmp_path: Path) -> None:
    inner = QueryCounter()
    ce = CachedEmbedder(inner, tmp_path)
    assert (ce.provider, ce.model, ce.identity_key) == (
        inner.provider,
        inner.model,
        inner.identity_key,
    )
    qs = ["  where is Luna ", "what is cooking"]
    assert ce.prefetch(qs) == 2 and ce.prefetch(qs) == 0
    np.testing.assert_allclose(ce.embed_query(qs[0]), inner.embed_query(qs[0]), atol=1e-6)
    np.testing.assert_allclose(
        ce.embed_documents(["a b", "c"]), inner.embed_documents(["a b", "c"])
    )
    ce.save()
    again = CachedEmbedder(QueryCounter(), tmp_path)
    again.embed_query(qs[1])
    again.embed_documents(["a b"])
    assert again.inner.queries == 0 and again.inner.documents == 0


# ---------------------------------------------------------------------- the lab
@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = tmp_path_factory.mktemp("ds")
    ws = root / "conv"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2023-05-08.md").write_text("\n".join(TURNS) + "\n")
    queries = pd.DataFrame(
        {
            "qid": ["q0", "q1", "q2"],
            "query": ["what is the kitten called", "who is painting", "when does training start"],
            "group": "conv",
            "category": ["single-hop", "single-hop", "temporal"],
        }
    )
    evidence = pd.DataFrame(
        {
            "qid": ["q0", "q1", "q2"],
            "path": "memory/2023-05-08.md",
            "start_line": [3, 6, 7],
            "end_line": [3, 6, 7],
        }
    )
    return Dataset("tiny", root, {"conv": ws}, queries, evidence)


def cached_lab(dataset: Dataset) -> Lab:
    """The lab as ``memlab eval`` builds it: vectors cached, each system on its tokenizer."""
    return Lab(
        dataset,
        cache_vectors=True,
        embedder=HashingEmbedder(dimensions=32),
        unit="turn",
        progress=False,
    )


def test_lab_runs_each_system_on_its_own_tokenizer(dataset: Dataset) -> None:
    lab = cached_lab(dataset)
    systems = [memlab_best(), memlab_best(name="unicode", fts_tokenizer=None), preset("bm25")]
    cands = lab.candidates_for(systems)
    assert cands["memlab-best"] is not cands["unicode"]
    assert (
        lab.for_tokenizer("porter").fts_tokenizer == "porter" and lab.fts_tokenizer == "unicode61"
    )

    def keyword_hits(name: str) -> set[str]:
        cs = cands[name].cs
        row = cs.qids.index("q1")
        hit = cs.pos[row][cs.has_text[row]]
        return {str(cs.table.start_lines[p]) for p in hit}

    # "painting" reaches "painted" only through the porter stemmer.
    assert "6" in keyword_hits("memlab-best")
    assert "6" not in keyword_hits("unicode")
    res = run_experiment(systems, lab, ["recall@5"], baseline="bm25")
    assert res.table.loc["memlab-best", "n"] == 3
    assert 0.0 <= res.table.loc["memlab-best", "recall@5"] <= 1.0


def test_sweep_of_the_preset_scores_every_setting_through_its_stages(dataset: Dataset) -> None:
    lab = cached_lab(dataset)
    base = memlab_best()
    res = sweep(lab, base, {"vector_weight": [0.2, 0.8]}, ["recall@5"])
    lc = lab.candidates_for([base])[base.name]
    for w in (0.2, 0.8):
        s = base.replace(vector_weight=w, text_weight=1.0 - w).at_k(5)  # the sweep couples them
        got = res.table.loc[res.table["vector_weight"] == w, "mean"].item()
        assert got == pytest.approx(float(np.nanmean(lc.score(s, ["recall@5"])["recall@5"])))
