"""Quality regression: recall / nDCG of every preset on the committed corpora, LoCoMo and BEAM.

Data sets:

- every committed synthetic corpus ``datasets/synthetic-*`` (see
  ``datasets/README.md``; OpenClaw chunks, evidence = single lines);
- the two conversation dev sets when they are found, each at one line per unit
  (``turn``) and at OpenClaw's chunks (``chunk``, where ``memlab-best-chunk`` ranks
  chunks by their best line): LoCoMo dev (``MEMLAB_LOCOMO`` or
  ``../shared/datasets/locomo``) and BEAM chats 1–10 (``MEMLAB_BEAM`` or
  ``../shared/datasets/beam``); each skipped with a message otherwise — memlab never
  ships them (CC BY-NC / CC BY-SA). ``--sets`` picks data sets by name.

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
from memlab.vocab import SYNTH_DEFAULT_MIX

METRICS = ("recall@6", "recall@10", "ndcg@10", "mrr")
BASELINE = REPO / "benchmarks" / "baseline.json"
# A drop beyond this (absolute, on a mean over queries) fails the check. The hashing
# embedder is deterministic, so any real change of a ranking shows; one query of the
# smallest corpus moves recall by ~1/60. The local model runs torch on the CPU, whose
# float results may differ across machines in the last bits (a near-tie can flip).
TOLERANCE = {"hashing": 0.005, "local": 0.02}
QUICK_DATASETS = ("synthetic-small",)
# Read from outside the repository when found (`conversation_sets`), at both units.
CONVERSATION_SETS = ("locomo-dev", "beam-dev")
# The committed corpora (``--make-datasets`` writes them; datasets/README.md describes them).
CORPORA: dict[str, dict[str, Any]] = {
    "synthetic-small": {"days": 30, "queries_per_type": 10, "seed": 0},
    "synthetic-medium": {"days": 120, "queries_per_type": 25, "seed": 1},
    "synthetic-cjk": {
        "days": 30,
        "queries_per_type": 10,
        "seed": 2,
        "mix": (*SYNTH_DEFAULT_MIX, "cjk"),
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


def conversation_sets() -> dict[str, tuple[Any, Any, str]]:
    """name → (default path or None, loader, environment variable) of the conversation dev
    sets, read from outside the repository."""
    from memlab.datasets.beam import beam_default_path, load_beam
    from memlab.datasets.locomo import load_locomo, locomo_default_path

    found = {
        "locomo-dev": (locomo_default_path(), load_locomo, "MEMLAB_LOCOMO"),
        "beam-dev": (beam_default_path(), load_beam, "MEMLAB_BEAM"),
    }
    return {name: found[name] for name in CONVERSATION_SETS}


def datasets(quick: bool, only: list[str] | None = None) -> list[tuple[str, Any, str]]:
    """(name, Dataset, unit) of every committed synthetic corpus (unit ``chunk``), then each
    conversation dev set found (`conversation_sets`) at ``turn`` and at ``chunk``; ``quick``:
    ``QUICK_DATASETS`` only. ``only``: these names only (an unknown name raises)."""
    from memlab.datasets.base import load_folder

    synthetic = {
        d.name: d
        for d in sorted((REPO / "datasets").glob("synthetic-*"))
        if (d / "queries.jsonl").exists()
    }
    conv = conversation_sets()
    if only is not None:
        unknown = sorted(set(only) - set(synthetic) - set(conv))
        if unknown:
            raise SystemExit(
                f"--sets: unknown data set {', '.join(unknown)}; "
                f"choose from {', '.join([*synthetic, *conv])}"
            )
    wanted = (lambda n: n in only) if only is not None else (lambda n: True)
    out = []
    for name, d in synthetic.items():
        if wanted(name) and (not quick or name in QUICK_DATASETS):
            out.append((name, load_folder(d), "chunk"))
    if quick:
        return out
    for name, (src, load, env) in conv.items():
        if not wanted(name):
            continue
        if src is not None and not Path(src).exists():
            # Set but wrong: an error naming it, never a silent skip.
            raise SystemExit(f"{name}: {env}={src} does not exist")
        if src is None:
            print(f"{name} not found (set {env}): skipped", file=sys.stderr)
            continue
        ds = load(src)
        out += [(name, ds, "turn"), (name, ds, "chunk")]
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
    # built with it; every other preset on OpenClaw's unicode61 index. Vectors are cached:
    # a conversation set's in the lab's default folder for it (shared with `memlab eval`,
    # the notebooks and the studies, so nothing is embedded twice), a corpus's here.
    lab = Lab(
        ds,
        embedder=embedder,
        unit=unit,
        index_dir=None if name in CONVERSATION_SETS else cache_dir() / f"quality-{name}",
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


def run(
    quick: bool,
    embedders: list[str],
    presets: list[str] | None = None,
    sets: list[str] | None = None,
) -> dict[str, Any]:
    """Every figure of this run, keyed ``dataset/embedder/unit`` (all presets and data sets
    by default; ``sets`` names the data sets, `datasets`)."""
    figures: dict[str, Any] = {}
    for name, ds, unit in datasets(quick, sets):
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
    p.add_argument(
        "--sets", help="comma list of data sets, e.g. locomo-dev,beam-dev (default: all found)"
    )
    args = p.parse_args()
    if args.make_datasets:
        make_datasets()
        return 0
    embedders = (args.embedders or ("hashing" if args.quick else "hashing,local")).split(",")
    presets = args.presets.split(",") if args.presets else None
    sets = [x.strip() for x in args.sets.split(",") if x.strip()] if args.sets else None
    figures = run(args.quick, embedders, presets, sets)
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
            status = 1
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
