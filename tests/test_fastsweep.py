"""The vectorised sweep path gives exactly what the per-setting path gives."""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from memlab.eval.fastsweep import fast_path_reason, rank_settings, score_settings, skyline_keep
from memlab.eval.sweep import sweep
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import openclaw, openclaw_latest, preset, rrf_preset
from memlab.retrieval.candidates import CandidateSet, merge_row, pad_rows
from memlab.stages.selection import select_rows
from memlab.store import ChunkTable

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks._common import random_lab_candidates  # noqa: E402

NOW = 1_775_000_000.0  # 2026-03-31


def random_candidates(seed: int, nq: int = 30, depth: int = 8, coarse: bool = True) -> CandidateSet:
    """Candidates with the awkward cases: ties (coarse scores), negative cosines, queries
    with one leg empty, keyword-only and vector-only hits, dated and evergreen files."""
    rng = np.random.default_rng(seed)
    pool = 3 * depth
    n = nq * pool
    files = ["MEMORY.md", "memory/notes.md"] + [f"memory/2026-03-{d:02d}.md" for d in range(1, 29)]
    paths = np.array([files[i] for i in rng.integers(0, len(files), size=n)], dtype=object)
    rows = []
    for q in range(nq):
        base = q * pool
        vec = rng.uniform(-0.3, 0.9, size=pool)
        raw = -rng.gamma(2.0, 2.0, size=pool)
        if coarse:
            vec = np.round(vec, 1)
            raw = np.round(raw, 0)
        nv = 0 if q % 7 == 3 else int(rng.integers(1, depth + 1))
        nk = 0 if q % 5 == 1 else int(rng.integers(0, depth + 1))
        v_docs = np.argsort(-vec, kind="stable")[:nv]
        k_docs = rng.choice(pool, size=nk, replace=False)
        k_docs = k_docs[np.argsort(raw[k_docs], kind="stable")]
        rows.append(merge_row(base + v_docs, vec[v_docs], base + k_docs, raw[k_docs]))
    pos, vs, tr, vr, kr = pad_rows(rows)
    table = ChunkTable(
        rowids=np.arange(n, dtype=np.int64),
        ids=np.array([f"c{i}" for i in range(n)], dtype=object),
        paths=paths,
        sources=np.full(n, "memory", dtype=object),
        start_lines=np.ones(n, dtype=np.int64),
        end_lines=np.ones(n, dtype=np.int64),
        mtimes=np.full(n, NOW - 86400.0 * 40),
        vectors=np.zeros((n, 1), dtype=np.float32),
    )
    qids = [f"q{i}" for i in range(nq)]
    return CandidateSet(
        qids=qids,
        queries=qids,
        pos=pos,
        vec_score=vs,
        text_raw=tr,
        vec_rank=vr,
        text_rank=kr,
        table=table,
        depth=depth,
        times=np.full(nq, NOW),
    )


WEIGHTS = [
    {"vector_weight": v, "text_weight": t}
    for v in (0.0, 0.3, 0.5, 0.7, 1.0)
    for t in (0.0, 0.3, 1.0)
]
BASES = {
    "openclaw": openclaw(),
    "openclaw-k3": openclaw(max_results=3),
    "fill": openclaw(fill_keyword_only=True),
    "decay": openclaw(decay="latest", half_life_days=10.0),
    "no-relaxed": openclaw(relaxed_fallback=False),
    "minmax": openclaw(vector_norm="minmax", text_norm="minmax"),
    "missing": openclaw(missing=0.2),
    "bm25-raw": openclaw(text_source="bm25", text_norm="max"),
    "combmnz": openclaw(fusion="combmnz"),
    "combsum-decay": openclaw(fusion="combsum", decay="exact"),
    "rrf": rrf_preset(),
    "rrf-bonus": rrf_preset(rrf_top_bonus=True),  # QMD's top-rank bonus on the fast path
    "rrf-threshold": rrf_preset(min_score=0.02, max_results=4),
}


