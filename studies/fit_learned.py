"""Fit and measure the learned ranking stage on LoCoMo dev and BEAM chats 1–10.

Protocol (nothing reported was tuned on):

1. Each dev set is split BY CONVERSATION (``memlab.eval.ltr.conversation_split``:
   groups in natural order, even positions tune, odd positions report):
   LoCoMo dev conv-26/41/43 tune, conv-30/42 report; BEAM 100K odd chats
   (1, 3, 5, 7, 9) tune, even chats (2, 4, 6, 8, 10) report.
2. Every choice (feature set, regularisation C, linear vs boosted) is made by
   grouped cross-validation on the two tune halves together (4 folds, whole
   conversations per fold: ``grouped_folds``); the objective is the mean over
   the two data sets of R@5 + R@10 + nDCG@10 (turn level).
3. The chosen model is refitted on both tune halves and reported once on the
   report halves, with paired t-tests (``memlab.eval.significance``) against
   the better single leg and against ``memlab-best``.

One model for both data sets: rows are weighted so each data set counts the same.

``--write`` writes the chosen model to the data file ``memlab/stages/learned_model.json``,
which ``memlab.stages.learned.fitted_model`` reads (no source is rewritten); ``--base today``
fits on top of the current ``memlab-best`` instead, writing nothing. Uses the lab's cached
indexes and vectors (~/.cache/memlab).

Reproduce (docs/studies/learned.md; 3 min on 2 shared cores, 10 min 45 s without
``--no-gbm`` and with ``--write``):

    nice -n 10 .venv/bin/python studies/fit_learned.py --base today --no-gbm --json ltr_today.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import memlab.stages.learned as learned
from memlab.eval import ltr
from memlab.eval.significance import paired_ttest
from memlab.pipeline.presets import memlab_best, memlab_learned, preset
from memlab.stages.learned import CANDIDATE_FEATURES, QUERY_FEATURES

METRICS = ["recall@5", "recall@10", "ndcg@10"]
K_FOLDS = 4
MAX_RANK = 100  # training rows: candidates some leg ranks in its top 100
_INTER = [f"{leg}*{q}" for leg in ("vz", "tz") for q in QUERY_FEATURES]
_NB = ["pvz", "nvz", "ptz", "ntz", "pvz+", "nvz+", "ptz+", "ntz+"]
_NOPRIOR = [f for f in CANDIDATE_FEATURES if f != "prior"]
FEATURE_SETS: dict[str, list[str]] = {
    # a fixed fusion of the z-scored legs, learned
    "fusion": ["vz", "tz", "has_v", "has_t"],
    # per-query leg weights: w_v(q) = a + b·q, w_t(q) = c + d·q over query-level features
    "adaptive": ["vz", "tz", "has_v", "has_t", *_INTER],
    # + neighbour scores (learned neighbour context)
    "adaptive+nb": ["vz", "tz", "has_v", "has_t", *_INTER, *_NB],
    # every feature but memlab-best's score: legs, ranks, normalisations, neighbours,
    # length, query-level
    "full-noprior": [*_NOPRIOR, *QUERY_FEATURES, *_INTER],
    # memlab-best's score (z-sum + neighbour rule) and corrections to it
    "prior+adaptive": ["prior", "has_v", "has_t", *_INTER, *_NB, "loglen", "vrr", "trr"],
    # everything
    "full": [*CANDIDATE_FEATURES, *QUERY_FEATURES, *_INTER],
}
# (feature set, C) of the linear (pointwise logistic) and pairwise models compared by CV.
LINEAR_GRID = [
    ("fusion", 0.01),
    *[
        (f, c)
        for f in ("adaptive", "adaptive+nb", "full-noprior", "prior+adaptive", "full")
        for c in (0.001, 0.01)
    ],
]
PAIR_GRID = [("full-noprior", 0.01), ("prior+adaptive", 0.01), ("full", 0.01)]
# Coordinate ascent on the metrics themselves, from memlab-best's score (prior = 1).
CA_GRID = ["prior+adaptive", "full"]
CA_ROUNDS = 2


def load() -> dict[str, Any]:
    """The two dev sets' labs (local model, one turn per unit, cached vectors)."""
    from memlab.datasets.beam import load_beam
    from memlab.datasets.locomo import load_locomo
    from memlab.eval.lab import Lab

    out = {}
    for name, ds in (("locomo", load_locomo()), ("beam", load_beam())):
        lab = Lab(ds, embedder="local", unit="turn", progress=False, cache_vectors=True)
        q = ds.queries
        tune_g, report_g = ltr.conversation_split(q["group"].tolist())
        group_of = dict(zip(q["qid"], q["group"], strict=True))
        out[name] = {
            "lab": lab,
            "group_of": group_of,
            "tune_groups": tune_g,
            "report_groups": report_g,
            "tune": [x for x in q["qid"] if group_of[x] in tune_g],
            "report": [x for x in q["qid"] if group_of[x] in report_g],
        }
    return out


