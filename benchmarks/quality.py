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

On a data set with the synthetic query mix (``identifier``, ``keyword``, ``dated``:
``memlab.datasets.synthetic.querymix``), each preset's figures on those categories too
(``CATEGORY_METRICS``: recall@1, mrr, recall@6), under ``"categories"`` in its entry.

``--check`` compares every figure present in ``benchmarks/baseline.json``
and exits 1 on a drop larger than the baseline's stated tolerance (per
embedder), and applies the query-mix guard (``compare_categories``): on
``GUARDED_CATEGORIES`` a preset at or above ``bm25`` at pin time must not fall below
``bm25`` now, and ``bm25``'s own figure must not drop. ``--update-baseline REASON``
rewrites the baseline with this run's figures and the reason — a deliberate change,
reviewed like code.
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
    provenance,
    report,
)
from memlab.config.vocab import SYNTH_DEFAULT_MIX

METRICS = ("recall@6", "recall@10", "ndcg@10", "mrr")
BASELINE = REPO / "benchmarks" / "baseline.json"
# A drop beyond this (absolute, on a mean over queries) fails the check. The hashing
# embedder is deterministic, so any real change of a ranking shows; one query of the
# smallest corpus moves recall by ~1/60. The local model runs torch on the CPU, whose
# float results may differ across machines in the last bits (a near-tie can flip).
TOLERANCE = {"hashing": 0.005, "local": 0.02}
QUICK_DATASETS = ("synthetic-small",)
# The synthetic query mix: categories whose figures are pinned per preset, and
# the metrics pinned for them (recall@1: the identifier at rank 1; mrr; OpenClaw's recall@6).
MIX_CATEGORIES = ("identifier", "keyword", "dated")
CATEGORY_METRICS = ("recall@1", "mrr", "recall@6")
# The guard's rule on these categories and metrics: a preset that was at or above the
# reference at pin time must stay at or above it (within the embedder's tolerance). A
# preset below it at pin time is reported, not guarded, until a re-pin finds it there.
GUARDED_CATEGORIES = ("identifier",)
GUARD_METRICS = ("recall@1", "mrr")
REFERENCE = "bm25"
# Read from outside the repository when found (`conversation_sets`), at both units. Each
# also as its small configuration (``-small``: `memlab.eval.protocol.small_groups`, one
# tuning and one reporting conversation), which the test suite guards: the same presets,
# metrics and tolerance on the groups a notebook at small size also reads, so CI embeds
# them once; the whole sets are checked with ``--sets locomo-dev,beam-dev --check``.
FULL_CONVERSATION_SETS = ("locomo-dev", "beam-dev")
SMALL_SUFFIX = "-small"
SMALL_CONVERSATION_SETS = tuple(n + SMALL_SUFFIX for n in FULL_CONVERSATION_SETS)
CONVERSATION_SETS = FULL_CONVERSATION_SETS + SMALL_CONVERSATION_SETS
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
    sets, read from outside the repository: each whole (``FULL_CONVERSATION_SETS``), then
    each at its small configuration (``SMALL_CONVERSATION_SETS``)."""
    from memlab.datasets.beam import beam_default_path, load_beam
    from memlab.datasets.locomo import load_locomo, locomo_default_path
    from memlab.eval.protocol import small_groups

    def small(load: Any) -> Any:
        def load_small(path: Any) -> Any:
            ds = load(path)
            return ds.select_groups(small_groups(ds))

        return load_small

    found = {
        "locomo-dev": (locomo_default_path(), load_locomo, "MEMLAB_LOCOMO"),
        "beam-dev": (beam_default_path(), load_beam, "MEMLAB_BEAM"),
    }
    for name in FULL_CONVERSATION_SETS:
        src, load, env = found[name]
        found[name + SMALL_SUFFIX] = (src, small(load), env)
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
    # By default every set but the small configurations (the same data as the whole sets).
    wanted = (
        (lambda n: n in only) if only is not None else (lambda n: n not in SMALL_CONVERSATION_SETS)
    )
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
    name: str,
    ds: Any,
    unit: str,
    embedder: str,
    presets: list[str] | None = None,
    every_category: bool = False,
) -> dict[str, dict[str, Any]]:
    """Mean of each metric per preset: {preset: {metric: value, "n": queries}}; where the
    data set has ``MIX_CATEGORIES`` questions, also ``"categories"``: {category: {metric of
    ``CATEGORY_METRICS``: mean, "n": its questions}} — of every category of the data set
    with ``every_category`` (``--categories all``)."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import PRESETS, preset

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
    present = list(dict.fromkeys(str(c) for c in ds.queries["category"] if str(c)))
    cats = present if every_category else [c for c in MIX_CATEGORIES if c in present]
    metrics = list(dict.fromkeys([*METRICS, *(CATEGORY_METRICS if cats else ())]))
    res = run_experiment([preset(p) for p in names], lab, metrics, baseline=None)
    out: dict[str, dict[str, Any]] = {}
    for p in names:
        row = res.table.loc[p]
        out[p] = {m: round(float(row[m]), 6) for m in METRICS}
        out[p]["n"] = int(row["n"])
    if cats:
        for p, by_cat in category_figures(res.per_query, cats).items():
            out[p]["categories"] = by_cat
    return out


