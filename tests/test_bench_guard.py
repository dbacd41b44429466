"""CI regression guards: quality against the committed baseline, speed as in-run ratios.

Quality: the presets' recall/nDCG/MRR on the committed small synthetic corpus
(hashing embedder and the packaged model) and on the LoCoMo and BEAM dev sets
(the packaged model, turn and chunk level; skipped when ../shared lacks them)
must not drop below ``benchmarks/baseline.json`` by more than its stated
tolerance; on the synthetic query mix, a preset pinned at or above bm25 on the
``identifier`` category must not fall below bm25 (``quality.compare_categories``).
Speed: never absolute times — ratios of two things measured in this same
run, on this same machine, with generous margins for a shared CI box.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import quality  # noqa: E402
from benchmarks._common import random_lab_candidates  # noqa: E402

SMALL = REPO / "datasets" / "synthetic-small"
# Margins: the fast sweep measured 4.3-4.9x faster than the per-setting loop at the
# benchmark's grid (101 settings x 1000 queries; at 41 x 300 its fixed costs leave
# 2-4x, too close to the bar to be a guard), and the exact scan within 1.0-1.3x of a
# plain numpy pass over the matrix on the 2-core reference machine; the guards fail
# only on a slip well beyond run-to-run noise.
MIN_SWEEP_SPEEDUP = 2.5
MAX_SCAN_OVER_READ = 3.0


def baseline() -> dict:
    return json.loads(quality.BASELINE.read_text())


def test_baseline_is_well_formed() -> None:
    b = baseline()
    assert set(b["tolerance"]) >= {"hashing", "local"}
    assert all(0 < t < 0.1 for t in b["tolerance"].values())
    assert b["reason"] and b["history"]
    assert b["figures"], "the baseline holds no figures"
    for key, systems in b["figures"].items():
        assert key.count("/") == 2, key
        for name, vals in systems.items():
            for m in quality.METRICS:
                assert 0.0 <= vals[m] <= 2.0, (key, name, m)
            assert vals["n"] > 0
        if key.startswith("synthetic-"):
            # Every preset's query-mix figures are pinned, bm25's among them (the reference).
            assert quality.REFERENCE in systems, key
            for name, vals in systems.items():
                cats = vals.get("categories", {})
                assert set(cats) == set(quality.MIX_CATEGORIES), (key, name)
                for fig in cats.values():
                    assert all(0.0 <= fig[m] <= 1.0 for m in quality.CATEGORY_METRICS)
                    assert fig["n"] > 0


def assert_no_drop(rows: list[dict]) -> None:
    """Fail listing every compared figure (`quality.compare`) that dropped beyond tolerance."""
    fails = [r for r in rows if r["fails"]]
    assert not fails, "quality dropped beyond tolerance:\n" + "\n".join(
        f"  {r['data']} {r['preset']} {r['metric']}: {r['baseline']:.4f} -> {r['now']:.4f}"
        for r in fails
    )


def _check(embedder: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not (SMALL / "queries.jsonl").exists():
        pytest.skip(
            "datasets/synthetic-small is not committed (python benchmarks/quality.py --make-datasets)"
        )
    monkeypatch.setenv("MEMLAB_BENCH_CACHE", str(tmp_path))
    key = f"synthetic-small/{embedder}/chunk"
    if key not in baseline()["figures"]:
        pytest.fail(
            f"{key} missing from benchmarks/baseline.json: run "
            f"python benchmarks/quality.py --embedders {embedder} --update-baseline REASON"
        )
    figures = quality.run(quick=True, embedders=[embedder])
    rows = quality.compare(figures, baseline())
    assert rows, "nothing compared"
    assert_no_drop(rows)
    assert_query_mix_holds(figures, key)


def assert_query_mix_holds(figures: dict, key: str) -> None:
    """The query-mix guard covers every preset of ``key`` (each guarded category and
    metric) and no preset pinned at or above bm25 fell below it."""
    guard = quality.compare_categories(figures, baseline())
    per = len(quality.GUARDED_CATEGORIES) * len(quality.GUARD_METRICS)
    assert len([r for r in guard if r["data"] == key]) == per * len(figures[key])
    fails = [r for r in guard if r["fails"]]
    assert not fails, "query-mix guard:\n" + "\n".join(
        f"  {r['data']} {r['preset']} {r['category']} {r['metric']}: {r['now']:.3f}"
        f" < bm25 {r['bm25 now']:.3f} (pinned {r['baseline']} vs bm25 {r['bm25 baseline']:.3f})"
        for r in fails
    )


@pytest.mark.slow
def test_quality_no_regression_hashing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _check("hashing", monkeypatch, tmp_path)


@pytest.mark.model
@pytest.mark.slow
def test_quality_no_regression_local_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _check("local", monkeypatch, tmp_path)


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.locomo
@pytest.mark.timeout(1800)  # a cold cache embeds both dev sets first (minutes)
def test_conversation_quality_no_regression_local_model() -> None:
    """LoCoMo and BEAM dev (read from ../shared) at their small configuration (one tuning
    and one reporting conversation each, `memlab.eval.protocol.small_groups`), every preset
    at turn and chunk level, against the pinned figures. Runs on the labs' default caches,
    which the notebooks at small size share, so CI embeds those conversations once; the
    whole sets: ``python benchmarks/quality.py --sets locomo-dev,beam-dev --check``."""
    sets = [
        (n, v)
        for n, v in quality.conversation_sets().items()
        if n in quality.SMALL_CONVERSATION_SETS
    ]
    # A variable set to a missing path is not skipped: quality.datasets raises, naming it.
    found = {n for n, (src, _, _) in sets if src is not None}
    if not found:
        pytest.skip("LoCoMo and BEAM dev not found (MEMLAB_LOCOMO, MEMLAB_BEAM)")
    figures = quality.run(quick=False, embedders=["local"], sets=sorted(found))
    keys = {f"{n}/local/{u}" for n in found for u in ("turn", "chunk")}
    assert set(figures) == keys
    missing = sorted(keys - set(baseline()["figures"]))
    assert not missing, f"{missing} not in benchmarks/baseline.json (--update-baseline REASON)"
    rows = quality.compare(figures, baseline())
    assert len(rows) == len(keys) * len(quality.METRICS) * len(figures[min(keys)])
    assert_no_drop(rows)


def test_a_conversation_set_variable_naming_a_missing_path_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMLAB_BEAM", str(tmp_path / "nope"))
    with pytest.raises(SystemExit, match=r"beam-dev: MEMLAB_BEAM=.*nope does not exist"):
        quality.datasets(False, ["beam-dev"])
    with pytest.raises(SystemExit, match="unknown data set bogus"):
        quality.datasets(False, ["bogus"])


def test_quality_check_flags_a_drop() -> None:
    b = {
        "tolerance": {"hashing": 0.01},
        "figures": {"d/hashing/chunk": {"openclaw": {m: 0.5 for m in quality.METRICS}}},
    }
    now = {"d/hashing/chunk": {"openclaw": {**{m: 0.5 for m in quality.METRICS}, "ndcg@10": 0.48}}}
    rows = quality.compare(now, b)
    assert [r["metric"] for r in rows if r["fails"]] == ["ndcg@10"]
    now["d/hashing/chunk"]["openclaw"]["ndcg@10"] = 0.495  # within tolerance
    assert not any(r["fails"] for r in quality.compare(now, b))


def _mix(**figs: float) -> dict:
    """A data set's figures: per preset its aggregate metrics (0.5) and ``identifier``
    figures (every guarded metric = the value given)."""
    out = {}
    for name, v in figs.items():
        cat = {m: v for m in quality.CATEGORY_METRICS} | {"n": 10}
        out[name] = {m: 0.5 for m in quality.METRICS} | {"n": 90, "categories": {"identifier": cat}}
    return out


def test_query_mix_guard_fails_when_a_preset_falls_below_bm25() -> None:
    """Pinned: memlab-best at bm25 (1.0), vector below it (0.4). A run where memlab-best
    drops below bm25 fails; vector, below at pin time, is listed unguarded and never
    fails; a drop within the tolerance passes; bm25 dropping fails."""
    base = {
        "tolerance": {"hashing": 0.005, "local": 0.02},
        "figures": {"d/local/chunk": _mix(bm25=1.0, **{"memlab-best": 1.0}, vector=0.4)},
    }

    def fails(**now: float) -> set[tuple[str, str]]:
        rows = quality.compare_categories({"d/local/chunk": _mix(**now)}, base)
        assert {r["preset"] for r in rows} == set(now)
        return {(r["preset"], r["metric"]) for r in rows if r["fails"]}

    assert fails(bm25=1.0, **{"memlab-best": 1.0}, vector=0.4) == set()
    assert fails(bm25=1.0, **{"memlab-best": 0.7}, vector=0.4) == {
        ("memlab-best", m) for m in quality.GUARD_METRICS
    }
    assert fails(bm25=1.0, **{"memlab-best": 0.99}, vector=0.1) == set()  # tolerance 0.02
    assert fails(bm25=0.9, **{"memlab-best": 0.9}, vector=0.4) == {
        ("bm25", m) for m in quality.GUARD_METRICS
    }
    rows = quality.compare_categories({"d/local/chunk": _mix(bm25=1.0, vector=0.0)}, base)
    vector = [r for r in rows if r["preset"] == "vector"]
    assert vector and all(
        not r["guarded"] and r["rule"] == "below bm25 at pin time" for r in vector
    )
    # A preset absent from the baseline is not guarded either; no baseline, no rows.
    rows = quality.compare_categories({"d/local/chunk": _mix(bm25=1.0, new=0.0)}, base)
    assert not any(r["fails"] for r in rows)
    assert quality.compare_categories({"d/local/chunk": _mix(bm25=1.0)}, {"figures": {}}) == []


def test_query_mix_guard_on_real_figures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """End to end on the committed CI corpus: pin this run's figures with memlab-best at
    bm25 on ``identifier`` (as the ranking fix must leave it); a run equal to the pin
    passes, a run where memlab-best's identifier figures sink 0.1 below bm25 fails on
    every guarded metric."""
    if not (SMALL / "queries.jsonl").exists():
        pytest.skip("datasets/synthetic-small is not committed")
    monkeypatch.setenv("MEMLAB_BENCH_CACHE", str(tmp_path))
    figures = quality.run(quick=True, embedders=["hashing"], presets=["bm25", "memlab-best"])
    key = "synthetic-small/hashing/chunk"
    ref = figures[key]["bm25"]["categories"]["identifier"]

    def with_best(delta: float) -> dict:
        out = json.loads(json.dumps(figures))
        cat = out[key]["memlab-best"]["categories"]["identifier"]
        cat.update({m: ref[m] + delta for m in quality.GUARD_METRICS})
        return out

    base = {"tolerance": quality.TOLERANCE, "figures": with_best(0.0)}
    assert not any(r["fails"] for r in quality.compare_categories(with_best(0.0), base))
    failed = [r for r in quality.compare_categories(with_best(-0.1), base) if r["fails"]]
    assert {(r["preset"], r["metric"]) for r in failed} == {
        ("memlab-best", m) for m in quality.GUARD_METRICS
    }


def _best_of(fn, n: int) -> float:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def test_fast_sweep_beats_per_setting_loop() -> None:
    from memlab.eval.fastsweep import score_settings
    from memlab.pipeline.presets import openclaw

    lc = random_lab_candidates(1000, 50, seed=1)
    base = openclaw(min_score=0.0, max_results=10, candidate_multiplier=5.0)
    grid = [base.replace(vector_weight=w / 100, text_weight=1 - w / 100) for w in range(101)]
    fast_values, r = score_settings(lc, grid, ["ndcg@10"])
    assert r.path == "fast"
    t_fast = _best_of(lambda: score_settings(lc, grid, ["ndcg@10"]), 3)
    sample = grid[::8]  # the loop is linear in settings: time a sample, scale it
    t_loop = (
        _best_of(lambda: [lc.score(s, ["ndcg@10"]) for s in sample], 2) * len(grid) / len(sample)
    )
    for i in range(0, len(grid), 8):
        np.testing.assert_array_equal(
            fast_values["ndcg@10"][i], lc.score(grid[i], ["ndcg@10"])["ndcg@10"]
        )
    assert t_loop / t_fast >= MIN_SWEEP_SPEEDUP, f"fast sweep only {t_loop / t_fast:.1f}x the loop"


@pytest.mark.slow
def test_exact_scan_reads_at_memory_speed() -> None:
    from memlab.retrieval.vectors import make_engine

    rng = np.random.default_rng(0)
    v = rng.standard_normal((150_000, 384), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    eng = make_engine("numpy", v)
    q = v[:8]
    eng.search(q[:1], 24)
    t_read = _best_of(lambda: v.sum(axis=0), 7)
    t_scan = min(_best_of(lambda i=i: eng.search(q[i : i + 1], 24), 1) for i in range(8))
    assert t_scan / t_read <= MAX_SCAN_OVER_READ, f"scan {t_scan / t_read:.2f}x a plain read"


def test_committed_results_render_as_doc_tables(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/benchmarks.md's tables come from benchmarks/results/*.json: every table must
    render from the committed files (a script changed without rerunning it fails here)."""
    from benchmarks import tables

    assert tables.main([]) == 0
    out = capsys.readouterr().out
    for name in tables.TABLES:
        assert f"<!-- {name} -->" in out
    sizes = json.loads((REPO / "benchmarks/results/search_latency.json").read_text())
    search_rows = out.split("<!-- search -->")[1].split("<!--")[0].strip().splitlines()[2:]
    assert len(search_rows) == len(sizes["results"]["sizes"])
    assert tables.main(["nope"]) == 2


