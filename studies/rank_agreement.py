"""Does the synthetic corpus put the systems in the order real data does?

Each data set ranks the same presets by one metric; Kendall's tau-b (``scipy.stats.
kendalltau``) between two data sets' orders says how far their lessons agree (1: the same
order, 0: unrelated, −1: reversed). Data sets, each at the unit its presets are defined
for:

- ``synthetic-medium`` (committed, ``datasets/``; OpenClaw chunks; recall@10), and each of
  its question categories on its own — which phenomena order the systems as real data
  does;
- LoCoMo dev and BEAM dev (``../shared``) at ``turn`` and at ``chunk`` (recall@10);
- RealMem's five dev personas (``../shared``), sessions ranked as of each query
  (``recall_any@10``, RealMem's metric).

Presets: ``PRESETS`` (the query-blind ``recency`` and ``random`` included: they anchor the
bottom of every order). A pair of orders that disagree is explained on screen by its
largest displacements (the presets whose rank moves most, with their figures).

Reproduce (docs/studies/rank-agreement.md; ~1–2 min on the lab's warm caches; a first run embeds LoCoMo, BEAM and RealMem; a
data set that is not found is skipped with a message):

    nice -n 10 .venv/bin/python studies/rank_agreement.py --json benchmarks/results/rank_agreement.json
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import log, parser, print_table, report
from studies.shared import committed_lab, per_query_means

PRESETS = (
    "recency",
    "random",
    "bm25",
    "vector",
    "openclaw",
    "wsum",
    "rrf",
    "qmd-like",
    "memlab-best",
    "memlab-best-chunk",
)
METRIC = "recall@10"
REALMEM_METRIC = "recall_any@10"
# The retrieval systems: every preset but the query-blind anchors, which every data set puts
# at the bottom (they lift every tau alike).
RETRIEVAL = tuple(p for p in PRESETS if p not in ("recency", "random"))
# Below this tau a pair's disagreement is explained on screen.
EXPLAIN_BELOW = 0.8


def _means(res: Any, metric: str, qids: Any = None) -> dict[str, float]:
    m = per_query_means(res, qids, (metric,))
    return {p: m[p][metric] for p in PRESETS}


def synthetic() -> dict[str, dict[str, float]]:
    """``synthetic-medium`` as a whole and per category: {name: {preset: recall@10}}."""
    from memlab.eval.experiment import run_experiment
    from memlab.pipeline.presets import preset

    lab = committed_lab("synthetic-medium")
    ds = lab.dataset
    res = run_experiment([preset(p) for p in PRESETS], lab, [METRIC], baseline=None)
    out = {"synthetic-medium": _means(res, METRIC)}
    q = ds.queries
    for cat in sorted(set(q["category"])):
        out[f"synthetic:{cat}"] = _means(res, METRIC, q.loc[q["category"] == cat, "qid"])
    return out


def conversations() -> dict[str, dict[str, float]]:
    """LoCoMo dev and BEAM dev at turn and chunk (each skipped when not found)."""
    from memlab.datasets.base import DataNotFoundError
    from memlab.datasets.beam import load_beam
    from memlab.datasets.locomo import load_locomo
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    out = {}
    for name, load in (("locomo", load_locomo), ("beam", load_beam)):
        try:
            ds = load()
        except DataNotFoundError as exc:
            print(f"{exc} Skipped.", file=sys.stderr)
            continue
        for unit in ("turn", "chunk"):
            log(f"{name} {unit}")
            lab = Lab(ds, embedder="local", unit=unit, progress=False, cache_vectors=True)
            res = run_experiment([preset(p) for p in PRESETS], lab, [METRIC], baseline=None)
            out[f"{name}/{unit}"] = _means(res, METRIC)
    return out


def realmem() -> dict[str, dict[str, float]]:
    """RealMem's five dev personas, sessions as of each query (skipped when not found)."""
    from memlab.datasets.base import DataNotFoundError
    from memlab.datasets.realmem import load_realmem
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    try:
        ds = load_realmem()
    except DataNotFoundError as exc:
        print(f"{exc} Skipped.", file=sys.stderr)
        return {}
    log("realmem")
    lab = Lab(ds, embedder="local", unit="turn", level="file", progress=False, cache_vectors=True)
    res = run_experiment([preset(p) for p in PRESETS], lab, [REALMEM_METRIC], baseline=None)
    return {"realmem": _means(res, REALMEM_METRIC)}