def category_figures(per_query: Any, categories: list[str]) -> dict[str, dict[str, Any]]:
    """{system: {category: {metric: mean, "n": scored questions}}} for ``categories`` and
    ``CATEGORY_METRICS`` from an experiment's ``per_query`` frame (system, qid, category,
    metric, value); a category with no scored question is left out."""
    d = per_query[
        per_query["category"].isin(categories) & per_query["metric"].isin(CATEGORY_METRICS)
    ]
    out: dict[str, dict[str, Any]] = {}
    for (system, cat), g in d.groupby(["system", "category"], sort=False):
        means = g.groupby("metric")["value"].mean()
        fig: dict[str, Any] = {m: round(float(means[m]), 6) for m in CATEGORY_METRICS}
        fig["n"] = int(g["qid"].nunique())
        out.setdefault(str(system), {})[str(cat)] = fig
    return {s: {c: v[c] for c in categories if c in v} for s, v in out.items()}


def run(
    quick: bool,
    embedders: list[str],
    presets: list[str] | None = None,
    sets: list[str] | None = None,
    every_category: bool = False,
) -> dict[str, Any]:
    """Every figure of this run, keyed ``dataset/embedder/unit`` (all presets and data sets
    by default; ``sets`` names the data sets, `datasets`)."""
    figures: dict[str, Any] = {}
    for name, ds, unit in datasets(quick, sets):
        for emb in embedders:
            key = f"{name}/{emb}/{unit}"
            log(f"quality {key}")
            figures[key] = evaluate(name, ds, unit, emb, presets, every_category)
    return figures


