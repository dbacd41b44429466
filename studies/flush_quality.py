"""What an agent keeps: the memory flush's notes, the transcripts (the sessions corpus), or
both — recall, nDCG and cost on RealMem dev and LoCoMo dev.

PROTOCOL (``memlab.flush``). Each conversation is replayed turn by turn under OpenClaw's
flush rule (openclaw-memory.md §9: a flush when the context's token estimate reaches
window − reserveTokensFloor − softThresholdTokens, once per compaction cycle; compaction
past window − reserveTokensFloor drops the context; one agent session for the whole
conversation, ``reset=never``), a flush policy writes notes with their provenance, and
three memories are written: the notes (``session`` layout: the notes one flush wrote about
one session are one dated file, named by the flush's minute), the transcripts (one dated
file per session) and both. Relevance carries over by provenance; a question whose
evidence no note kept stays in the notes' mean and scores 0 there. Scored at session level
(``Lab(level="file")``, one line per unit), RealMem as of each query (its time cut-offs;
LoCoMo's questions come after the conversation). Paired t-tests of notes − transcripts and
both − transcripts per system, Holm over each table's tests.

POLICIES. ``extracted`` (RealMem's own LLM memory manager's points, placed on their source
turns: what an LLM flush writes), ``extractive`` (no model, 2,000 tokens per flush: first
sentences of user turns with the most content words and specifics), ``oracle`` (the
evidence turns themselves: the upper bound).

SYSTEMS. bm25, vector, memlab-best, and OpenClaw as shipped (``openclaw-current``; on
RealMem with the as-of cut-offs, its filename leg over the past's files only).

DAILY LAYOUT. OpenClaw's own file layout (every flush of a day appends to
``memory/YYYY-MM-DD.md``) mixes the notes of many sessions in one file, so it is scored at
unit level: OpenClaw's ~400-token chunks, a chunk relevant when it holds an evidence line
(a note line by provenance), under bm25, vector, openclaw-current and memlab-best-chunk.
LoCoMo only: its questions come after the conversation, whereas a daily file is dated
midnight, so under RealMem's cut-offs a question would see that day's later notes.

CONFIG. RealMem at OpenClaw's defaults (200k window: 176k threshold); LoCoMo's five
conversations are 16–27k tokens each, so at the defaults no flush ever fires (the notes are
empty, printed as such) and the table uses a 32k window (threshold 8k). SWEEP: the context
window (soft 4,000) and softThresholdTokens (window 200k, RealMem; 64k, LoCoMo) against the
flushes, the note tokens and the notes' recall_any@10 under bm25 and memlab-best
(``extracted`` on RealMem, ``extractive`` on LoCoMo).

Reproduce (docs/studies/flush.md: all-MiniLM-L6-v2, ~45 min on 2 cores, most of
it embedding the transcripts; without ``--embedder local`` the hashing embedder, ~3 min;
``--quick``: one persona and one conversation):

    nice -n 10 .venv/bin/python studies/flush_quality.py --embedder local --json benchmarks/results/flush_quality.json
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import log, parser, print_table, report
from memlab.datasets.base import Dataset
from memlab.flush import FlushConfig, flush_study
from memlab.flush.measure import MEMORY_METRICS, compare_memories

REALMEM_SYSTEMS = ("bm25", "vector", "openclaw-current", "memlab-best")
LOCOMO_SYSTEMS = ("bm25", "vector", "openclaw-current", "memlab-best")
POLICIES = {"realmem": ("extracted", "extractive", "oracle"), "locomo": ("extractive", "oracle")}
MAIN_CONFIG = {"realmem": FlushConfig(), "locomo": FlushConfig(context_window=32_000)}
SWEEP_POLICY = {"realmem": "extracted", "locomo": "extractive"}
WINDOWS = {
    "realmem": (32_000, 64_000, 128_000, 200_000),
    "locomo": (28_000, 32_000, 48_000, 64_000, 200_000),
}
SOFTS = {"realmem": (4_000, 40_000, 100_000, 150_000), "locomo": (4_000, 12_000, 24_000, 36_000)}
SOFT_WINDOW = {"realmem": 200_000, "locomo": 64_000}
SWEEP_SYSTEMS = ("bm25", "memlab-best")
DAILY_SYSTEMS = ("bm25", "vector", "openclaw-current", "memlab-best-chunk")
LABELS = {"recall_any@5": "R_any@5", "recall_any@10": "R_any@10", "ndcg_jk@10": "nDCG@10"}


def table_rows(cmp: Any, policy: str) -> list[dict[str, Any]]:
    """One printed row per (memory, system): means, and for notes/both the difference to
    transcripts with its Holm-adjusted p."""
    rows = []
    for r in cmp.table.to_dict(orient="records"):
        row: dict[str, Any] = {"policy": policy, "memory": r["memory"], "system": r["system"]}
        row["n"] = r["n"]
        for m in MEMORY_METRICS:
            row[LABELS[m]] = f"{r[m]:.3f}"
            d = r.get(f"{m} diff")
            row[f"Δ {LABELS[m]}"] = "-" if d is None or d != d else f"{d:+.3f}"
            p = r.get(f"{m} p_adj")
            row[f"p {LABELS[m]}"] = "-" if p is None or p != p else f"{p:.2g}"
        rows.append(row)
    return rows


def sweep(ds: Dataset, name: str, embedder: str) -> list[dict[str, Any]]:
    """Flush frequency against the notes' recall: the window (soft 4,000) and the soft
    threshold (``SOFT_WINDOW``)."""
    points = [("window", w, FlushConfig(context_window=w)) for w in WINDOWS[name]]
    points += [
        ("soft", s, FlushConfig(context_window=SOFT_WINDOW[name], soft_threshold_tokens=s))
        for s in SOFTS[name]
    ]
    rows = []
    for knob, value, cfg in points:
        fw = flush_study(ds, cfg, SWEEP_POLICY[name], layout="session")
        s = fw.run.summary()
        row: dict[str, Any] = {
            "knob": knob,
            "value": value,
            "threshold": cfg.threshold,
            "flushes": s["flushes"],
            "per 100k tok": f"{s['flushes_per_100k_tokens']:.2f}",
            "note tokens": s["note_tokens"],
            "turns covered": f"{s['turns_covered'] / max(1, s['turns']):.3f}",
        }
        if s["notes"]:
            cmp = compare_memories(fw, SWEEP_SYSTEMS, embedder=embedder, memories=("notes",))
            for r in cmp.table.to_dict(orient="records"):
                row[f"{r['system']} R@10"] = f"{r['recall_any@10']:.3f}"
        else:  # nothing written: every question's evidence is lost
            row.update({f"{x} R@10": "0.000" for x in SWEEP_SYSTEMS})
        rows.append(row)
        log(f"{name} sweep {knob}={value}: {s['flushes']} flushes")
    return rows


def daily(ds: Dataset, name: str, embedder: str) -> list[dict[str, Any]]:
    """The ``daily`` layout at unit level, OpenClaw's chunks (module docstring), for each
    policy of ``name`` at its main config."""
    rows: list[dict[str, Any]] = []
    for policy in POLICIES[name]:
        fw = flush_study(ds, MAIN_CONFIG[name], policy, layout="daily")
        cmp = compare_memories(fw, DAILY_SYSTEMS, embedder=embedder, unit="chunk", level="unit")
        rows.extend(table_rows(cmp, policy))
        files = {r["memory"]: r["files"] for r in cmp.cost.to_dict(orient="records")}
        log(f"{name} daily {policy}: {files}")
    return rows


def study(name: str, ds: Dataset, embedder: str) -> dict[str, Any]:
    """The main table, costs and the sweep of one data set."""
    systems = REALMEM_SYSTEMS if name == "realmem" else LOCOMO_SYSTEMS
    out: dict[str, Any] = {"tables": [], "cost": [], "runs": {}}
    default = flush_study(ds, FlushConfig(), POLICIES[name][-1], layout="session").run.summary()
    out["default_config_flushes"] = default["flushes"]
    print(
        f"\n{name}: {default['conversations']} conversations, {default['sessions']} sessions, "
        f"{default['transcript_tokens']:,} transcript tokens; at OpenClaw's defaults "
        f"(176k threshold) {default['flushes']} flushes fire"
    )
    cfg = MAIN_CONFIG[name]
    for policy in POLICIES[name]:
        log(f"{name}: {policy} (window {cfg.context_window:,})")
        fw = flush_study(ds, cfg, policy, layout="session")
        cmp = compare_memories(fw, systems, embedder=embedder)
        rows = table_rows(cmp, policy)
        out["tables"].extend(rows)
        cost = cmp.cost.assign(policy=policy).to_dict(orient="records")
        out["cost"].extend(cost)
        out["runs"][policy] = fw.run.summary()
        print(
            f"\n{name} dev, policy {policy}, window {cfg.context_window:,} (threshold "
            f"{cfg.threshold:,}): {fw.run.summary()['flushes']} flushes, "
            f"{fw.run.summary()['notes']} notes; session level, embedder "
            f"{embedder}; Δ and p_adj: against transcripts (paired t, Holm)"
        )
        print_table(rows)
        print_table(cost)
    if name == "locomo":
        out["daily"] = daily(ds, name, embedder)
        print(
            f"\n{name} dev, daily layout (OpenClaw's), window {cfg.context_window:,}: unit "
            "level, OpenClaw's chunks; Δ and p_adj against transcripts"
        )
        print_table(out["daily"])
    out["sweep"] = sweep(ds, name, embedder)
    print(f"\n{name}: flush frequency against the notes' recall_any@10")
    print_table(out["sweep"])
    return out


def main() -> int:
    ap = parser(__doc__.splitlines()[0], "flush_quality")
    ap.add_argument("--embedder", choices=("hashing", "local"), default="hashing")
    ap.add_argument("--datasets", default="realmem,locomo")
    args = ap.parse_args()
    from memlab.datasets.locomo import load_locomo
    from memlab.datasets.realmem import load_realmem

    results: dict[str, Any] = {}
    for name in [d for d in args.datasets.split(",") if d]:
        try:
            ds = {"realmem": load_realmem, "locomo": load_locomo}[name]()
        except FileNotFoundError as exc:
            print(exc, file=sys.stderr)
            return 2
        if args.quick:
            ds = ds.select_groups(sorted(ds.workspaces)[:1])
        results[name] = study(name, ds, args.embedder)
    inputs = {
        "embedder": args.embedder,
        "quick": args.quick,
        "policies": POLICIES,
        "main_config": {k: v.context_window for k, v in MAIN_CONFIG.items()},
        "windows": WINDOWS,
        "softs": SOFTS,
        "metrics": list(MEMORY_METRICS),
        "level": "file (session); daily table: unit",
        "unit": "turn; daily table: chunk",
    }
    report("flush_quality", args, inputs, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