def test_doc_tables_match_results() -> None:
    """Every table in docs/benchmarks.md is what benchmarks/tables.py renders from the
    committed JSON (refresh with `python benchmarks/tables.py --update docs/benchmarks.md`)."""
    from benchmarks import tables

    doc = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    blocks = tables.BLOCK.findall(doc)
    assert {b[1] for b in blocks} >= {"sweep", "search", "legs", "memory", "index", "qualityid"}
    assert tables.render_blocks(doc) == doc, "run: python benchmarks/tables.py --update ..."


def test_results_page_matches_results() -> None:
    """docs/results.md is what benchmarks/results_page.py renders from the committed JSON and
    baseline.json (refresh with `python benchmarks/tables.py --results docs/results.md`), and
    it shows every headline set, every preset and every other results file."""
    from benchmarks import results_page

    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    assert results_page.render() == page, "run: python benchmarks/tables.py --results ..."
    from memlab.pipeline.presets import PRESETS

    for name in results_page.HEADLINE:
        doc = json.loads((REPO / f"benchmarks/results/headline_{name}.json").read_text())
        assert doc["date"] and doc["commit"], name  # every figure says when and where
        for unit in doc["results"].values():
            for cut in unit["slices"].values():
                assert [r["system"] for r in cut["rows"]] == list(PRESETS), name
    # every other results file has its row, naming the file its command writes
    for path in (REPO / "benchmarks/results").glob("*.json"):
        if not path.stem.startswith("headline_"):
            assert f"benchmarks/results/{path.name}" in page, f"{path.name} has no row on the page"