def tau(a: dict[str, float], b: dict[str, float], presets: tuple[str, ...] = PRESETS) -> float:
    """Kendall's tau-b of two data sets' figures over ``presets`` (ties counted as ties;
    ``memlab.eval.realism.kendall_tau``)."""
    from memlab.eval.realism import kendall_tau

    return kendall_tau({p: a[p] for p in presets}, {p: b[p] for p in presets})


def ranks(fig: dict[str, float]) -> dict[str, float]:
    """Each preset's rank in ``fig`` (1 = best; ties share their mean rank)."""
    from scipy.stats import rankdata

    r = rankdata([-fig[p] for p in PRESETS])
    return dict(zip(PRESETS, r.tolist(), strict=True))


def why(a: str, b: str, figs: dict[str, dict[str, float]], n: int = 3) -> str:
    """The ``n`` presets whose rank moves most between data sets ``a`` and ``b``."""
    ra, rb = ranks(figs[a]), ranks(figs[b])
    moved = sorted(PRESETS, key=lambda p: -abs(ra[p] - rb[p]))[:n]
    return "; ".join(
        f"{p} rank {ra[p]:g} ({figs[a][p]:.3f}) vs {rb[p]:g} ({figs[b][p]:.3f})" for p in moved
    )


def main() -> int:
    ap = parser(__doc__.split("\n\n")[0], "rank_agreement")
    args = ap.parse_args()
    log("synthetic-medium")
    figs = synthetic()
    real = {**conversations(), **realmem()}
    figs.update(real)
    whole = ["synthetic-medium", *real]

    print(f"\nEach data set's figure per preset ({METRIC}; RealMem: {REALMEM_METRIC})")
    print_table([{"preset": p, **{d: round(figs[d][p], 3) for d in whole}} for p in PRESETS])

    pairs = {f"{a} ~ {b}": tau(figs[a], figs[b]) for a, b in itertools.combinations(whole, 2)}
    print("\nKendall's tau-b of the preset orders, each pair of data sets")
    print_table([{"pair": k, "tau": round(v, 3)} for k, v in pairs.items()])

    synth_vs_real = {d: tau(figs["synthetic-medium"], figs[d]) for d in real}
    real_vs_real = [tau(figs[a], figs[b]) for a, b in itertools.combinations(real, 2)]
    print(
        f"\nsynthetic-medium against each real set: mean tau "
        f"{np.mean(list(synth_vs_real.values())):.3f}; the real sets among themselves: mean tau "
        f"{np.mean(real_vs_real):.3f}"
        if real
        else "\nno real data set found"
    )
    if real:
        sr = [tau(figs["synthetic-medium"], figs[d], RETRIEVAL) for d in real]
        rr = [tau(figs[a], figs[b], RETRIEVAL) for a, b in itertools.combinations(real, 2)]
        print(
            f"the retrieval systems alone (without recency and random): synthetic-medium against"
            f" each real set mean tau {np.mean(sr):.3f}; the real sets among themselves"
            f" {np.mean(rr) if rr else float('nan'):.3f}"
        )
    for d, t in synth_vs_real.items():
        if t < EXPLAIN_BELOW:
            print(
                f"  synthetic-medium vs {d} (tau {t:.2f}) moves most: {why('synthetic-medium', d, figs)}"
            )

    cats = [d for d in figs if d.startswith("synthetic:")]
    by_cat = []
    for c in cats:
        row: dict[str, Any] = {"category": c.split(":", 1)[1]}
        row.update({d: round(tau(figs[c], figs[d]), 3) for d in real})
        row["mean over real"] = round(float(np.mean([row[d] for d in real])), 3) if real else None
        by_cat.append(row)
    by_cat.sort(key=lambda r: -(r["mean over real"] or 0))
    print("\nEach synthetic category's preset order against each real set (tau)")
    print_table(by_cat)
    report(
        "rank_agreement",
        args,
        {
            "presets": PRESETS,
            "metric": METRIC,
            "realmem_metric": REALMEM_METRIC,
            "embedder": "local",
        },
        {
            "figures": figs,
            "tau": pairs,
            "synthetic_vs_real": synth_vs_real,
            "real_vs_real_mean": float(np.mean(real_vs_real)) if real_vs_real else None,
            "retrieval_only": {
                "synthetic_vs_real": {
                    d: tau(figs["synthetic-medium"], figs[d], RETRIEVAL) for d in real
                },
                "real_vs_real": {
                    f"{a} ~ {b}": tau(figs[a], figs[b], RETRIEVAL)
                    for a, b in itertools.combinations(real, 2)
                },
            },
            "categories": by_cat,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
