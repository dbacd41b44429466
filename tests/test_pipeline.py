from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.pipeline import Pipeline
from memlab.pipeline.presets import openclaw, openclaw_latest, preset
from memlab.retrieval.candidates import CandidateSet
from memlab.store import ChunkTable, MemoryIndex
from tests.conftest import write

NOW = 1_775_000_000.0  # 2026-03-31


def fake_set(vec, text_raw, paths=None, texts=None, mtimes=None, times=None) -> CandidateSet:
    """A one-query CandidateSet whose column j is chunk j (insertion order = column order)."""
    vec = np.atleast_2d(np.asarray(vec, dtype=float))
    text_raw = np.atleast_2d(np.asarray(text_raw, dtype=float))
    q, c = vec.shape
    n = c
    paths = paths or [f"memory/n{i}.md" for i in range(n)]
    table = ChunkTable(
        rowids=np.arange(n, dtype=np.int64),
        ids=np.array([f"c{i}" for i in range(n)], dtype=object),
        paths=np.array(paths, dtype=object),
        sources=np.array(["memory"] * n, dtype=object),
        start_lines=np.ones(n, dtype=np.int64),
        end_lines=np.ones(n, dtype=np.int64),
        mtimes=np.asarray(mtimes if mtimes is not None else [NOW] * n, dtype=float),
        vectors=np.eye(n, 4, dtype=np.float32),
    )

    def ranks(x):
        r = np.full(x.shape, -1)
        for qi in range(q):
            present = np.nonzero(~np.isnan(x[qi]))[0]
            key = -x[qi, present] if x is vec else x[qi, present]
            for rank, j in enumerate(present[np.argsort(key, kind="stable")]):
                r[qi, j] = rank
        return r

    cs = CandidateSet(
        qids=[f"q{i}" for i in range(q)],
        queries=["query"] * q,
        pos=np.tile(np.arange(c), (q, 1)),
        vec_score=vec,
        text_raw=text_raw,
        vec_rank=ranks(vec),
        text_rank=ranks(text_raw),
        table=table,
        depth=c,
        times=np.full(q, NOW) if times is None else np.asarray(times, float),
    )
    cs._texts.update({i: (texts[i] if texts else f"text {i}") for i in range(n)})
    return cs


def test_spec_merge_examples_through_pipeline() -> None:
    # vector-only hit 0.9 → 0.63; keyword-only hit textScore 1.0 (bm25 rank 0 → 1.0) → 0.30
    cs = fake_set([[0.9, math.nan]], [[math.nan, 0.0]])
    st_ = openclaw().scores(cs)
    assert st_["final"][0, 0] == pytest.approx(0.63)
    assert st_["final"][0, 1] == pytest.approx(0.30)
    # weights 0.5/0.5: vector 0.2 + text 1.0 → 0.6
    cs = fake_set([[0.2]], [[0.0]])
    assert openclaw(vector_weight=0.5, text_weight=0.5).scores(cs)["final"][0, 0] == pytest.approx(
        0.6
    )


def test_keyword_only_hit_dropped_by_openclaw_kept_by_latest() -> None:
    # A strong vector hit passes; a keyword-only hit (0.3 × 0.9 = 0.27) is below 0.35.
    cs = fake_set([[0.8, math.nan]], [[math.nan, -9.0]])
    r = openclaw().run(cs)
    assert list(r["docno"]) == ["c0"]
    r = openclaw_latest().run(cs)
    assert list(r["docno"]) == ["c0", "c1"]
    assert list(r["selected_by"]) == ["strict", "fill"]


def test_relaxed_fallback_when_nothing_passes() -> None:
    # Nothing reaches 0.35: keyword hits at ≥ min(0.35, 0.3) = 0.3 come back, vector-only do not.
    cs = fake_set([[0.2, 0.1, math.nan]], [[math.nan, 0.0, -0.5]])
    # c1: 0.7·0.1 + 0.3·1.0 = 0.37 ≥ 0.35 would pass; make it lower:
    cs = fake_set([[0.2, 0.05, math.nan]], [[math.nan, -0.1, 0.0]])
    st_ = openclaw().scores(cs)["final"][0]
    assert st_[0] == pytest.approx(0.14)
    assert st_[1] == pytest.approx(0.7 * 0.05 + 0.3 * (0.1 / 1.1))
    assert st_[2] == pytest.approx(0.30)
    r = openclaw().run(cs)
    # c2 (keyword-only, exactly 0.30) passes the relaxed threshold; c1 (0.062) does not.
    assert list(r["docno"]) == ["c2"] and list(r["selected_by"]) == ["relaxed"]
    assert openclaw(relaxed_fallback=False).run(cs).empty


def test_ties_keep_insertion_order() -> None:
    cs = fake_set([[0.5, 0.5, 0.5]], [[math.nan, math.nan, math.nan]])
    assert list(openclaw().run(cs)["docno"]) == ["c0", "c1", "c2"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(-30, 0)), min_size=1, max_size=12), st.data())