BASES = ("pinned", "today")


def learned_system(base: str, **overrides: Any) -> Any:
    """A learned system on ``base``: ``"pinned"`` = ``memlab.pipeline.presets.memlab_learned``
    (memlab-best as pinned in ``LEARNED_BASE``, the engine's), ``"today"`` = today's
    ``memlab.pipeline.presets.memlab_best`` (shape rule, window, file context) with the learned
    stage on top; ``overrides`` as for either (``learned_model=()`` gives the base alone)."""
    if base == "pinned":
        return memlab_learned(**overrides)
    if base == "today":
        from memlab.pipeline.presets import memlab_best

        return memlab_best(**{"name": "memlab-learned", **overrides})
    raise ValueError(f"base must be one of {', '.join(BASES)}, got {base!r}")


def base_pipeline(base: str = "pinned") -> Any:
    """The base system of `learned_system` with the learned stage off: its candidates,
    heading filter and score (the ``prior`` feature); the learned stage replaces that score."""
    return learned_system(base, name="ltr-base", learned_model=())


def summary(values: dict[str, np.ndarray]) -> dict[str, float]:
    """Mean of each metric over the questions with evidence (NaN dropped)."""
    return {m: round(float(np.nanmean(v)), 4) for m, v in values.items()}


def cv(data: dict[str, Any], names: list[str], fit: Any, kind: str, base: Any) -> dict[str, Any]:
    """Grouped CV on the tune halves: per data set, mean metrics over the held-out folds."""
    folds = ltr.grouped_folds([g for d in data.values() for g in d["tune_groups"]], K_FOLDS)
    groups = [g for d in data.values() for g in d["tune_groups"]]
    per: dict[str, list[dict[str, np.ndarray]]] = {n: [] for n in data}
    for train_idx, test_idx in folds:
        train_g = {groups[i] for i in train_idx}
        test_g = {groups[i] for i in test_idx}
        if kind == "ca":
            model = ltr.fit_coordinate_ascent(
                [
                    ltr.rank_data(
                        d["lc"], base, names, [q for q in d["tune"] if d["group_of"][q] in train_g]
                    )
                    for d in data.values()
                    if any(d["group_of"][q] in train_g for q in d["tune"])
                ],
                names,
                METRICS,
                rounds=CA_ROUNDS,
            )
            for dname, d in data.items():
                qids = [q for q in d["tune"] if d["group_of"][q] in test_g]
                if qids:
                    p = base.replace(name="learned", learned_model=model)
                    per[dname].append(ltr.per_query_metrics(d["lc"], p, qids, METRICS))
            continue
        parts = []
        for dname, d in data.items():
            lc = d["lc"]
            qids = [q for q in d["tune"] if d["group_of"][q] in train_g]
            if qids:
                parts.append(
                    ltr.training_rows(
                        lc,
                        base,
                        names,
                        qids,
                        group_of=d["group_of"],
                        dataset=dname,
                        max_rank=MAX_RANK,
                    )
                )
        rows = concat(parts)
        model = fit(rows)
        for dname, d in data.items():
            qids = [q for q in d["tune"] if d["group_of"][q] in test_g]
            if qids:
                per[dname].append(evaluate(d["lc"], base, names, model, kind, qids))
    out = {}
    for dname, vals in per.items():
        joined = {m: np.concatenate([v[m] for v in vals]) for m in METRICS}
        out[dname] = summary(joined)
    out["objective"] = round(float(np.mean([sum(out[n].values()) for n in data])), 4)
    return out


def concat(parts: list[ltr.Rows]) -> ltr.Rows:
    """Rows of several data sets as one."""
    return ltr.Rows(
        X=np.concatenate([p.X for p in parts]),
        y=np.concatenate([p.y for p in parts]),
        query=np.concatenate([p.query for p in parts]),
        group=np.concatenate([p.group for p in parts]),
        dataset=np.concatenate([p.dataset for p in parts]),
        names=parts[0].names,
    )