def moved(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Every figure of ``new`` that differs (beyond 1e-9) from the same figure of ``old``
    (two runs' ``figures``): data set, preset, category (``"(all)"`` for the overall
    metrics), metric, before, after, change. What ``--diff OLD.json`` prints."""
    rows = []
    for key, systems in new.items():
        for p, vals in systems.items():
            before = old.get(key, {}).get(p)
            if before is None:
                continue
            pairs = [("(all)", m, before.get(m), vals.get(m)) for m in METRICS]
            for cat, fig in vals.get("categories", {}).items():
                was = before.get("categories", {}).get(cat, {})
                pairs += [(cat, m, was.get(m), fig.get(m)) for m in CATEGORY_METRICS]
            for cat, m, b, v in pairs:
                if b is not None and v is not None and abs(v - b) > 1e-9:
                    rows.append(
                        {
                            "data": key,
                            "preset": p,
                            "category": cat,
                            "metric": m,
                            "before": b,
                            "after": v,
                            "change": round(v - b, 6),
                        }
                    )
    return rows


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


def compare_categories(figures: dict[str, Any], baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """The query-mix guard: rows for every ``GUARDED_CATEGORIES`` × ``GUARD_METRICS``
    figure of a data set both runs hold, per preset.

    ``REFERENCE`` (bm25, which reads no embedding) fails when its own figure drops beyond
    the embedder's tolerance (``rule = "no drop"``). Any other preset is ``guarded`` when
    its pinned figure was at or above the reference's pinned figure; it then fails when
    its figure now is below the reference's figure now by more than the tolerance
    (``rule = "not below bm25"``). A preset below the reference at pin time, or absent
    from the baseline, is listed unguarded (``rule = "below bm25 at pin time"``, never
    fails): re-pin once a fix lifts it, and from then on it is held there.
    """
    tol = baseline.get("tolerance", TOLERANCE)
    rows = []
    for key, systems in figures.items():
        base = baseline.get("figures", {}).get(key)
        if not base or REFERENCE not in systems or REFERENCE not in base:
            continue
        emb = key.split("/")[1]
        ref_now = systems[REFERENCE].get("categories", {})
        ref_base = base[REFERENCE].get("categories", {})
        for cat in GUARDED_CATEGORIES:
            if cat not in ref_now or cat not in ref_base:
                continue
            for m in GUARD_METRICS:
                r0, r1 = ref_base[cat][m], ref_now[cat][m]
                for p, vals in systems.items():
                    now = vals.get("categories", {}).get(cat)
                    if now is None:
                        continue
                    pinned = base.get(p, {}).get("categories", {}).get(cat)
                    b = pinned[m] if pinned else None
                    if p == REFERENCE:
                        rule, guarded, fails = "no drop", True, r1 < r0 - tol[emb]
                    else:
                        guarded = b is not None and b >= r0 - 1e-9
                        rule = "not below bm25" if guarded else "below bm25 at pin time"
                        fails = guarded and now[m] < r1 - tol[emb]
                    rows.append(
                        {
                            "data": key,
                            "preset": p,
                            "category": cat,
                            "metric": m,
                            "baseline": b,
                            "now": now[m],
                            "bm25 baseline": r0,
                            "bm25 now": r1,
                            "rule": rule,
                            "guarded": guarded,
                            "fails": bool(fails),
                        }
                    )
    return rows


def category_rows(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """One printable row per data set, preset and query-mix category: ``CATEGORY_METRICS``
    and the number of questions (data sets without those categories give none)."""
    rows = []
    for key, systems in figures.items():
        for cat in MIX_CATEGORIES:
            for name, vals in systems.items():
                fig = vals.get("categories", {}).get(cat)
                if fig:
                    rows.append(
                        {
                            "data": key,
                            "category": cat,
                            "preset": name,
                            **{m: fig[m] for m in CATEGORY_METRICS},
                            "n": fig["n"],
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
    p.add_argument(
        "--categories",
        choices=("mix", "all"),
        default="mix",
        help="per-category figures of the query mix (default) or of every category",
    )
    p.add_argument(
        "--diff",
        metavar="OLD_JSON",
        help="print every figure that moved from an earlier run's --json (before → after)",
    )
    args = p.parse_args()
    if args.make_datasets:
        make_datasets()
        return 0
    embedders = (args.embedders or ("hashing" if args.quick else "hashing,local")).split(",")
    presets = args.presets.split(",") if args.presets else None
    sets = [x.strip() for x in args.sets.split(",") if x.strip()] if args.sets else None
    figures = run(args.quick, embedders, presets, sets, args.categories == "all")
    rows = []
    for key, systems in figures.items():
        for name, vals in systems.items():
            rows.append(
                {"data": key, "preset": name, **{m: vals[m] for m in METRICS}, "n": vals["n"]}
            )
    print_table(rows)
    mix = category_rows(figures)
    if mix:
        print(f"\nthe synthetic query mix ({', '.join(MIX_CATEGORIES)}), by category:")
        print_table(mix)
    status = 0
    result: dict[str, Any] = {"figures": figures}
    if args.diff:
        old_figs = json.loads(Path(args.diff).read_text())["results"]["figures"]
        diff = moved(old_figs, figures)
        print(f"\n{len(diff)} figures moved from {args.diff}:")
        if diff:
            print_table(diff)
        result["moved"] = diff
    if args.check:
        baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
        cmp = compare(figures, baseline)
        guard = compare_categories(figures, baseline)
        fails = [r for r in cmp if r["fails"]]
        guard_fails = [r for r in guard if r["fails"]]
        result["check"] = {
            "compared": len(cmp),
            "failed": fails,
            "category_compared": len(guard),
            "category_failed": guard_fails,
        }
        if guard:
            what = f"{', '.join(GUARDED_CATEGORIES)}: {', '.join(GUARD_METRICS)}"
            per: dict[str, list[int]] = {}
            for r in guard:
                per.setdefault(r["preset"], [0, 0])[0] += not r["guarded"]
                per[r["preset"]][1] += 1
            unguarded = [f"{p} {n}/{t}" for p, (n, t) in sorted(per.items()) if n]
            below = f"; below {REFERENCE} at pin time, not guarded: {', '.join(unguarded)}"
            if guard_fails:
                print(
                    f"\nQUERY-MIX REGRESSION ({what}): {len(guard_fails)} of {len(guard)}"
                    f" figures fell below {REFERENCE} (or {REFERENCE} dropped)"
                )
                print_table(guard_fails)
                status = 1
            else:
                print(
                    f"\nquery-mix guard passed ({what}): {len(guard)} figures"
                    + (below if unguarded else "")
                )
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
            "`python benchmarks/quality.py --check` fail on a drop beyond the tolerance, "
            "and on the synthetic query mix when a preset pinned at or above bm25 on "
            "the identifier category falls below it (compare_categories). "
            "Change only with `--update-baseline REASON`, reviewed like code.",
            "tolerance": TOLERANCE,
            "metrics": list(METRICS),
            "category_metrics": list(CATEGORY_METRICS),
            "reason": args.update_baseline,
            "history": [*old.get("history", []), args.update_baseline],
            **provenance(),
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
