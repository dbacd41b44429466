"""Target 1: weight sweeps over cached candidates, memlab vs ranx vs per-setting runs.

Data: ``random_lab_candidates`` — 1,000 queries (300 with --quick), 50 vector
and 50 keyword candidates each (random scores, 1–3 relevant documents per
query boosted in one or both legs). Every candidate is its own chunk and its
own evidence unit, so memlab's span metrics are ranx's document metrics.

Systems (all scoring ndcg@10 over the same candidates):

- ``memlab fast``: ``memlab.eval.fastsweep.score_settings`` — every setting
  ranked and scored in one vectorised pass (what ``memlab sweep`` runs).
- ``memlab loop``: ``LabCandidates.score`` once per setting (the general
  path: ``Pipeline.rank`` → ``hits_from_topk`` → ``evaluate_hits``).
- ``ranx``: ``optimize_fusion`` (wsum: weights on a 0.01 grid summing to 1;
  rrf: k = 10..100). numba compiles on first use: that warm-up is measured
  separately and excluded from the sweep times. Skipped with ``--quick``
  (the warm-up alone takes ~40 s).
- ``re-run search``: retrieving the candidates again for every setting (both
  legs through the index, then ranking), as a sweep without cached candidates
  does; measured on LoCoMo turn-level (or a synthetic workspace) with the
  hashing embedder, on 2 settings, and scaled to the grid size.

Grids: 101 vector weights (0, 0.01, …, 1; text weight 1 − w) with the
pipeline set to rank every candidate (min_score 0, 10 results, 50 per leg);
a 10 × 10 RRF grid (k = 10..100 × vector weight 0.1..1, text weight 1).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    cache_dir,
    fmt,
    log,
    parser,
    print_table,
    random_lab_candidates,
    repeat,
    report,
    stats,
)

METRIC = "ndcg@10"


def wsum_base() -> Any:
    from memlab.pipeline.presets import openclaw

    # Rank every candidate: no threshold, 10 results, 50 per leg (10 × 5).
    return openclaw(name="wsum", min_score=0.0, max_results=10, candidate_multiplier=5.0)


def rrf_base() -> Any:
    from memlab.pipeline.presets import rrf_preset

    return rrf_preset(name="rrf", max_results=10, candidate_multiplier=5.0)


def ranx_weights(step: float = 0.01) -> list[tuple[float, float]]:
    """ranx's own trial list: every pair on the grid whose float sum is exactly 1.0."""
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    return [tuple(t) for t in get_trial_configs(get_possible_weights(step), 2)]


def run_memlab(lc: Any, systems: list[Any], repeats: int) -> tuple[list[float], np.ndarray, str]:
    from memlab.eval.fastsweep import score_settings

    out: dict[str, Any] = {}

    def go() -> None:
        values, r = score_settings(lc, systems, [METRIC])
        out["values"], out["path"] = values[METRIC], r.path

    times = repeat(go, repeats)
    return times, out["values"], out["path"]


def run_loop(lc: Any, systems: list[Any], repeats: int) -> tuple[list[float], np.ndarray]:
    out: dict[str, Any] = {}

    def go() -> None:
        out["values"] = np.stack([lc.score(s, [METRIC])[METRIC] for s in systems])

    return repeat(go, repeats, warmup=0), out["values"]


def ranx_warmup() -> float:
    """Compile ranx's numba kernels on a toy problem; returns the seconds it took."""
    t = time.perf_counter()
    from ranx import Qrels, Run, evaluate, optimize_fusion

    q = Qrels({"a": {"d1": 1}, "b": {"d2": 1}})
    r1 = Run({"a": {"d1": 0.5, "d2": 0.2}, "b": {"d2": 0.1, "d3": 0.4}})
    r2 = Run({"a": {"d2": 0.3}, "b": {"d2": 0.9}})
    optimize_fusion(
        q, [r1, r2], norm=None, method="wsum", metric=METRIC, step=0.5, show_progress=False
    )
    optimize_fusion(q, [r1, r2], norm=None, method="rrf", metric=METRIC, show_progress=False)
    evaluate(q, r1, METRIC)
    return time.perf_counter() - t


