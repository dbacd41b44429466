"""RealMem (five dev personas): memlab's systems beside query-blind baselines and the
published memory systems, with the benchmark's own protocol and metrics.

PROTOCOL (``memlab.datasets.realmem``; docs/studies/realmem.md). Each persona is a
workspace, each session its own dated file; a query is answered from the sessions before
its own (the lab's time cut-off in candidate generation, ``memlab.store.asof``: both legs
and every stage see only the past); gold = the sessions the next Assistant turn's memory
came from. The unit ranked is the session (``Lab(level="file")``: a session's rank is its
best unit's). Metrics as RealMem's scorer defines them: ``recall_any@k`` (a gold session
in the top k), ``recall_all@10`` (all of them), nDCG@10 with its discount
(``ndcg_jk@10``: ranks 1 and 2 undiscounted). Paired t-tests against ``bm25``, Holm
correction over the systems, α = 0.01. Nothing is tuned here: every preset as it ships
(memlab-best and memlab-best-chunk were tuned on LoCoMo and BEAM, never on RealMem).

ROWS. ``recency`` (past sessions, newest first) and ``random`` (seeded) are query-blind
baselines (``memlab.stages.prior``); ``bm25``, ``vector``, ``wsum`` the lab baselines;
``memlab-best`` and ``memlab-best-chunk`` memlab's presets. Both units are run: ``turn``
(one line per unit) and ``chunk`` (OpenClaw's chunks). The published rows (`PUBLISHED`)
are the authors' figures over all ten personas, for systems that also ask an LLM for the
query's keywords and keep their top 20 memories reduced to sessions: printed beside ours,
marked, not like-for-like.

Reproduce (docs/studies/realmem.md; all-MiniLM-L6-v2: a few minutes the first
time to embed the ~8,000 turns and ~2,500 chunks, cached after; ``--embedder hashing`` for a
fast check; ``--quick``: hashing, turn unit only):

    nice -n 10 .venv/bin/python studies/realmem_quality.py --json benchmarks/results/realmem_quality.json

``--path DIR``: the persona folder
(default ``$MEMLAB_REALMEM``, else ../shared/datasets/realmem).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import log, parser, print_table, report
from memlab.datasets.realmem import (
    REALMEM_BASELINE,
    REALMEM_METRICS,
    REALMEM_PRESETS,
    load_realmem,
)
from memlab.eval.experiment import ExperimentResult, run_experiment
from memlab.eval.lab import Lab
from memlab.pipeline.presets import preset

# The authors' table (all ten personas; systems that ask an LLM for query keywords and keep
# their top 20 memories, reduced to sessions): R@10 and nDCG@10.
PUBLISHED = {
    "Graph Mem (published)": {"recall_any@10": 0.6344, "ndcg_jk@10": 0.5654},
    "Mem0 (published)": {"recall_any@10": 0.6055, "ndcg_jk@10": 0.5251},
    "A-mem (published)": {"recall_any@10": 0.5760, "ndcg_jk@10": 0.5211},
}
PUBLISHED_NOTE = (
    "published: the authors' R@10 / nDCG@10 over all ten personas, systems that ask an LLM "
    "for query keywords and keep the top 20 memories reduced to sessions — not like-for-like"
)
LABELS = {
    "recall_any@5": "R_any@5",
    "recall_any@10": "R_any@10",
    "recall_any@20": "R_any@20",
    "recall_all@10": "R_all@10",
    "ndcg_jk@10": "nDCG@10",
}
TESTED = ("recall_any@10", "ndcg_jk@10")  # the p-values printed beside the means
ALPHA = 0.01


def experiment(lab: Lab) -> ExperimentResult:
    """Every RealMem row on one lab: paired t-tests against bm25, Holm, α 0.01."""
    systems = [preset(n) for n in REALMEM_PRESETS]
    return run_experiment(
        systems, lab, list(REALMEM_METRICS), baseline=REALMEM_BASELINE, alpha=ALPHA
    )


def rows_of(res: ExperimentResult) -> list[dict[str, Any]]:
    """The printed table: per system its means (``+``/``−`` where it differs from bm25 at
    p_adj ≤ α), the Holm-adjusted p of `TESTED` and a note (``= X: same ranking`` when its
    sessions are X's on every query: at one line per unit memlab-best-chunk's chunks are
    lines), then the published rows."""
    out = []
    base = res.table.loc[REALMEM_BASELINE]
    same = res.same_ranking_as()
    for s in res.systems:
        r = res.table.loc[s.name]
        row: dict[str, Any] = {"system": s.name, "n": int(r["n"])}
        for m in REALMEM_METRICS:
            mark = ""
            if s.name != REALMEM_BASELINE and bool(r.get(f"{m} sig", False)):
                mark = "+" if r[m] > base[m] else "−"
            row[LABELS[m]] = f"{r[m]:.3f}{mark}"
        for m in TESTED:
            p = r.get(f"{m} p_adj", np.nan)
            row[f"p {LABELS[m]}"] = "-" if s.name == REALMEM_BASELINE else f"{p:.2g}"
        row["note"] = f"= {same[s.name]}: same ranking" if s.name in same else ""
        out.append(row)
    for name, vals in PUBLISHED.items():
        row = {"system": name, "n": "-"}
        row.update({LABELS[m]: f"{vals[m]:.3f}" if m in vals else "-" for m in REALMEM_METRICS})
        row.update({f"p {LABELS[m]}": "-" for m in TESTED})
        row["note"] = "published, not like-for-like"
        out.append(row)
    return out


def per_persona(res: ExperimentResult, metric: str = "recall_any@10") -> list[dict[str, Any]]:
    """Mean ``metric`` per persona (the qid's group prefix) and system."""
    d = res.per_query[res.per_query["metric"] == metric].copy()
    d["persona"] = d["qid"].str.split(":").str[0]
    wide = d.pivot_table(index="persona", columns="system", values="value", aggfunc="mean")
    names = [s.name for s in res.systems]
    return [{"persona": p, **{n: f"{wide.loc[p, n]:.3f}" for n in names}} for p in wide.index]


def main() -> int:
    ap = parser(__doc__.splitlines()[0], "realmem_quality")
    ap.add_argument("--path", help="RealMem persona folder (default $MEMLAB_REALMEM or ../shared)")
    ap.add_argument("--embedder", choices=("local", "hashing"), default="local")
    ap.add_argument("--units", default="turn,chunk", help="comma-separated: turn, chunk")
    args = ap.parse_args()
    embedder = "hashing" if args.quick else args.embedder
    units = ["turn"] if args.quick else [u for u in args.units.split(",") if u]
    try:  # found by locate_data: --path, $MEMLAB_REALMEM, ../shared/datasets/realmem
        ds = load_realmem(args.path or None)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    found = {k: v for k, v in ds.info["defects"].items() if v}
    print(
        f"RealMem: {ds.info['personas']} personas, {ds.info['sessions']} sessions, "
        f"{ds.info['turns']} turns, {ds.info['queries']} queries "
        f"({ds.info['queries_with_gold']} with past gold); defects: "
        + (", ".join(f"{k} {v}" for k, v in found.items()) or "none")
    )
    results: dict[str, Any] = {
        "dataset": {
            k: ds.info[k]
            for k in ("personas", "sessions", "turns", "queries", "queries_with_gold", "defects")
        }
    }
    for unit in units:
        log(f"unit {unit}: retrieving and ranking ({embedder} embedder)")
        lab = Lab(ds, embedder=embedder, unit=unit, level="file", cache_vectors=True)
        res = experiment(lab)
        rows = rows_of(res)
        print(
            f"\nRealMem dev, unit {unit}, session level, {lab.embedder.model} "
            f"(+/−: differs from bm25, paired t-test, Holm, p_adj ≤ {ALPHA})"
        )
        print_table(rows)
        print(PUBLISHED_NOTE)
        persona = per_persona(res)
        print(f"\nrecall_any@10 per persona, unit {unit}")
        print_table(persona)
        results[unit] = {
            "model": lab.embedder.model,
            "table": rows,
            "systems": res.to_json(),
            "recall_any@10_per_persona": persona,
            "candidate_seconds": res.info["candidate_seconds"],
        }
    inputs = {
        "path": args.path or "default (locate_data: $MEMLAB_REALMEM, ../shared/datasets/realmem)",
        "embedder": embedder,
        "units": units,
        "metrics": list(REALMEM_METRICS),
        "presets": list(REALMEM_PRESETS),
        "baseline": REALMEM_BASELINE,
        "test": "ttest, holm",
        "alpha": ALPHA,
        "published": PUBLISHED,
        "published_note": PUBLISHED_NOTE,
    }
    report("realmem_quality", args, inputs, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
