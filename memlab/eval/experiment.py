"""Experiments: several systems on one dataset, per-query metrics, paired tests.

``Experiment(systems, lab, metrics, baseline=, correction=)`` runs every system
on shared candidates (one retrieval per configuration), scores it against the
evidence spans, and returns a PyTerrier-style table: one row per system with
metric means, and — against the baseline — paired-test p-values (Holm by
default) and win/tie/loss counts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab import __version__
from memlab.eval.metrics import exact_mean, parse_metric
from memlab.eval.significance import compare_to_baseline
from memlab.stages import REORDERING_STAGES
from memlab.stages.floor import threshold_text
from memlab.vocab import SINGLE_LEG_FUSIONS

if TYPE_CHECKING:
    from memlab.eval.lab import Lab, LabCandidates
    from memlab.pipeline import Pipeline

DEFAULT_METRICS = ("recall@6", "ndcg@10", "mrr")


def metric_depth(metrics: Sequence[str]) -> int:
    """The deepest rank any metric reads (k of ``x@k``; 10 for ``mrr`` without k;
    budget metrics read up to 50 results)."""
    depth = 1
    for m in metrics:
        spec = parse_metric(m)
        depth = max(depth, 50 if spec.kind == "budget_recall" else (spec.k or 10))
    return depth


def system_settings(p: Pipeline) -> dict[str, Any]:
    """The candidate generation and fusion of a system, as a results table shows them.

    ``keyword_mode``: ``and``/``or`` when the keyword leg runs, None when it is off;
    ``depth``: candidates per leg, min(max_candidates, floor(max_results ×
    candidate_multiplier)); ``fusion``: the fusion method when both legs run, else
    the single leg (``vector``/``keyword``); ``weights``: the (vector, text) weights
    the fusion applies — for ``wsum`` clamped to [0, 1] and renormalised to sum 1
    (``Pipeline.effective_weights``), for ``rrf`` and ``comb*`` as given (they are
    not renormalised), None for a single leg; ``min_score``: the threshold;
    ``best_line``: the line system a chunk system ranks its chunks by (None when off; the
    fusion then only breaks ties, ``memlab.stages.best_line``).
    """
    both = bool(p.keyword and p.vector)
    fusion = p.fusion if both else ("vector" if p.vector else "keyword")
    weights = None if fusion in SINGLE_LEG_FUSIONS else p.effective_weights()
    return {
        "keyword_mode": p.keyword_mode if p.keyword else None,
        "depth": int(p.depth),
        "fusion": fusion,
        "weights": None if weights is None else [round(w, 6) for w in weights],
        "min_score": float(p.min_score),
        "best_line": p.best_line or None,
    }


def _settings_cells(p: Pipeline) -> dict[str, str]:
    st = system_settings(p)
    w = st["weights"]
    return {
        "kw": st["keyword_mode"] or "-",
        "depth": str(st["depth"]),
        "fusion": st["fusion"] + ("+line" if st["best_line"] else ""),
        "weights": "-" if w is None else f"{w[0]:.2f}/{w[1]:.2f}",
        "min": threshold_text(p),  # "none" when it removes nothing: one rule
    }


def _identical_rankings(rankings: dict[str, tuple[list[str], np.ndarray]]) -> list[list[str]]:
    """Groups of systems (in input order, 2 or more each) whose results are the same chunks
    in the same order on every scored question: {name: (scored qids, chunk ids [Q, K])}."""
    groups: dict[Any, list[str]] = {}
    for name, (qids, docs) in rankings.items():
        key = (tuple(qids), docs.shape, tuple(map(tuple, docs.tolist())))
        groups.setdefault(key, []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def _as_systems(systems: Sequence[Pipeline] | Mapping[str, Pipeline]) -> list[Pipeline]:
    if isinstance(systems, Mapping):
        out = [p.replace(name=name) for name, p in systems.items()]
    else:
        out = list(systems)
    names = [p.name for p in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"system names must be unique; repeated: {dup} (use .replace(name=...))")
    if not out:
        raise ValueError("an experiment needs at least one system")
    return out


@dataclass
class ExperimentResult:
    """What an experiment measured.

    ``table``: one row per system (index ``system``): ``n`` scored queries,
    each metric's mean, and for non-baseline systems per metric ``p``,
    ``p_adj``, ``sig`` (p_adj ≤ alpha; ``+``/``−`` by the sign of the
    difference) and ``wins/ties/losses``. ``per_query``: long DataFrame
    ``system, qid, category, metric, value``. ``runs``: the ranked results of
    every system (``Pipeline.run`` columns) when kept.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    systems: list[Pipeline]
    metrics: list[str]
    baseline: str | None
    info: dict[str, Any] = field(default_factory=dict)
    runs: pd.DataFrame | None = None

    def means(self) -> pd.DataFrame:
        """Metric means only, systems × metrics."""
        return self.table[self.metrics]

    def by_category(self, metric: str | None = None) -> pd.DataFrame:
        """Mean of a metric per question category (rows) and system (columns)."""
        m = metric or self.metrics[0]
        d = self.per_query[self.per_query["metric"] == m]
        return d.pivot_table(index="category", columns="system", values="value", aggfunc="mean")[
            [s.name for s in self.systems]
        ]

    def wide(self, metric: str) -> pd.DataFrame:
        """Per-query values of one metric: index qid, one column per system."""
        d = self.per_query[self.per_query["metric"] == metric]
        return d.pivot(index="qid", columns="system", values="value")[
            [s.name for s in self.systems]
        ]

    def same_ranking_as(self) -> dict[str, str]:
        """{system: the earlier system whose results it repeats on every scored question}
        (from ``info["identical_rankings"]``; empty when every system ranks differently)."""
        groups = self.info.get("identical_rankings", [])
        return {name: group[0] for group in groups for name in group[1:]}

    def format(self, digits: int = 3, *, settings: bool = True) -> str:
        """A plain-text table: per system its metric means, ``+``/``-`` where it differs
        from the baseline with p_adj ≤ alpha, and ``= X: same ranking`` where its results
        are exactly system X's on every scored question (one system under two names).

        ``settings`` adds what makes systems comparable: keyword query mode (``and``,
        ``or``, ``-`` = no keyword leg), depth (candidates per leg), fusion, the
        effective (vector/text) weights (``system_settings``) and min_score.
        """
        same_as = self.same_ranking_as()
        rows = []
        for s in self.systems:
            r = self.table.loc[s.name]
            cells = {"system": s.name}
            if settings:
                cells.update(_settings_cells(s))
            cells["n"] = int(r["n"])
            for m in self.metrics:
                mark = ""
                if self.baseline and s.name != self.baseline and bool(r.get(f"{m} sig", False)):
                    mark = "+" if r[m] > self.table.loc[self.baseline, m] else "-"
                cells[m] = f"{r[m]:.{digits}f}{mark}"
            cells["note"] = f"= {same_as[s.name]}: same ranking" if s.name in same_as else ""
            rows.append(cells)
        extra = ["kw", "depth", "fusion", "weights", "min"] if settings else []
        cols = ["system", *extra, "n", *self.metrics] + (["note"] if same_as else [])
        widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        out = [
            "  ".join(c.ljust(widths[c]) for c in cols),
            "  ".join("-" * widths[c] for c in cols),
        ]
        out += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols) for r in rows]
        if self.baseline:
            a = self.info.get("alpha", 0.01)
            corr = self.info.get("correction")
            out.append(
                f"+/- : differs from {self.baseline} with p_adj <= {a} "
                f"({self.info.get('test')}, {corr or 'no'} correction)"
            )
        if settings:
            out.append(
                "kw: keyword query (and/or; - = no keyword leg); depth: candidates per leg; "
                "weights: vector/text as the fusion applies them; min: min_score (none: below every"
                " score the system gives)"
            )
            lined = sorted({s.best_line for s in self.systems if s.best_line})
            if lined:
                novel = [s.name for s in self.systems if "novel_lines" in s.active_stages()]
                out.append(
                    f"+line: chunks ranked by their best line under {', '.join(lined)} "
                    "(memlab.stages.best_line); the fusion and weights only break ties"
                    + (
                        f"; {', '.join(novel)}: placed by new lines (the next chunk holds "
                        "the best line none above holds, best_line_order=novel)"
                        if novel
                        else ""
                    )
                )
        if same_as:
            out.append(
                "= X: the same chunks in the same order as X on every scored question "
                "(one system under two names; compare it once)"
            )
        return "\n".join(out)

    def to_json(self) -> list[dict[str, Any]]:
        """One object per system: name, settings (every parameter), ``candidates``
        (``system_settings``: keyword mode, depth, fusion, effective weights, min_score),
        ``same_ranking_as`` (the earlier system it ranks identically to, or None),
        metric values, n queries (+ tests)."""
        same_as = self.same_ranking_as()
        out = []
        for s in self.systems:
            r = self.table.loc[s.name]
            item: dict[str, Any] = {
                "name": s.name,
                "settings": s.get_params(),
                "candidates": system_settings(s),
                "same_ranking_as": same_as.get(s.name),
                "n_queries": int(r["n"]),
                "metrics": {m: float(r[m]) for m in self.metrics},
            }
            if self.baseline and s.name != self.baseline:
                item["vs_baseline"] = {
                    m: {
                        "p": _f(r.get(f"{m} p")),
                        "p_adj": _f(r.get(f"{m} p_adj")),
                        "significant": bool(r.get(f"{m} sig", False)),
                        "wins": int(r.get(f"{m} wins", 0)),
                        "ties": int(r.get(f"{m} ties", 0)),
                        "losses": int(r.get(f"{m} losses", 0)),
                    }
                    for m in self.metrics
                }
            out.append(item)
        return out

    def save(self, folder: str | Path) -> Path:
        """Write ``experiment.json`` (config, memlab version, data fingerprint, table),
        ``per_query.csv`` and, when runs were kept, ``runs.trec`` (TREC run format)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"memlab_version": __version__, **self.info, "systems": self.to_json()}
        (folder / "experiment.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        self.per_query.to_csv(folder / "per_query.csv", index=False)
        if self.runs is not None:
            by_rank = {s.name for s in self.systems if REORDERING_STAGES & set(s.active_stages())}
            write_trec_run(self.runs, folder / "runs.trec", rank_scored=by_rank)
        return folder


def _f(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def write_trec_run(
    runs: pd.DataFrame, path: str | Path, *, rank_scored: Collection[str] = ()
) -> None:
    """TREC run format: ``qid Q0 docno rank score system`` (rank 1-based).

    Tools that read a run (trec_eval, ranx) sort each query's list by its score column. A
    system in ``rank_scored`` re-orders its list after scoring (MMR, ``best_line_order=
    "novel"``), so its own scores need not fall down the list and would be re-sorted:
    for it the score written is 1 / rank, which keeps memlab's order."""
    with Path(path).open("w") as fh:
        for r in runs.itertuples(index=False):
            rank = int(r.rank) + 1
            score = 1.0 / rank if r.system in rank_scored else float(r.score)
            fh.write(f"{r.qid} Q0 {r.docno} {rank} {score:.6f} {r.system}\n")