def test_weight_one_ranks_as_vector_leg(pairs, data) -> None:
    vec = np.array([[p[0] for p in pairs]])
    text = np.array([[p[1] for p in pairs]])
    drop_v = data.draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    vec[0, np.array(drop_v)] = np.nan
    cs = fake_set(vec, text)
    p = Pipeline(vector_weight=1.0, text_weight=0.0, min_score=-10, max_results=len(pairs))
    r = p.run(cs)
    got = [int(d[1:]) for d in r["docno"] if not np.isnan(vec[0, int(d[1:])])]
    present = np.nonzero(~np.isnan(vec[0]))[0]
    want = list(present[np.argsort(-vec[0, present], kind="stable")])
    assert got == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(-30, 0)), min_size=1, max_size=12))
def test_no_nan_scores_and_at_most_max_results(pairs) -> None:
    vec = np.array([[p[0] for p in pairs]])
    text = np.array([[p[1] for p in pairs]])
    cs = fake_set(vec, text)
    for name in ("openclaw", "openclaw-latest", "rrf", "qmd-like"):
        r = preset(name, max_results=5).run(cs)
        assert len(r) <= 5
        assert not r["score"].isna().any()
        assert (np.diff(r["score"].to_numpy()) <= 1e-12).all() or name == "openclaw-latest"


def test_decay_prefers_recent_update() -> None:
    day = 86400.0
    paths = ["memory/2026-01-01.md", "memory/2026-03-30.md", "MEMORY.md"]
    cs = fake_set([[0.62, 0.6, 0.5]], [[math.nan] * 3], paths=paths)
    assert list(openclaw().run(cs)["docno"])[:2] == ["c0", "c1"]
    r = openclaw(decay="exact", min_score=0).run(cs)
    assert list(r["docno"]) == ["c1", "c2", "c0"]
    dec = dict(zip(r["docno"], r["decay"], strict=True))
    assert dec["c2"] == 1.0  # MEMORY.md is evergreen
    age = (NOW - 1_774_828_800.0) / day  # 2026-03-30 UTC midnight
    assert dec["c1"] == pytest.approx(math.exp(-math.log(2) / 30 * age))


def test_mmr_pushes_near_duplicate_down() -> None:
    texts = ["alpha beta gamma delta", "alpha beta gamma delta", "omega sigma tau"]
    # relevance (min-max) 1, 0.17, 0: c1 scores 0.7·0.17 − 0.3·1 < c2 at 0.7·0 − 0.3·0
    cs = fake_set([[0.9, 0.85, 0.84]], [[math.nan] * 3], texts=texts)
    assert list(openclaw(min_score=0).run(cs)["docno"]) == ["c0", "c1", "c2"]
    r = openclaw(mmr="jaccard", min_score=0).run(cs)
    assert list(r["docno"]) == ["c0", "c2", "c1"]
    assert list(r["mmr_position"]) == [0, 1, 2]


def test_depth_cut_equals_shallow_retrieval(small_workspace: Path, hashing) -> None:
    idx = MemoryIndex(
        small_workspace,
        embedder=hashing,
        db_path=small_workspace.parent / "i.sqlite",
        chunker=__import__("memlab").ChunkerConfig("openclaw", 16, 2),
    )
    idx.sync()
    queries = ["coffee roast preference", "gateway host", "a828e60", "watcher ticket"]
    p = openclaw(max_results=2, min_score=0.0)  # depth 8
    shallow = p.run(p.retrieve(idx, queries))
    deep = p.run(p.retrieve(idx, queries, depth=40))
    cols = ["qid", "docno", "score", "rank"]
    assert shallow[cols].equals(deep[cols])