def run_ranx(
    lc: Any, method: str, repeats: int
) -> tuple[list[float], list[tuple[Any, float]], Any]:
    """Time ``optimize_fusion``; returns (seconds, [(setting, mean metric)], ranx's best)."""
    from ranx import Qrels, Run, optimize_fusion

    ex = lc.extra
    qrels = Qrels(ex["qrels"])
    runs = [Run(ex["vector_run"], name="vector"), Run(ex["text_run"], name="text")]
    if method == "wsum":
        kwargs: dict[str, Any] = {"step": 0.01}
        trials: list[Any] = ranx_weights(0.01)
    else:
        kwargs = {"min_k": 10, "max_k": 100, "step": 10}
        trials = list(range(10, 101, 10))
    out: dict[str, Any] = {}

    def go() -> None:
        best, rep = optimize_fusion(
            qrels,
            runs,
            norm=None,
            method=method,
            metric=METRIC,
            return_optimization_report=True,
            show_progress=False,
            **kwargs,
        )
        out["best"] = best
        out["report"] = [(t, float(v)) for t, v in zip(trials, rep.results, strict=True)]

    times = repeat(go, repeats, warmup=0)
    return times, out["report"], out["best"]


def rerun_search(quick: bool) -> dict[str, Any]:
    """Seconds to retrieve and rank every query once: the cost of one setting without a cache."""
    from memlab.cli.labsetup import load_dataset
    from memlab.eval.lab import Lab

    cache = cache_dir()
    try:
        if quick:
            raise LookupError
        ds = load_dataset("locomo", None)
        name = "locomo (turn, hashing)"
    except Exception:
        ds = load_dataset("synthetic", None, days=60)
        name = "synthetic 60 days (turn, hashing)"
    lab = Lab(ds, embedder="hashing", unit="turn", index_dir=cache / f"idx-{ds.name}")
    base = wsum_base()
    lab.candidates(base.depth)  # builds the index once; not timed
    systems = [base.replace(vector_weight=w) for w in (0.3, 0.7)]

    def one(s: Any) -> None:
        # A fresh retrieval (no cache), as `Lab.candidates` runs on a miss.
        lc = lab.retrieve(s.depth, keyword_mode=s.keyword_mode, keyword_fallback=False)
        lc.score(s, [METRIC])

    per = [repeat(lambda s=s: one(s), 1, warmup=0)[0] for s in systems]
    lc = lab.candidates(base.depth)
    grid = [base.replace(vector_weight=w / 100, text_weight=1 - w / 100) for w in range(101)]
    fast, _, path = run_memlab(lc, grid, 3)
    return {
        "dataset": name,
        "queries": len(lc.qids),
        "per_setting_seconds": stats(per),
        "fast_101_seconds": stats(fast),
        "fast_path": path,
    }


