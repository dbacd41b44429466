"""Experiments: several systems on one dataset, per-query metrics, paired tests.

``Experiment(systems, lab, metrics, baseline=, correction=)`` runs every system
on shared candidates (one retrieval per configuration), scores it against the
evidence spans, and returns a PyTerrier-style table: one row per system with
metric means, and — against the baseline — paired-test p-values (Holm by
default) and win/tie/loss counts. ``external_runs`` adds other systems' ranked results
(TREC run files, ``memlab.eval.trec``) as rows scored the same way; with ``keep_runs``,
``save`` writes runs, qrels and unit table in TREC form beside memlab's own files.

Size: one module because ``run_experiment`` fills ``ExperimentResult``, whose
``format``, ``to_json`` and ``save`` read back the columns ``summary_table`` writes
(``{metric} p_adj``, ``sig``, ``wins``, ``low``/``high``; ``memlab.eval.summary``); external runs (``_external_system``,
``_run_units``) are scored in that same loop.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab import __version__
from memlab.config.vocab import SINGLE_LEG_FUSIONS
from memlab.eval.depth import identical_rankings, metric_depth, top_files
from memlab.eval.judged import (
    judged_at_k,
    judged_columns,
    judged_means,
    judged_name,
    top_spans,
)
from memlab.eval.metrics import parse_metric
from memlab.eval.summary import ci_cell, summary_table
from memlab.eval.trec import (
    qrels_for,
    qrels_stats,
    trec_readme,
    unit_ids,
    unit_table,
    write_docs,
    write_qrels,
    write_trec_run,
)
from memlab.eval.trecrun import ExternalRun, map_run, read_trec_run, score_mapped_run
from memlab.stages import REORDERING_STAGES
from memlab.stages.floor import threshold_text

if TYPE_CHECKING:
    from memlab.eval.lab import Lab, LabCandidates
    from memlab.pipeline import Pipeline

DEFAULT_METRICS = ("recall@6", "ndcg@10", "mrr")


# The files `ExperimentResult.save` (and `memlab eval --evidence-ranks --save`) writes into a
# folder: what `memlab eval --save DIR --overwrite` removes before writing again.
EXPERIMENT_FILES = (
    "experiment.json",
    "per_query.csv",
    "runs.trec",
    "qrels.trec",
    "docs.tsv",
    "README.md",
    "evidence_ranks.csv",
)


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


def _settings_cells(p: Pipeline | ExternalRun) -> dict[str, str]:
    if isinstance(p, ExternalRun):
        return {"kw": "-", "depth": "-", "fusion": "run", "weights": "-", "min": "-"}
    st = system_settings(p)
    w = st["weights"]
    return {
        "kw": st["keyword_mode"] or "-",
        "depth": str(st["depth"]),
        "fusion": st["fusion"] + ("+line" if st["best_line"] else ""),
        "weights": "-" if w is None else f"{w[0]:.2f}/{w[1]:.2f}",
        "min": threshold_text(p),  # "none" when it removes nothing: one rule
    }


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
    ``system, qid, category, metric, value``. ``systems``: the pipelines as run, then
    the external runs (``memlab.eval.trec.ExternalRun``). ``runs``: the ranked results
    of every system (``Pipeline.run`` columns, plus ``group`` and ``unit``, the TREC
    document id) when kept; ``units`` (``memlab.eval.trec.unit_table``) and ``qrels``
    (``qid, docno, grade``) then hold what ``save`` writes as ``docs.tsv`` and
    ``qrels.trec``.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    systems: list[Pipeline | ExternalRun]
    metrics: list[str]
    baseline: str | None
    info: dict[str, Any] = field(default_factory=dict)
    runs: pd.DataFrame | None = None
    units: pd.DataFrame | None = None
    qrels: pd.DataFrame | None = None

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
        judged = judged_columns(self.table)
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
                cells[m] = f"{r[m]:.{digits}f}{mark}" + ci_cell(r, m)
            cells.update({c: f"{r[c]:.2f}" for c in judged})
            cells["note"] = f"= {same_as[s.name]}: same ranking" if s.name in same_as else ""
            rows.append(cells)
        extra = ["kw", "depth", "fusion", "weights", "min"] if settings else []
        cols = ["system", *extra, "n", *self.metrics, *judged] + (["note"] if same_as else [])
        widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        out = [
            "  ".join(c.ljust(widths[c]) for c in cols),
            "  ".join("-" * widths[c] for c in cols),
        ]
        out += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols) for r in rows]
        out.append("[low, high]: 95 % bootstrap CI of the mean over the n questions")
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
            pipes = [s for s in self.systems if not isinstance(s, ExternalRun)]
            lined = sorted({s.best_line for s in pipes if s.best_line})
            if lined:
                novel = [s.name for s in pipes if "novel_lines" in s.active_stages()]
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
                "= X: the same chunks in the same order as X, as deep as the metrics read, on"
                " every scored question (one system under two names; compare it once)"
            )
        ext = [s.name for s in self.systems if isinstance(s, ExternalRun)]
        if ext and settings:
            out.append(f"run: {', '.join(ext)} read from a TREC run file (--run), not run here")
        return "\n".join(out)

    def to_json(self) -> list[dict[str, Any]]:
        """One object per system: name, settings (every parameter), ``candidates``
        (``system_settings``: keyword mode, depth, fusion, effective weights, min_score),
        ``same_ranking_as`` (the earlier system it ranks identically to, or None),
        metric values with their 95 % bootstrap CIs (``ci95``), judged@k on partial labels, n
        queries (+ tests)."""
        same_as = self.same_ranking_as()
        out = []
        for s in self.systems:
            r = self.table.loc[s.name]
            external = isinstance(s, ExternalRun)
            item: dict[str, Any] = {
                "name": s.name,
                "settings": s.describe() if external else s.get_params(),
                "candidates": None if external else system_settings(s),
                "same_ranking_as": same_as.get(s.name),
                "n_queries": int(r["n"]),
                "metrics": {m: float(r[m]) for m in self.metrics},
                "ci95": {m: [_f(r.get(f"{m} low")), _f(r.get(f"{m} high"))] for m in self.metrics},
            }
            item.update({c: _f(r[c]) for c in judged_columns(self.table)})
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
        """Write ``experiment.json`` (config, memlab version, data fingerprint, table) and
        ``per_query.csv``; when runs were kept, the TREC files too: ``runs.trec`` (unit ids
        as document ids, `memlab.eval.trec.write_trec_run`), ``qrels.trec``, ``docs.tsv``
        (id → group, path, lines) and a ``README.md`` saying which of memlab's figures a
        document-level tool (trec_eval, ir_measures) reproduces from them."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        info = dict(self.info)
        if self.runs is not None:
            by_rank = {
                s.name
                for s in self.systems
                if not isinstance(s, ExternalRun) and REORDERING_STAGES & set(s.active_stages())
            }
            written = write_trec_run(self.runs, folder / "runs.trec", rank_scored=by_rank)
            info["trec"] = {**info.get("trec", {}), "rank_scored": written}
            if self.qrels is not None:
                write_qrels(self.qrels, folder / "qrels.trec")
            if self.units is not None:
                write_docs(self.units, folder / "docs.tsv")
            readme = trec_readme({"memlab_version": __version__, **info})
            (folder / "README.md").write_text(readme, encoding="utf-8")
        meta = {"memlab_version": __version__, **info, "systems": self.to_json()}
        (folder / "experiment.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        self.per_query.to_csv(folder / "per_query.csv", index=False)
        return folder


def _f(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def _external_runs(
    runs: Mapping[str, str | Path | pd.DataFrame] | None, taken: set[str]
) -> list[tuple[str, str, pd.DataFrame]]:
    """(name, source, frame ``qid, docno, score``) of each external run, names checked."""
    out = []
    for name, src in (runs or {}).items():
        if name in taken:
            raise ValueError(f"external run name {name!r} is already a system's name")
        taken.add(name)
        if isinstance(src, pd.DataFrame):
            missing = {"qid", "docno", "score"} - set(src.columns)
            if missing:
                raise ValueError(
                    f"run {name!r} needs columns qid, docno, score; missing {sorted(missing)}"
                )
            out.append((name, "DataFrame", src))
        else:
            out.append((name, str(src), read_trec_run(src)))
    return out


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
    external_runs: Mapping[str, str | Path | pd.DataFrame] | None = None,
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
    question, down to the deepest k the metrics read (at file level: every result), are
    recorded in ``info["identical_rankings"]`` (groups of names, first = the one the others
    are marked against) and marked by ``format()``: two rows that are one system as
    measured must not read as two findings.

    ``external_runs`` ({name: TREC run file, or a frame ``qid, docno, score``}) adds
    other systems' results as rows after the pipelines: mapped to line ranges
    (``memlab.eval.trec.map_run``: unit ids, chunk ids or ``PATH:LINE`` ids; unknown
    questions or documents are a ``RunMappingError`` with counts), cut at the depth the
    metrics read, and scored with the same span metrics and tests; a question a run
    does not answer scores 0.
    """
    systems = _as_systems(systems)
    metrics = list(metrics)
    for m in metrics:
        parse_metric(m)
    external = _external_runs(external_runs, {s.name for s in systems})
    if external and getattr(lab, "level", "unit") != "unit":
        raise ValueError("external runs are scored at unit level; not with level='file'")
    names = [s.name for s in systems] + [name for name, _, _ in external]
    if baseline is not None and baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
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
    multi = len(lab.dataset.workspaces) > 1
    ids_of: dict[int, np.ndarray] = {}  # unit ids of each table, by position
    files_of: dict[int, np.ndarray] = {}  # "group/path" of each table's units (file level)
    judged = lab.dataset.judged if getattr(lab, "level", "unit") == "unit" else None
    tops: dict[str, pd.DataFrame] = {}  # each system's top k spans, when labels are partial
    scored_lcs: list[LabCandidates] = []
    for s in run_systems:
        lc: LabCandidates = cands[s.name]
        if rows is not None:
            lc = lc.subset(rows)
        scored_lcs.append(lc)
        t = lc.cs.table
        if id(t) not in ids_of:
            ids_of[id(t)] = unit_ids(
                pd.DataFrame(
                    {
                        "group": lc.unit_groups(),
                        "path": t.paths,
                        "start_line": t.start_lines,
                        "end_line": t.end_lines,
                    }
                ),
                multi_group=multi,
            )
        ids = ids_of[id(t)]
        ranking = lc.rank(s)  # at file level: every candidate, then reduced to files
        values = lc.score(s, metrics, ranking=ranking)
        keep = lc.has_evidence
        if judged is not None:
            tops[s.name] = top_spans(lc, ranking, keep, k)
        cols = ranking.columns[keep]
        pos = np.take_along_axis(lc.cs.pos[keep], np.maximum(cols, 0), axis=1)
        # Unit ids, not candidate columns: systems on different candidate sets (e.g. AND
        # and OR keyword queries) can still return the same chunks, and an external run
        # names units the same way.
        if getattr(lab, "level", "unit") == "unit":
            # Every metric reads the top k: two systems that agree there are one system as
            # measured, whatever they return below it.
            docs = np.where(cols >= 0, ids[pos] if pos.size else pos, "")[:, :k]
        else:
            # At file level the metrics read the first k files of the ranked units.
            if id(t) not in files_of:  # each unit's file, once per table
                groups = lc.unit_groups().astype(str)
                files_of[id(t)] = np.char.add(np.char.add(groups, "/"), t.paths.astype(str))
            files = files_of[id(t)]
            docs = top_files(np.where(cols >= 0, files[pos] if pos.size else pos, ""), k)
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
            from memlab.pipeline.explain import ranking_frame

            rf = ranking_frame(lc.cs, ranking, s.name)
            at = rf["pos"].to_numpy()
            rf.insert(rf.columns.get_loc("docno") + 1, "unit", ids[at])
            rf.insert(rf.columns.get_loc("path"), "group", lc.unit_groups()[at])
            run_frames.append(rf)
    units = unit_table(scored_lcs, multi_group=multi) if (keep_runs or external) else None
    first = scored_lcs[0]
    ext_systems = []
    left_out = set(lab.dataset.queries["qid"]) - set(first.qids)  # by ``queries``
    for name, source, frame in external:
        frame = frame[~frame["qid"].astype(str).isin(left_out)] if left_out else frame
        ext = _external_system(name, source, frame, lab, units, first.qids, k)
        ext_systems.append(ext)
        values = score_mapped_run(ext.results, lab.dataset, first.qids, metrics)
        keep = first.has_evidence
        for m in metrics:
            frames.append(
                pd.DataFrame(
                    {
                        "system": name,
                        "qid": np.asarray(first.qids, dtype=object)[keep],
                        "category": first.categories[keep],
                        "metric": m,
                        "value": values[m][keep],
                    }
                )
            )
        results_of[name] = _run_units(ext.results, first.qids, keep)
        tops[name] = ext.results
        if keep_runs:
            run_frames.append(ext.results.assign(system=name, unit=ext.results["docno"]))
    per_query = pd.concat(frames, ignore_index=True)
    table = summary_table(per_query, names, metrics, baseline, test, correction, alpha)
    if judged is not None:  # incomplete labels: how much of each top k is judged
        scored = [q for q, h in zip(first.qids, first.has_evidence, strict=True) if h]
        per = {n: judged_at_k(tops[n], judged, scored, k) for n in names}
        table[judged_name(k)] = pd.Series(judged_means(per))
    trec_info: dict[str, Any] = {}
    qrels = None
    if keep_runs and units is not None:
        scored = [q for q, has in zip(first.qids, first.has_evidence, strict=True) if has]
        qrels, pairing = qrels_for(lab.dataset, units, scored, multi_group=multi)
        trec_info["pairing"] = qrels_stats(pairing)
    if ext_systems:
        trec_info["external"] = [e.describe() for e in ext_systems]
    info = {
        "dataset": lab.dataset.name,
        "dataset_fingerprint": lab.dataset.fingerprint,
        "embedder": lab.embedder.model if lab.embedder is not None else "fts-only",
        "embedder_provider": lab.embedder.provider if lab.embedder is not None else "none",
        "chunker": lab.chunker.fingerprint(),
        "metrics": metrics,
        "baseline": baseline,
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "scored_at_k": k,
        "level": getattr(lab, "level", "unit"),
        "pinned": sorted(pin),
        "own_max_results": {s.name: s.max_results for s in systems},  # before at_k
        "identical_rankings": identical_rankings(results_of),
        "candidate_seconds": t_cand,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if trec_info:
        info["trec"] = trec_info
    return ExperimentResult(
        table=table,
        per_query=per_query,
        systems=[*run_systems, *ext_systems],
        metrics=metrics,
        baseline=baseline,
        info=info,
        runs=pd.concat(run_frames, ignore_index=True) if run_frames else None,
        units=units if keep_runs else None,
        qrels=qrels,
    )


def _external_system(
    name: str,
    source: str,
    frame: pd.DataFrame,
    lab: Lab,
    units: pd.DataFrame | None,
    qids: list[str],
    depth: int,
) -> ExternalRun:
    """An external run mapped onto the dataset (`map_run`) and cut at ``depth``, the
    deepest rank the metrics read (every pipeline is asked for that many results)."""
    mapped = map_run(frame, lab.dataset, units, qids=qids, name=name)  # type: ignore[arg-type]
    deep = mapped["rank"] >= depth
    info = {
        "results": len(mapped),
        "questions_answered": int(mapped["qid"].nunique()),
        "beyond_depth": int(deep.sum()),
        "depth": depth,
    }
    return ExternalRun(name, source, mapped[~deep].reset_index(drop=True), info)


def _run_units(
    results: pd.DataFrame, qids: Sequence[str], keep: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """(scored qids, unit ids [Q, K] with "" padding) of a mapped external run in rank
    order: what ``identical_rankings`` compares (the run is already cut at the metrics' depth)."""
    scored = [q for q, k in zip(qids, keep, strict=True) if k]
    row = {q: i for i, q in enumerate(scored)}
    sel = results[results["qid"].isin(row)]
    width = int(sel["rank"].max()) + 1 if len(sel) else 0
    docs = np.full((len(scored), width), "", dtype=object)
    docs[sel["qid"].map(row).to_numpy(), sel["rank"].to_numpy()] = sel["docno"].to_numpy()
    return scored, docs.astype(str)


Experiment = run_experiment
