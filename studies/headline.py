"""The headline figures: every preset on LoCoMo, BEAM and RealMem, each mean with its 95 %
bootstrap CI and its spread over the data set's groups.

WHAT. Every preset (``memlab.pipeline.presets.PRESETS``) with the packaged all-MiniLM-L6-v2,
at one line per unit (``turn``) and at OpenClaw's chunks (``chunk``), on three dev sets,
each figure on the slices the docs quote:

- **LoCoMo dev** (5 conversations, 996 scored questions): all questions; the report half
  of the question split (``memlab.eval.protocol.question_halves``, 498 questions, the half
  no setting of memlab-best was chosen on); the report half of the conversation split
  (``conversation_halves``: conv-30 and conv-42). Metrics R@5, R@10, nDCG@10 at turn
  level, recall@6 (OpenClaw's maxResults), R@10, nDCG@10 at chunk level.
- **BEAM 100K chats 1–10** (179 scored questions): all questions; the report half of the
  conversation split (the even chats, never tuned on). The same metrics.
- **RealMem dev** (5 personas, 728 queries): every query answered from the sessions
  before its own (the lab's time cut-off), sessions ranked (``Lab(level="file")``), as
  ``studies/realmem_quality.py`` runs it; RealMem's own metrics. Nothing was tuned on
  RealMem, so all queries are reported.

HOW. Each system runs once over all questions (asked for at least the deepest metric's k
results, ``Pipeline.at_k``); a slice is a subset of the same per-question values. Per slice
and system: each metric's mean and its 95 % percentile bootstrap CI over the slice's
questions, and the paired t-test against ``bm25`` with Holm's correction over the systems
(``memlab.eval.summary.summary_table``, the table ``memlab eval`` prints); and the figure
of every group in the slice (a conversation, a chat, a persona:
``memlab.eval.groups.group_table``), so a lead carried by one group shows as a wide spread.
Nothing is chosen here.

Reproduce (docs/results.md; writes benchmarks/results/headline_{locomo,beam,realmem}.json;
the lab's vector caches make LoCoMo and BEAM take a minute or two; RealMem embeds ~8,000
lines and its chunks the first time, a few minutes on 2 cores; ``--sets`` picks sets):

    nice -n 10 .venv/bin/python studies/headline.py --json-dir benchmarks/results

``--embedder hashing`` (or ``--quick``: hashing, the small configuration of LoCoMo and
BEAM, RealMem's first persona) checks the script in seconds; its figures are not the
headline's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import log, parser, print_table, report

SETS = ("locomo", "beam", "realmem")
UNITS = ("turn", "chunk")
CONVERSATION_METRICS = {
    "turn": ("recall@5", "recall@10", "ndcg@10"),
    "chunk": ("recall@6", "recall@10", "ndcg@10"),
}
BASELINE = "bm25"
TEST, CORRECTION, ALPHA = "ttest", "holm", 0.01
DIGITS = 4


def load(name: str, quick: bool) -> Any:
    """The data set ``name`` (its whole dev set; ``quick``: its small configuration)."""
    from memlab.eval.protocol import small_groups

    if name == "locomo":
        from memlab.datasets.locomo import load_locomo

        ds = load_locomo()
    elif name == "beam":
        from memlab.datasets.beam import load_beam

        ds = load_beam()
    else:
        from memlab.datasets.realmem import load_realmem

        ds = load_realmem()
        return ds.select_groups(sorted(ds.workspaces)[:1]) if quick else ds
    return ds.select_groups(small_groups(ds)) if quick else ds


def slices(name: str, ds: Any) -> dict[str, list[str]]:
    """Slice name → scored qids: all, and the report halves the docs quote
    (``memlab.eval.protocol``; RealMem: all only, nothing was tuned on it)."""
    from memlab.eval.protocol import conversation_halves, question_halves, scored_questions

    out = {"all": scored_questions(ds)["qid"].tolist()}
    if name == "locomo":
        out["report, by question"] = question_halves(ds)[1]
    if name in ("locomo", "beam") and ds.queries["group"].nunique() > 1:
        out["report, by conversation"] = conversation_halves(ds)[1]
    return out


def figures(
    res: Any, qids: Sequence[str], metrics: Sequence[str], groups: dict[str, str]
) -> list[dict[str, Any]]:
    """One row per system of ``res`` on the questions ``qids``: ``n`` and, per metric, its
    mean, 95 % CI (``low``, ``high``), the Holm-adjusted p against ``BASELINE``
    (``summary_table``) and each group's mean (``group_table``), rounded to ``DIGITS``."""
    from memlab.eval.groups import group_table
    from memlab.eval.summary import summary_table

    names = [s.name for s in res.systems]
    pq = res.per_query[res.per_query["qid"].isin(set(qids))]
    table = summary_table(pq, names, list(metrics), BASELINE, TEST, CORRECTION, ALPHA)
    by_group = {m: group_table(pq, groups, m, names) for m in metrics}

    def r(x: Any) -> float | None:
        return None if x is None or not np.isfinite(float(x)) else round(float(x), DIGITS)

    rows = []
    for s in names:
        row: dict[str, Any] = {"system": s, "n": int(table.loc[s, "n"])}
        for m in metrics:
            g = by_group[m][s]
            row[m] = {
                "mean": r(table.loc[s, m]),
                "low": r(table.loc[s, f"{m} low"]),
                "high": r(table.loc[s, f"{m} high"]),
                "p_adj": None if s == BASELINE else r(table.loc[s, f"{m} p_adj"]),
                "groups": {str(k): r(v) for k, v in g.items()},
            }
        rows.append(row)
    return rows