def test_legs_in_parallel_equal_legs_in_turn(
    small_workspace: Path, hashing, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.retrieval.candidates as candidates

    idx = MemoryIndex(
        small_workspace, embedder=hashing, db_path=small_workspace.parent / "i.sqlite"
    )
    idx.sync()
    queries = ["coffee roast preference", "gateway host", "a828e60", "watcher ticket", "zzz"]
    runs = {}
    for threshold in (1 << 62, 0):  # in turn, then the keyword leg in a thread
        monkeypatch.setattr(candidates, "PARALLEL_LEGS_MIN_ROWS", threshold)
        for mode, fallback in (("and", False), ("or", False), ("and", True)):
            cs = candidates.retrieve(idx, queries, keyword_mode=mode, keyword_fallback=fallback)
            runs.setdefault((mode, fallback), []).append(cs)
    for key, (serial, parallel) in runs.items():
        for a in ("pos", "vec_score", "text_raw", "vec_rank", "text_rank", "keyword_fallback"):
            np.testing.assert_array_equal(
                getattr(serial, a), getattr(parallel, a), err_msg=str(key)
            )
    assert runs[("and", True)][1].keyword_fallback.any()  # the fallback ran in the thread


def test_parameter_validation_messages() -> None:
    with pytest.raises(ValueError, match=r"vector_weight must be in \[0, 1\], got 1.3"):
        Pipeline(vector_weight=1.3)
    with pytest.raises(ValueError, match="fusion must be one of"):
        Pipeline(fusion="magic")
    with pytest.raises(ValueError, match="unknown preset"):
        preset("nope")
    with pytest.raises(ValueError, match="unknown pipeline parameter"):
        openclaw().replace(vectorweight=0.5)
    p = openclaw()
    with pytest.raises(ValueError):
        p.set_params(max_results=0)
    assert p.max_results == 6  # a failed set_params leaves the pipeline unchanged
    assert p.depth == 24 and openclaw(max_results=100).depth == 200
    assert "vector_weight" in repr(p)


def test_end_to_end_presets_on_small_workspace(small_workspace: Path, hashing) -> None:
    write(
        small_workspace, "memory/2026-03-21.md", "# 2026-03-21\n- Backups run nightly to the NAS.\n"
    )
    idx = MemoryIndex(
        small_workspace,
        embedder=hashing,
        db_path=small_workspace.parent / "e.sqlite",
        chunker=__import__("memlab").ChunkerConfig("line", 400, 0),
    )
    idx.sync()
    now = 1_774_915_200.0  # 2026-03-31
    # exact ID: the keyword leg finds it
    r = openclaw(min_score=0).search(idx, "MEM-4821", now=now)
    assert r.iloc[0]["path"] == "memory/2026-03-20.md"
    # update: with decay the newer statement wins
    r = openclaw_latest(min_score=0).search(idx, "what coffee does Peter like", now=now)
    coffee = [t for t in r["text"] if "coffee" in t]
    assert "light roast" in coffee[0]
    # every preset answers
    for name in ("openclaw", "openclaw-latest", "rrf", "qmd-like", "vector", "bm25"):
        out = preset(name).search(idx, "backups NAS", now=now)
        assert not out.empty, name


LAB_BASELINES = ("vector", "bm25", "wsum", "rrf")
# What each lab baseline changes relative to ``wsum`` (OpenClaw's fusion on the shared
# candidate generation: OR keyword query, OpenClaw's depth): only what its name says.
NAMED_FACTOR = {
    "vector": {"keyword"},
    "bm25": {"vector", "min_score", "keyword_boost", "keyword_fallback"},
    "wsum": set(),
    "rrf": {"fusion", "vector_weight", "text_weight", "min_score"},
}


def test_lab_baselines_share_one_candidate_generation() -> None:
    """vector, bm25, wsum and rrf: one keyword mode (OR), one depth, one
    fallback rule, so two of them differ in exactly the factor their names say."""
    for name in LAB_BASELINES:
        p = preset(name)
        assert p.keyword_mode == "or", name
        assert p.depth == openclaw().depth == 24, name
        assert p.max_results == 6 and p.max_candidates == 200, name
        assert set(p.diff(preset("wsum"))) == NAMED_FACTOR[name], name
    # the shipped systems keep OpenClaw's AND query
    assert openclaw().keyword_mode == "and" and openclaw_latest().keyword_mode == "and"
    assert preset("wsum").diff() == {"keyword_mode": "or", "min_score": -1.0}
    assert preset("rrf").diff(preset("wsum")) == {
        "fusion": "rrf",
        "vector_weight": 1.0,
        "text_weight": 1.0,
        "min_score": 0.0,
    }


def test_lab_baselines_share_lab_candidates(tmp_path: Path) -> None:
    """In a lab, the four baselines rank one and the same LabCandidates object (qmd-like,
    QMD's own keyword search over whole files, has its own)."""
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.embed import HashingEmbedder
    from memlab.eval.lab import Lab

    ds = generate(SynthConfig(days=5, seed=1, queries_per_type=2), tmp_path / "c")
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=32), unit="chunk", progress=False)
    cands = lab.candidates_for([preset(n) for n in (*LAB_BASELINES, "openclaw", "qmd-like")])
    assert len({id(cands[n]) for n in LAB_BASELINES}) == 1
    assert cands["openclaw"] is not cands["rrf"]
    assert cands["qmd-like"] is not cands["rrf"]


def test_docs_presets_diff_table_is_what_diff_prints() -> None:
    """docs/presets.md's `p.diff()` table lists every built-in preset with its diff."""
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "presets.md").read_text()
    table = doc.split("What `p.diff()` prints")[1].split("## ")[0]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| (.+) \|$", table, flags=re.M))
    assert set(rows) == {"openclaw", "openclaw-latest", "wsum", "rrf", "qmd-like", "vector", "bm25"}
    for name, cell in rows.items():
        want = ", ".join(f"`{k}={v}`" for k, v in preset(name).diff().items())
        assert cell == (want or "(the defaults)"), name