def main() -> int:
    p = parser(__doc__.splitlines()[0], "sweep_speed")
    p.add_argument("--no-ranx", action="store_true", help="skip ranx (always skipped with --quick)")
    p.add_argument("--plot", help="write a PNG of the timings and the sweep curve here")
    args = p.parse_args()
    quick = args.quick
    nq = 300 if quick else 1000
    reps = args.repeats or (3 if quick else 5)
    log("building candidates")
    lc = random_lab_candidates(nq, 50, seed=0)
    inputs = {
        "queries": nq,
        "candidates_per_leg": 50,
        "union_width": lc.cs.width,
        "metric": METRIC,
        "data": "random_lab_candidates(seed=0): random leg scores, 1-3 relevant docs per query",
        "repeats": reps,
    }
    results: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []

    # --- 101-point weighted-sum sweep
    w_base = wsum_base()
    grid = [
        w_base.replace(vector_weight=w / 100, text_weight=round(1 - w / 100, 2)) for w in range(101)
    ]
    log("wsum: memlab fast")
    t_fast, v_fast, path = run_memlab(lc, grid, reps)
    log("wsum: memlab loop")
    t_loop, v_loop = run_loop(lc, grid, max(1, reps // 2))
    identical = bool(np.array_equal(v_fast, v_loop, equal_nan=True))
    means = np.nanmean(v_fast, axis=1)
    results["wsum"] = {
        "settings": len(grid),
        "fast_path": path,
        "memlab_fast_seconds": stats(t_fast),
        "memlab_loop_seconds": stats(t_loop),
        "fast_equals_loop_per_query": identical,
        "best_vector_weight": grid[int(means.argmax())].vector_weight,
        "curve": [[s.vector_weight, float(m)] for s, m in zip(grid, means, strict=True)],
        "best_mean": float(means.max()),
    }

    warm = None
    have_ranx = not quick and not args.no_ranx
    if have_ranx:
        try:
            log("ranx warm-up (numba compile)")
            warm = ranx_warmup()
            log("ranx wsum")
        except ImportError:
            have_ranx = False
    if have_ranx:
        t_ranx, rep, best = run_ranx(lc, "wsum", max(1, reps // 2))
        ours = {(s.vector_weight, s.text_weight): float(means[i]) for i, s in enumerate(grid)}
        pairs = [(tuple(float(x) for x in t), v) for t, v in rep]
        diffs = [abs(v - ours[t]) for t, v in pairs]
        # ranx keeps the LAST best in its trial order; memlab's best() the first.
        ranx_best = tuple(float(x) for x in best["weights"])
        ours_on_ranx_grid = [(t, ours[t]) for t, _ in pairs]
        top = max(v for _, v in ours_on_ranx_grid)
        ours_last_best = [t for t, v in ours_on_ranx_grid if v == top][-1]
        results["wsum"].update(
            {
                "ranx_seconds": stats(t_ranx),
                "ranx_settings": len(pairs),
                "ranx_lost_settings": 101 - len(pairs),
                "max_abs_diff_vs_ranx": max(diffs),
                "ranx_best_weights": list(ranx_best),
                "memlab_best_same_rule": list(ours_last_best),
                "same_best": ranx_best == ours_last_best,
                "ranx_curve": [[t[0], v] for t, v in pairs],
            }
        )
    f_med = results["wsum"]["memlab_fast_seconds"]["median"]
    rows.append(
        {
            "sweep": "wsum 101",
            "system": "memlab fast",
            "seconds": stats(t_fast),
            "x slower than fast": 1.0,
        }
    )
    rows.append(
        {
            "sweep": "wsum 101",
            "system": "memlab loop",
            "seconds": stats(t_loop),
            "x slower than fast": stats(t_loop)["median"] / f_med,
        }
    )
    if have_ranx:
        # ranx evaluates fewer settings (float-sum defect): compare per setting, scaled to 101.
        r = results["wsum"]
        scaled = r["ranx_seconds"]["median"] / r["ranx_settings"] * 101
        r["ranx_seconds_per_101"] = scaled
        rows.append(
            {
                "sweep": "wsum 101",
                "system": f"ranx ({r['ranx_settings']} settings)",
                "seconds": r["ranx_seconds"],
                "x slower than fast": scaled / f_med,
            }
        )

    # --- 10 × 10 RRF grid
    r_base = rrf_base()
    rgrid = [
        r_base.replace(rrf_k=float(k), vector_weight=w / 10, text_weight=1.0)
        for k in range(10, 101, 10)
        for w in range(1, 11)
    ]
    log("rrf: memlab fast, loop")
    t_rfast, rv_fast, rpath = run_memlab(lc, rgrid, reps)
    t_rloop, rv_loop = run_loop(lc, rgrid, max(1, reps // 2))
    rmeans = np.nanmean(rv_fast, axis=1)
    results["rrf"] = {
        "settings": len(rgrid),
        "fast_path": rpath,
        "memlab_fast_seconds": stats(t_rfast),
        "memlab_loop_seconds": stats(t_rloop),
        "fast_equals_loop_per_query": bool(np.array_equal(rv_fast, rv_loop, equal_nan=True)),
        "best_setting": {
            "rrf_k": rgrid[int(rmeans.argmax())].rrf_k,
            "vector_weight": rgrid[int(rmeans.argmax())].vector_weight,
        },
    }
    rf = results["rrf"]["memlab_fast_seconds"]["median"]
    rows.append(
        {
            "sweep": "rrf 10x10",
            "system": "memlab fast",
            "seconds": stats(t_rfast),
            "x slower than fast": 1.0,
        }
    )
    rows.append(
        {
            "sweep": "rrf 10x10",
            "system": "memlab loop",
            "seconds": stats(t_rloop),
            "x slower than fast": stats(t_rloop)["median"] / rf,
        }
    )
    if have_ranx:
        log("ranx rrf")
        t_rr, rrep, rbest = run_ranx(lc, "rrf", max(1, reps // 2))
        # ranx's RRF is unweighted: compare with memlab's weight 1/1 column.
        unweighted = {
            int(s.rrf_k): float(rmeans[i]) for i, s in enumerate(rgrid) if s.vector_weight == 1.0
        }
        diffs = [abs(v - unweighted[k]) for k, v in rrep]
        per = stats(t_rr)["median"] / len(rrep)
        results["rrf"].update(
            {
                "ranx_seconds_k_only": stats(t_rr),
                "ranx_settings": len(rrep),
                "ranx_seconds_per_100": per * 100,
                "max_abs_diff_vs_ranx_unweighted": max(diffs),
                "rrf_settings_differing_from_ranx": sum(d > 1e-12 for d in diffs),
                "ranx_best_k": rbest["k"],
            }
        )
        rows.append(
            {
                "sweep": "rrf 10x10",
                "system": "ranx (k only, x10)",
                "seconds": stats(t_rr),
                "x slower than fast": per * 100 / rf,
            }
        )
    results["ranx_warmup_seconds"] = warm

    # --- re-running the search per setting (real index, hashing embedder)
    log("re-run search per setting")
    rr = rerun_search(quick)
    results["rerun"] = rr
    per = rr["per_setting_seconds"]["median"]
    # Not timed for 101 settings: 101 × the median of the timed ones, and labelled so.
    n_timed = rr["per_setting_seconds"]["n"]
    rows.append(
        {
            "sweep": f"wsum 101, {rr['dataset']}",
            "system": f"re-run search x101 (estimate: {n_timed} settings timed)",
            "seconds": f"~{per * 101:.3g}",
            "x slower than fast": per * 101 / rr["fast_101_seconds"]["median"],
        }
    )
    rows.append(
        {
            "sweep": f"wsum 101, {rr['dataset']}",
            "system": "memlab fast",
            "seconds": rr["fast_101_seconds"],
            "x slower than fast": 1.0,
        }
    )

    if warm is None:
        why = "--quick" if quick else ("--no-ranx" if args.no_ranx else "ranx not installed")
        ranx_note = f"ranx not run ({why})"
    else:
        ranx_note = f"ranx numba warm-up {fmt(warm)} s (excluded)"
    print(f"{nq} queries x {lc.cs.width} candidates (50 per leg), metric {METRIC}; {ranx_note}")
    print_table(rows)
    w = results["wsum"]
    print(
        f"\nwsum: fast == loop per query: {w['fast_equals_loop_per_query']}; best vector_weight "
        f"{w['best_vector_weight']} (ndcg@10 {w['best_mean']:.4f})"
    )
    if have_ranx:
        print(
            f"ranx: {w['ranx_settings']} of 101 settings evaluated; max |mean diff| "
            f"{w['max_abs_diff_vs_ranx']:.2e}; same best: {w['same_best']} ({w['ranx_best_weights']})"
        )
        print(
            f"rrf: max |mean diff| vs ranx (unweighted) {results['rrf']['max_abs_diff_vs_ranx_unweighted']:.2e}"
        )
    if args.plot:
        plot(rows, results, args.plot)
    report("sweep_speed", args, inputs, results)
    return 0


def plot(rows: list[dict[str, Any]], results: dict[str, Any], path: str) -> None:
    """Seconds per sweep (log scale) and the wsum curve, memlab's line over ranx's points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = [f"{r['sweep']}\n{r['system']}" for r in rows]
    secs = [
        r["seconds"]["median"] if isinstance(r["seconds"], dict) else r["seconds"] for r in rows
    ]
    ax.barh(range(len(rows)), secs, color=["C0" if "fast" in r["system"] else "C7" for r in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("seconds for the whole sweep (median)")
    ax.invert_yaxis()
    w = results["wsum"]
    xs, ys = zip(*w["curve"], strict=True)
    bx.plot(xs, ys, "-", label="memlab fast path")
    if "ranx_curve" in w:
        rx, ry = zip(*w["ranx_curve"], strict=True)
        bx.plot(rx[::5], ry[::5], "o", mfc="none", label="ranx optimize_fusion (every 5th)")
    bx.set_xlabel("vector weight (text weight = 1 − w)")
    bx.set_ylabel("ndcg@10")
    bx.legend(fontsize=8)
    bx.grid(alpha=0.3)
    fig.suptitle("Weight sweeps over cached candidates (1,000 queries × 50 per leg)")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