def evaluate(lc: Any, base: Any, names: list[str], model: Any, kind: str, qids: list[str]):
    """Per-query metrics of a fitted model on some questions (linear: through the engine
    stage; boosted: its probabilities ranked in the lab)."""
    if kind == "linear":
        p = base.replace(name="learned", learned_model=ltr.export_linear(model, names))
        return ltr.per_query_metrics(lc, p, qids, METRICS)
    want = set(qids)
    rows = np.array(
        [i for i, q in enumerate(lc.qids) if q in want and lc.has_evidence[i]], dtype=np.int64
    )
    sub = lc.subset(rows)
    feats, valid = ltr.query_rows(sub, base)
    qi, ci = np.nonzero(valid)
    score = np.full(valid.shape, -np.inf)
    score[qi, ci] = model.predict_proba(learned.feature_matrix(feats, names)[qi, ci])[:, 1]
    return ltr.score_metrics(sub, score, METRICS)


def systems_table(d: dict[str, Any], extra: dict[str, Any]) -> tuple[list[dict], dict]:
    """bm25, vector, wsum, memlab-best and the extra systems on the tune and report
    halves of one data set; returns the rows and the report-half per-query values."""
    lab = d["lab"]
    systems = {
        "bm25": preset("bm25"),
        "vector": preset("vector"),
        "wsum": preset("wsum"),
        "memlab-best": memlab_best(),
        **extra,
    }
    rows, report_vals = [], {}
    for name, p in systems.items():
        lc = lab.candidates_for_system(p.at_k(10))
        row: dict[str, Any] = {"system": name}
        for part in ("tune", "report"):
            vals = ltr.per_query_metrics(lc, p, d[part], METRICS)
            for m, v in summary(vals).items():
                row[f"{part} {m}"] = v
            if part == "report":
                report_vals[name] = vals
                row["n report"] = int(np.isfinite(vals[METRICS[0]]).sum())
        rows.append(row)
    return rows, report_vals


def tests(vals: dict[str, Any], system: str) -> dict[str, Any]:
    """Paired t-tests of ``system`` on the report half against the better single leg (by
    report R@10) and against memlab-best."""
    leg = max(("bm25", "vector"), key=lambda s: float(np.nanmean(vals[s]["recall@10"])))
    out: dict[str, Any] = {"better_leg": leg}
    for other in (leg, "memlab-best"):
        for m in METRICS:
            a, b = vals[system][m], vals[other][m]
            ok = np.isfinite(a) & np.isfinite(b)
            _t, p = paired_ttest(a[ok], b[ok])
            out[f"vs {other} {m}"] = {
                "delta": round(float(np.mean(a[ok] - b[ok])), 4),
                "p": float(f"{p:.3g}"),
            }
    return out