def run_set(name: str, embedder: str, quick: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(inputs, results) of one data set: every preset at both units, every slice."""
    from memlab.datasets.realmem import REALMEM_METRICS
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.protocol import HALVES
    from memlab.pipeline.presets import PRESETS, preset

    ds = load(name, quick)
    cuts = slices(name, ds)
    groups = dict(zip(ds.queries["qid"], ds.queries["group"].astype(str), strict=True))
    results: dict[str, Any] = {}
    shared_embedder = None
    for unit in UNITS:
        metrics = REALMEM_METRICS if name == "realmem" else CONVERSATION_METRICS[unit]
        level = "file" if name == "realmem" else "unit"
        log(f"{name} / {unit}: {len(PRESETS)} presets ({embedder} embedder, {level} level)")
        t0 = time.perf_counter()
        lab = Lab(
            ds,
            embedder=shared_embedder or embedder,
            unit=unit,
            level=level,
            progress=False,
            cache_vectors=True,
        )
        shared_embedder = lab.embedder
        res = run_experiment([preset(p) for p in PRESETS], lab, list(metrics))
        results[unit] = {
            "model": lab.embedder.model,
            "metrics": list(metrics),
            "seconds": round(time.perf_counter() - t0, 1),
            "identical_rankings": res.info.get("identical_rankings", []),
            "slices": {
                cut: {
                    "n": len(qids),
                    "groups": sorted({groups[q] for q in qids}),
                    "rows": figures(res, qids, metrics, groups),
                }
                for cut, qids in cuts.items()
            },
        }
    inputs = {
        "dataset": ds.name,
        "fingerprint": ds.fingerprint,
        "quick": quick,
        "embedder": embedder,
        "presets": list(PRESETS),
        "units": list(UNITS),
        "slices": {
            "all": "every question with evidence",
            "report, by question": HALVES["question"] + "; the report half",
            "report, by conversation": HALVES["conversation"] + "; the report half",
        },
        "level": "file (sessions ranked, as of each query)" if name == "realmem" else "unit",
        "ci": "95 % percentile bootstrap over the slice's questions, 2000 resamples, seed 0",
        "test": f"{TEST} against {BASELINE}, {CORRECTION} over the systems, alpha {ALPHA}",
        "groups": "each group's mean (memlab.eval.groups.group_table)",
    }
    return inputs, results


def printed(results: dict[str, Any]) -> None:
    """Each unit's slices as text tables: mean [low, high] and the group range per metric."""
    for unit, r in results.items():
        for cut, s in r["slices"].items():
            print(f"\n{unit}, {cut} (n {s['n']}, groups {len(s['groups'])})")
            rows = []
            for row in s["rows"]:
                out = {"system": row["system"]}
                for m in r["metrics"]:
                    f = row[m]
                    g = [v for v in f["groups"].values() if v is not None]
                    out[m] = f"{f['mean']:.3f} [{f['low']:.3f}, {f['high']:.3f}]"
                    out[f"{m} groups"] = f"{min(g):.3f}–{max(g):.3f}" if g else "-"
                rows.append(out)
            print_table(rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = parser(__doc__.splitlines()[0], "headline")
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated: {', '.join(SETS)}")
    ap.add_argument("--embedder", choices=("local", "hashing"), default="local")
    ap.add_argument(
        "--json-dir", metavar="DIR", help="write DIR/headline_<set>.json for each set run"
    )
    args = ap.parse_args(argv)
    names = [s for s in args.sets.split(",") if s]
    unknown = sorted(set(names) - set(SETS))
    if unknown:
        ap.error(f"--sets: unknown {', '.join(unknown)}; choose from {', '.join(SETS)}")
    embedder = "hashing" if args.quick else args.embedder
    for name in names:
        try:
            inputs, results = run_set(name, embedder, args.quick)
        except FileNotFoundError as exc:  # locate_data's message: where it looked
            print(f"{name}: {exc}", file=sys.stderr)
            return 2
        print(f"\n== {name} ({inputs['dataset']}, {embedder})")
        printed(results)
        out = argparse.Namespace(**vars(args))
        out.json = str(Path(args.json_dir) / f"headline_{name}.json") if args.json_dir else None
        report(f"headline_{name}", out, inputs, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