def assert_same_as_pipeline(cs: CandidateSet, systems: list) -> None:
    r = rank_settings(cs, systems)
    assert r.path == "fast", r.reason
    for i, s in enumerate(systems):
        ref = s.rank(cs)
        np.testing.assert_array_equal(r.columns[i], ref.columns, err_msg=f"setting {i}")
        np.testing.assert_array_equal(r.scores[i], ref.scores, err_msg=f"setting {i}")
        np.testing.assert_array_equal(r.selected_by[i], ref.selected_by, err_msg=f"setting {i}")


@pytest.mark.parametrize("name", sorted(BASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_rank_settings_equals_pipeline_rank(name: str, seed: int) -> None:
    base = BASES[name]
    cs = random_candidates(seed)
    grid = list(WEIGHTS)
    grid += [{"min_score": m} for m in (-1.0, 0.0, 0.2, 0.5, 0.9)]
    if base.fusion == "rrf":
        grid += [{"rrf_k": k, "vector_weight": w} for k in (1.0, 10.0, 60.0) for w in (0.0, 0.6)]
        grid += [{"rrf_k": 7}, {"text_weight": 0.0}]  # an int k; a leg weighted 0
    assert_same_as_pipeline(cs, [base.replace(**g) for g in grid])


def test_ties_and_wide_candidates_are_reproduced() -> None:
    # Continuous scores but deep lists: pruning removes most columns.
    cs = random_candidates(5, nq=50, depth=30, coarse=False)
    systems = [openclaw().replace(vector_weight=w / 20) for w in range(21)]
    r = rank_settings(cs, systems)
    assert r.kept < r.width
    assert_same_as_pipeline(cs, systems)
    # Coarse scores: many exact ties that only insertion order resolves.
    cs = random_candidates(6, nq=50, depth=30, coarse=True)
    assert_same_as_pipeline(
        cs, [openclaw(max_results=5).replace(vector_weight=w / 10) for w in range(11)]
    )


def test_skyline_keeps_every_possible_top_k() -> None:
    rng = np.random.default_rng(3)
    q, c, k = 200, 12, 3
    a = np.round(rng.normal(size=(q, c)), 1)
    b = np.round(rng.normal(size=(q, c)), 1)
    valid = rng.random((q, c)) < 0.9
    has_text = rng.random((q, c)) < 0.5
    keep = skyline_keep(a, b, valid, has_text, k)
    for w in np.linspace(0.0, 1.0, 41):
        s = np.where(valid, w * a + (1 - w) * b, -np.inf)
        order = np.argsort(-s, axis=1, kind="stable")
        for qi in range(q):
            top = [j for j in order[qi] if valid[qi, j]][:k]
            top_text = [j for j in order[qi] if valid[qi, j] and has_text[qi, j]][:k]
            assert keep[qi, top].all()
            assert keep[qi, top_text].all()
    assert not keep[~valid].any()


def test_select_rows_per_row_thresholds() -> None:
    final = np.array([[0.2, 0.9, np.nan, 0.9], [0.1, 0.3, 0.2, 0.0]])
    valid = np.array([[True, True, False, True], [True, True, True, True]])
    has_text = np.array([[False, True, False, False], [True, False, True, False]])
    cols, scores, sel = select_rows(
        final,
        valid,
        has_text,
        min_score=np.array([0.5, 0.5]),
        max_results=3,
        relaxed_threshold=np.array([0.3, 0.15]),
    )
    # Row 0: ties keep column order (1 before 3); row 1: relaxed keyword hits only.
    np.testing.assert_array_equal(cols, [[1, 3, -1], [2, -1, -1]])
    np.testing.assert_array_equal(sel, [[0, 0, -1], [1, -1, -1]])
    assert scores[1, 0] == 0.2 and np.isnan(scores[1, 1])


def test_fast_path_reasons() -> None:
    cs = random_candidates(0)
    assert fast_path_reason(cs, [openclaw(), openclaw(vector_weight=0.2)]) is None
    assert "MMR" in fast_path_reason(cs, [openclaw_latest()])
    why = fast_path_reason(cs, [openclaw(), openclaw(max_results=3)])
    assert why is not None and "max_results" in why
    assert "vector-only" in fast_path_reason(cs, [openclaw(keyword=False)])

    class OwnFusion(Pipeline):
        def _fuse(self, *args, **kwargs):  # a fusion of its own: never inlined
            return super()._fuse(*args, **kwargs) ** 2

    own = OwnFusion(**{f.name: getattr(openclaw(), f.name) for f in fields(Pipeline)})
    assert "stages of its own" in fast_path_reason(cs, [own])
    ranked = rank_settings(cs, [own])
    assert ranked.path == "loop"
    np.testing.assert_array_equal(ranked.scores[0], own.rank(cs).scores)
    # The general path still answers, one setting at a time, with the same shapes.
    systems = [openclaw(max_results=2), openclaw()]
    r = rank_settings(cs, systems)
    assert r.path == "loop" and "max_results" in r.reason
    np.testing.assert_array_equal(r.columns[1], openclaw().rank(cs).columns)


METRICS = ["recall@5", "ndcg@10", "mrr", "precision@3", "recall_any@2", "alpha_ndcg@5"]


def test_score_settings_equals_lab_score_random() -> None:
    lc = random_lab_candidates(80, 12, seed=4)
    base = openclaw(min_score=0.0, max_results=10, candidate_multiplier=1.2)
    systems = [base.replace(vector_weight=w / 50, text_weight=1 - w / 50) for w in range(51)]
    values, r = score_settings(lc, systems, METRICS)
    assert r.path == "fast"
    for i, s in enumerate(systems):
        ref = lc.score(s, METRICS)
        for m in METRICS:
            np.testing.assert_array_equal(values[m][i], ref[m], err_msg=f"{m} at setting {i}")


@pytest.fixture(scope="module")
def synthetic_lab(tmp_path_factory: pytest.TempPathFactory):
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.embed import HashingEmbedder
    from memlab.eval.lab import Lab

    root = tmp_path_factory.mktemp("synth")
    ds = generate(SynthConfig(days=8, queries_per_type=4, notes_per_day=6), root / "data")
    return Lab(ds, embedder=HashingEmbedder(dimensions=128), unit="turn", index_dir=root / "idx")


def test_score_settings_equals_lab_score_indexed(synthetic_lab) -> None:
    metrics = [*METRICS, "budget_recall@200"]
    for base in (openclaw().at_k(10), rrf_preset().at_k(10), openclaw(decay="latest").at_k(10)):
        lc = synthetic_lab.candidates(base.depth)
        grid = [{"vector_weight": w / 10} for w in range(11)]
        grid += [{"min_score": m} for m in (0.1, 0.3, 0.5)]
        systems = [base.replace(**g) for g in grid]
        values, r = score_settings(lc, systems, metrics)
        assert r.path == "fast"
        for i, s in enumerate(systems):
            ref = lc.score(s, metrics)
            for m in metrics:
                np.testing.assert_array_equal(values[m][i], ref[m], err_msg=f"{m} at {grid[i]}")


def test_sweep_uses_fast_path_with_unchanged_results(synthetic_lab, monkeypatch) -> None:
    import memlab.eval.fastsweep as sweep_module

    grid = {"vector_weight": [0.0, 0.25, 0.5, 0.75, 1.0], "min_score": [0.2, 0.35]}
    metrics = ["recall@6", "ndcg@10"]
    fast = sweep(synthetic_lab, openclaw(), grid, metrics, train=0.5)
    assert fast.info["path"] == "fast"
    monkeypatch.setattr(sweep_module, "fast_path_reason", lambda cs, systems: "forced")
    loop = sweep(synthetic_lab, openclaw(), grid, metrics, train=0.5)
    # One setting at a time, but the stages before the first one reading a weight or the
    # threshold (their declarations say which) run once for all.
    assert loop.info["path"] == "stages"
    assert loop.info["shared_stages"] == ["legs", "normalize"]
    assert fast.table.equals(loop.table)
    assert fast.best() == loop.best()


def test_sweep_falls_back_for_mmr(synthetic_lab) -> None:
    res = sweep(synthetic_lab, openclaw_latest(), {"mmr_lambda": [0.5, 1.0]}, ["recall@6"])
    assert res.info["path"] == "stages"
    assert "MMR" in res.info["fast_path_reason"]
    # MMR is an order stage: every score stage is computed once for both settings.
    on = openclaw_latest().active_stages()
    assert [n for n in res.info["shared_stages"] if n in on] == [n for n in on if n != "mmr"][:-1]


def test_coupled_weight_sweep_is_fast_and_identical_to_the_loop(synthetic_lab, monkeypatch) -> None:
    import memlab.eval.fastsweep as sweep_module

    base = openclaw(min_score=0.0, keyword_mode="or")
    grid = {"vector_weight": [w / 20 for w in range(21)]}
    metrics = ["ndcg@10", "recall@6"]
    fast = sweep(synthetic_lab, base, grid, metrics, train=0.5)
    assert fast.info["path"] == "fast" and fast.coupled == {"text_weight": "1 - vector_weight"}
    monkeypatch.setattr(sweep_module, "fast_path_reason", lambda cs, systems: "forced")
    loop = sweep(synthetic_lab, base, grid, metrics, train=0.5)
    assert loop.info["path"] == "stages"  # one setting at a time, legs and normalize once
    assert fast.table.equals(loop.table)
    for m in metrics:
        np.testing.assert_array_equal(fast.per_query[m], loop.per_query[m])
        assert fast.best(m) == loop.best(m)
        # The tuned object reproduces the sweep's per-query values, bit for bit.
        tuned = fast.pipeline(m, as_scored=True)
        lc = synthetic_lab.candidates_for([tuned])[tuned.name]
        np.testing.assert_array_equal(
            lc.score(tuned, [m])[m], fast.per_query[m][fast.best(m)["index"]]
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "grid", "shared"),
    [
        ("memlab-best", {"vector_weight": [0.2, 0.6, 0.9]}, "legs normalize"),
        ("memlab-best", {"neighbor_prev": [0.0, 0.3, 0.6]}, "legs normalize fusion"),
        ("memlab-best", {"file_context": [0.0, 1.0, 2.0]}, "legs normalize fusion neighbor"),
        (
            "memlab-best",
            {"mmr": ["off", "jaccard"], "mmr_lambda": [0.5]},
            "legs normalize fusion neighbor file_context headings identifier_tier",
        ),
        (
            "memlab-best-chunk",
            {"best_line_depth": [5, 10]},
            "legs normalize fusion neighbor headings",
        ),
    ],
)
def test_the_shared_stages_equal_the_loop(synthetic_lab, name, grid, shared) -> None:
    """The loop is the oracle: each setting ranked with the stages it shares with the
    others computed once (their declarations say which) equals the setting ranked on its
    own, array for array."""
    from memlab.eval.fastsweep import rank_shared

    base = preset(name)
    systems = [base.replace(**{k: v}) for k, vals in grid.items() for v in vals]
    lc = synthetic_lab.candidates_for([base])[base.name]
    for s in systems:
        lc = synthetic_lab.with_best_line(lc, s)
    ranks, got = rank_shared(lc.cs, systems)
    assert " ".join(n for n in got if n in base.active_stages()) == shared
    for s, r in zip(systems, ranks, strict=True):
        ref = s.rank(lc.cs)
        np.testing.assert_array_equal(r.columns, ref.columns)
        np.testing.assert_array_equal(r.scores, ref.scores)
        np.testing.assert_array_equal(r.selected_by, ref.selected_by)
        assert r.stage.keys() == ref.stage.keys()
        for k in ref.stage:
            np.testing.assert_array_equal(r.stage[k], ref.stage[k], err_msg=k)