def write_model(model: tuple, chosen: str) -> Path:
    """Write ``model`` to the learned stage's data file (``learned.model_path()``), with when
    and how it was fitted."""
    return learned.save_model(
        model,
        about="The fitted model of the learned stage (memlab.stages.learned): rows [feature, "
        "mean, scale, coef], score = sum of coef * (x - mean) / scale. Written by "
        "studies/fit_learned.py --write; not edited by hand.",
        fitted=time.strftime("%Y-%m-%d"),
        command="nice -n 10 .venv/bin/python studies/fit_learned.py " + " ".join(sys.argv[1:]),
        config=chosen,
        base="memlab.pipeline.presets.LEARNED_BASE (its score is the prior feature)",
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write every table here")
    ap.add_argument(
        "--write", action="store_true", help="write the model to memlab/stages/learned_model.json"
    )
    ap.add_argument("--no-gbm", action="store_true", help="skip the boosted-trees comparison")
    ap.add_argument(
        "--config",
        help="skip the CV and refit this configuration (a key of the CV table, e.g. "
        "'pairwise prior+adaptive C=0.01'); --adaptive names the adaptive row's",
    )
    ap.add_argument("--adaptive", default="linear adaptive C=0.001")
    ap.add_argument(
        "--transfer",
        action="store_true",
        help="also fit on one data set's tune half alone and report on the other's report half",
    )
    ap.add_argument(
        "--base",
        choices=BASES,
        default="pinned",
        help="the score the model corrects: 'pinned' (memlab.pipeline.presets.LEARNED_BASE, what the "
        "packaged model learned_model.json was fitted on) or 'today' (today's memlab-best; "
        "not with --write)",
    )
    args = ap.parse_args()
    if args.write and args.base != "pinned":
        raise SystemExit(
            "--write needs --base pinned: the engine's fitted model reads "
            "memlab.pipeline.presets.LEARNED_BASE's score as its prior"
        )
    t0 = time.perf_counter()
    data = load()
    base = base_pipeline(args.base)
    for d in data.values():
        d["lc"] = d["lab"].candidates_for_system(base.at_k(10))
    out: dict[str, Any] = {
        "split": {
            n: {"tune": d["tune_groups"], "report": d["report_groups"]} for n, d in data.items()
        }
    }
    print("split:", json.dumps(out["split"]))
    out["cv"] = {}
    configs: dict[str, tuple[str, Any]] = {}
    for fname, C in LINEAR_GRID:
        configs[f"linear {fname} C={C}"] = (fname, lambda r, C=C: ltr.fit_linear(r, C))
    for fname, C in PAIR_GRID:
        configs[f"pairwise {fname} C={C}"] = (fname, lambda r, C=C: ltr.fit_pairwise(r, C))
    for fname in CA_GRID:
        configs[f"coordinate-ascent {fname}"] = (fname, "ca")
    if args.config and args.config not in configs:
        raise SystemExit(f"--config {args.config!r}: not one of {list(configs)}")
    for key, (fname, fit) in configs.items():
        if args.config:
            break
        kind = "ca" if fit == "ca" else "linear"
        out["cv"][key] = cv(data, FEATURE_SETS[fname], fit, kind, base)
        print(f"cv {key}: {out['cv'][key]}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    if not args.no_gbm and not args.config:
        key = "gbm full"
        out["cv"][key] = cv(data, FEATURE_SETS["full"], ltr.fit_gbm, "gbm", base)
        print(f"cv {key}: {out['cv'][key]}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    # Only linear models can become the engine stage; memlab-best is not refitted, so its
    # tune-half means in the tables are its figures under the same protocol.
    out["fixed_on_tune"] = {}
    for name, p in {"memlab-best": memlab_best(), "vector": preset("vector")}.items():
        per_ds = {}
        for n, d in data.items():
            lc = d["lab"].candidates_for_system(p.at_k(10))
            per_ds[n] = summary(ltr.per_query_metrics(lc, p, d["tune"], METRICS))
        per_ds["objective"] = round(float(np.mean([sum(v.values()) for v in per_ds.values()])), 4)
        out["fixed_on_tune"][name] = per_ds
    print("fixed systems on tune (same objective):", out["fixed_on_tune"])
    chosen = args.config or max(configs, key=lambda k: out["cv"][k]["objective"])
    fname, fit = configs[chosen]
    out["chosen"] = chosen
    names = FEATURE_SETS[fname]

    def refit(fset: list[str], fit: Any, only: str | None = None) -> tuple:
        use = {n: d for n, d in data.items() if only is None or n == only}
        if fit == "ca":
            rd = [ltr.rank_data(d["lc"], base, fset, d["tune"]) for d in use.values()]
            return ltr.fit_coordinate_ascent(rd, fset, METRICS, rounds=CA_ROUNDS)
        parts = [
            ltr.training_rows(
                d["lc"],
                base,
                fset,
                d["tune"],
                group_of=d["group_of"],
                dataset=n,
                max_rank=MAX_RANK,
            )
            for n, d in use.items()
        ]
        return ltr.export_linear(fit(concat(parts)), fset)

    model = refit(names, fit)
    out["model"] = [list(r) for r in model]
    # The query-adaptive fusion alone (its best C on CV), refitted the same way: an idea's row.
    best_adapt = (
        args.adaptive
        if args.config
        else max(
            (k for k in configs if configs[k][0] == "adaptive"),
            key=lambda k: out["cv"][k]["objective"],
        )
    )
    adapt = refit(FEATURE_SETS["adaptive"], configs[best_adapt][1])
    extra = {
        "learned (adaptive fusion)": base.replace(name="adaptive", learned_model=adapt),
        f"memlab-learned ({chosen})": learned_system(args.base, learned_model=model),
    }
    out["adaptive_chosen"] = best_adapt
    out["tables"], out["tests"] = {}, {}
    for n, d in data.items():
        rows, vals = systems_table(d, extra)
        out["tables"][n] = rows
        out["tests"][n] = {s: tests(vals, s) for s in extra}
        print(f"\n{n}:")
        for r in rows:
            print("  ", r)
        print("  tests:", json.dumps(out["tests"][n], indent=1))
    if args.transfer:
        # Trained on one data set's tune half alone, reported on the other's report half.
        out["transfer"] = {}
        for src in data:
            m = refit(names, fit, only=src)
            p = learned_system(args.base, name=f"fitted on {src} only", learned_model=m)
            for dst, d in data.items():
                lc = d["lab"].candidates_for_system(p.at_k(10))
                res = summary(ltr.per_query_metrics(lc, p, d["report"], METRICS))
                out["transfer"][f"{src} -> {dst} report"] = res
                print(f"transfer: fitted on {src} tune, {dst} report: {res}", flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.write:
        print(f"model written to {write_model(model, chosen)}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"done in {out['seconds']} s; chosen {chosen}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
