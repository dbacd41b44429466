"""Quality regression: recall / nDCG of every preset on the committed corpora and LoCoMo.

Data sets:

- every committed synthetic corpus ``datasets/synthetic-*`` (see
  ``datasets/README.md``; OpenClaw chunks, evidence = single lines);
- the LoCoMo dev split, one dialog turn per chunk, when it is found
  (``MEMLAB_LOCOMO`` or ``../shared/datasets/locomo``; skipped with a message
  otherwise — memlab never ships it).

Systems: every preset (``memlab.pipeline.PRESETS``), each asked for at least
10 results (the lab's convention, ``Pipeline.at_k``). Metrics: recall@6
(OpenClaw's maxResults), recall@10, ndcg@10, mrr. Embedders: ``hashing``
(deterministic, seconds) and ``local`` (the packaged all-MiniLM-L6-v2);
``--embedders`` picks.

``--check`` compares every figure present in ``benchmarks/baseline.json``
and exits 1 on a drop larger than the baseline's stated tolerance (per
embedder); ``--update-baseline REASON`` rewrites the baseline with this run's
figures and the reason — a deliberate change, reviewed like code.
``--quick``: the small synthetic corpus with the hashing embedder only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import (
    REPO,
    cache_dir,
    log,
    memlab_version,
    parser,
    print_table,
    report,
)

METRICS = ("recall@6", "recall@10", "ndcg@10", "mrr")
BASELINE = REPO / "benchmarks" / "baseline.json"
# A drop beyond this (absolute, on a mean over queries) fails the check. The hashing
# embedder is deterministic, so any real change of a ranking shows; one query of the
# smallest corpus moves recall by ~1/60. The local model runs torch on the CPU, whose
# float results may differ across machines in the last bits (a near-tie can flip).
TOLERANCE = {"hashing": 0.005, "local": 0.02}
QUICK_DATASETS = ("synthetic-small",)
# The committed corpora (``--make-datasets`` writes them; datasets/README.md describes them).
CORPORA: dict[str, dict[str, Any]] = {
    "synthetic-small": {"days": 30, "queries_per_type": 10, "seed": 0},
    "synthetic-medium": {"days": 120, "queries_per_type": 25, "seed": 1},
    "synthetic-cjk": {
        "days": 30,
        "queries_per_type": 10,
        "seed": 2,
        "mix": ("paraphrase", "exact", "update", "redundancy", "distractor", "multi", "cjk"),
        "cjk_fraction": 0.2,
    },
}


def make_datasets() -> None:
    """(Re)generate the committed corpora into ``datasets/`` (deterministic per config)."""
    from memlab.datasets.synthetic import SynthConfig, generate

    for name, cfg in CORPORA.items():
        ds = generate(SynthConfig(**cfg), REPO / "datasets" / name, overwrite=True)
        print(
            f"{name}: {len(ds.queries)} queries, {ds.info['files']} files, {ds.info['lines']} lines"
        )


def datasets(quick: bool) -> list[tuple[str, Any, str]]:
    """(name, Dataset, unit) of every committed synthetic corpus, then LoCoMo when present."""
    from memlab.datasets.base import load_folder

    out = []
    for d in sorted((REPO / "datasets").glob("synthetic-*")):
        if (d / "queries.jsonl").exists() and (not quick or d.name in QUICK_DATASETS):
            out.append((d.name, load_folder(d), "chunk"))
    if not quick:
        from memlab.datasets.locomo import load_locomo, locomo_default_path

        src = locomo_default_path()
        if src is not None and Path(src).exists():
            out.append(("locomo-dev", load_locomo(src), "turn"))
        else:
            print("LoCoMo dev split not found (set MEMLAB_LOCOMO): skipped", file=sys.stderr)
    return out


def evaluate(
    name: str, ds: Any, unit: str, embedder: str, presets: list[str] | None = None
) -> dict[str, dict[str, float]]:
    """Mean of each metric per preset: {preset: {metric: value, "n": queries}}."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline import PRESETS, preset

    names = list(presets or PRESETS)

    # A preset tuned with its own FTS5 tokenizer (memlab-best: porter) runs on an index
    # built with it; every other preset on OpenClaw's unicode61 index. Vectors are cached.
    lab = Lab(
        ds,
        embedder=embedder,
        unit=unit,
        index_dir=cache_dir() / f"quality-{name}",
        progress=False,
        cache_vectors=True,
    )
    res = run_experiment([preset(p) for p in names], lab, list(METRICS), baseline=None)
    out: dict[str, dict[str, float]] = {}
    for p in names:
        row = res.table.loc[p]
        out[p] = {m: round(float(row[m]), 6) for m in METRICS}
        out[p]["n"] = int(row["n"])
    return out