def run_experiment(
    systems: Sequence[Pipeline] | Mapping[str, Pipeline],
    lab: Lab,
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    baseline: str | None = None,
    test: str = "ttest",
    correction: str | None = "holm",
    alpha: float = 0.01,
    pinned: bool | Sequence[str] = False,
    queries: Sequence[str] | None = None,
    keep_runs: bool = False,
) -> ExperimentResult:
    """Run systems on a lab's dataset and compare them (see ``ExperimentResult``).

    Scoring at k asks each system for at least k results (``Pipeline.at_k``:
    max_results and the candidate depth raised to the deepest metric), unless
    the system is ``pinned`` (True for all, or a list of names) — then its own
    max_results/min_score decide, and the recall cost of its threshold shows.
    minScore always applies as each system configures it. ``queries``
    restricts scoring to some qids (e.g. a held-out split). Queries without
    evidence are excluded from every mean and test. A lab at ``level="file"`` scores
    files (a file's rank = its best unit's; ``LabCandidates.rank``): each system then
    ranks every candidate it scores at its depth for k, and its units are reduced to
    files.

    Systems whose results are the same chunks in the same order on every scored
    question are recorded in ``info["identical_rankings"]`` (groups of names, first
    = the one the others are marked against) and marked by ``format()``: two rows
    that are one system must not read as two findings.
    """
    systems = _as_systems(systems)
    metrics = list(metrics)
    for m in metrics:
        parse_metric(m)
    if baseline is not None and baseline not in {s.name for s in systems}:
        raise ValueError(
            f"baseline {baseline!r} is not one of the systems {[s.name for s in systems]}"
        )
    k = metric_depth(metrics)
    pin = set(s.name for s in systems) if pinned is True else set(pinned or ())
    run_systems = [s if s.name in pin else s.at_k(k) for s in systems]
    t0 = time.perf_counter()
    cands = lab.candidates_for(run_systems)
    t_cand = time.perf_counter() - t0
    rows = None
    if queries is not None:
        wanted = set(map(str, queries))
        first = next(iter(cands.values()))
        rows = np.array([i for i, q in enumerate(first.qids) if q in wanted], dtype=np.int64)
        if rows.size == 0:
            raise ValueError("none of the requested queries is in the dataset")
    frames = []
    run_frames = []
    results_of: dict[str, tuple[list[str], np.ndarray]] = {}
    for s in run_systems:
        lc: LabCandidates = cands[s.name]
        if rows is not None:
            lc = lc.subset(rows)
        ranking = lc.rank(s)  # at file level: every candidate, then reduced to files
        values = lc.score(s, metrics, ranking=ranking)
        keep = lc.has_evidence
        cols = ranking.columns[keep]
        pos = np.take_along_axis(lc.cs.pos[keep], np.maximum(cols, 0), axis=1)
        # Chunk ids, not candidate columns: systems on different candidate sets (e.g. AND
        # and OR keyword queries) can still return the same chunks.
        docs = np.where(cols >= 0, lc.cs.table.ids[pos] if pos.size else pos, "")
        results_of[s.name] = (list(np.asarray(lc.qids, dtype=object)[keep]), docs.astype(str))
        for m in metrics:
            frames.append(
                pd.DataFrame(
                    {
                        "system": s.name,
                        "qid": np.asarray(lc.qids, dtype=object)[keep],
                        "category": lc.categories[keep],
                        "metric": m,
                        "value": values[m][keep],
                    }
                )
            )
        if keep_runs:
            from memlab.pipeline import ranking_frame

            run_frames.append(ranking_frame(lc.cs, ranking, s.name))
    per_query = pd.concat(frames, ignore_index=True)
    table = _summary(
        per_query, [s.name for s in systems], metrics, baseline, test, correction, alpha
    )
    info = {
        "dataset": lab.dataset.name,
        "dataset_fingerprint": lab.dataset.fingerprint,
        "embedder": lab.embedder.model if lab.embedder is not None else "fts-only",
        "chunker": lab.chunker.fingerprint(),
        "metrics": metrics,
        "baseline": baseline,
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "scored_at_k": k,
        "level": getattr(lab, "level", "unit"),
        "pinned": sorted(pin),
        "identical_rankings": _identical_rankings(results_of),
        "candidate_seconds": t_cand,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return ExperimentResult(
        table=table,
        per_query=per_query,
        systems=run_systems,
        metrics=metrics,
        baseline=baseline,
        info=info,
        runs=pd.concat(run_frames, ignore_index=True) if run_frames else None,
    )


def _summary(
    per_query: pd.DataFrame,
    names: list[str],
    metrics: list[str],
    baseline: str | None,
    test: str,
    correction: str | None,
    alpha: float,
) -> pd.DataFrame:
    # exact_mean, as the sweeps: one system scored here or in a sweep gives one number.
    means = per_query.groupby(["system", "metric"], sort=False)["value"].agg(exact_mean).unstack()
    counts = per_query[per_query["metric"] == metrics[0]].groupby("system")["qid"].count()
    table = means.reindex(index=names, columns=metrics)
    table.insert(0, "n", counts.reindex(names).to_numpy())
    table.index.name = "system"
    if baseline is None or len(names) < 2:
        return table
    for m in metrics:
        wide = per_query[per_query["metric"] == m].pivot(
            index="qid", columns="system", values="value"
        )
        cmp = compare_to_baseline(
            wide[names], baseline, test=test, correction=correction, alpha=alpha
        )
        for col, src in (("p", "p"), ("p_adj", "p_adj"), ("sig", "significant")):
            table[f"{m} {col}"] = cmp[src].reindex(names)
        for col in ("wins", "ties", "losses"):
            table[f"{m} {col}"] = cmp[col].reindex(names)
    return table


Experiment = run_experiment