def run(quick: bool, embedders: list[str], presets: list[str] | None = None) -> dict[str, Any]:
    """Every figure of this run, keyed ``dataset/embedder/unit`` (all presets by default)."""
    figures: dict[str, Any] = {}
    for name, ds, unit in datasets(quick):
        for emb in embedders:
            key = f"{name}/{emb}/{unit}"
            log(f"quality {key}")
            figures[key] = evaluate(name, ds, unit, emb, presets)
    return figures


def compare(figures: dict[str, Any], baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for every figure present in both: baseline, now, change and whether it fails."""
    tol = baseline.get("tolerance", TOLERANCE)
    rows = []
    for key, systems in figures.items():
        base = baseline.get("figures", {}).get(key)
        if base is None:
            continue
        emb = key.split("/")[1]
        for p, vals in systems.items():
            for m in METRICS:
                if p not in base or m not in base[p]:
                    continue
                b, v = base[p][m], vals[m]
                rows.append(
                    {
                        "data": key,
                        "preset": p,
                        "metric": m,
                        "baseline": b,
                        "now": v,
                        "change": v - b,
                        "fails": v < b - tol[emb],
                    }
                )
    return rows


def main() -> int:
    p = parser(__doc__.splitlines()[0], "quality")
    p.add_argument("--embedders", default=None, help="comma list: hashing,local")
    p.add_argument("--check", action="store_true", help="fail on a drop beyond the tolerance")
    p.add_argument("--update-baseline", metavar="REASON", help="rewrite benchmarks/baseline.json")
    p.add_argument("--make-datasets", action="store_true", help="regenerate datasets/synthetic-*")
    p.add_argument("--presets", help="comma list of presets (default: every preset)")
    args = p.parse_args()
    if args.make_datasets:
        make_datasets()
        return 0
    embedders = (args.embedders or ("hashing" if args.quick else "hashing,local")).split(",")
    presets = args.presets.split(",") if args.presets else None
    figures = run(args.quick, embedders, presets)
    rows = []
    for key, systems in figures.items():
        for name, vals in systems.items():
            rows.append(
                {"data": key, "preset": name, **{m: vals[m] for m in METRICS}, "n": vals["n"]}
            )
    print_table(rows)
    status = 0
    result: dict[str, Any] = {"figures": figures}
    if args.check:
        baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
        cmp = compare(figures, baseline)
        fails = [r for r in cmp if r["fails"]]
        result["check"] = {"compared": len(cmp), "failed": fails}
        if not cmp:
            print("\nno figure of this run is in the baseline: nothing checked")
        elif fails:
            print(
                f"\nQUALITY REGRESSION: {len(fails)} of {len(cmp)} figures dropped beyond tolerance"
            )
            print_table(fails)
            status = 1
        else:
            better = sum(r["change"] > 1e-9 for r in cmp)
            print(
                f"\nquality check passed: {len(cmp)} figures within tolerance ({better} improved)"
            )
    if args.update_baseline:
        old = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
        merged = {k: dict(v) for k, v in old.get("figures", {}).items()}
        for key, systems in figures.items():
            merged.setdefault(key, {}).update(systems)
        doc = {
            "about": "Committed quality figures; tests/test_bench_guard.py and "
            "`python benchmarks/quality.py --check` fail on a drop beyond the tolerance. "
            "Change only with `--update-baseline REASON`, reviewed like code.",
            "tolerance": TOLERANCE,
            "metrics": list(METRICS),
            "reason": args.update_baseline,
            "history": [*old.get("history", []), args.update_baseline],
            "memlab_version": memlab_version(),
            "figures": merged,
        }
        BASELINE.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
        print(f"wrote {BASELINE}")
    inputs = {"embedders": embedders, "metrics": list(METRICS), "presets_at_k": 10}
    report("quality", args, inputs, result)
    return status


if __name__ == "__main__":
    sys.exit(main())
