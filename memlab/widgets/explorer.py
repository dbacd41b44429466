"""An interactive explorer of memlab's search pipeline (ipywidgets): ``Explorer``.

``Explorer(index_or_lab)`` shows a panel with a preset dropdown, sliders for
the parameters a user tunes (vector weight, candidate multiplier, minScore,
max results, MMR λ, decay half-life), MMR and decay switches, and a query
box. It renders the ranked results with every component score. On a ``Lab``
(or a ``Dataset``) it also shows, for a chosen question, which evidence spans
were found and where, and live metrics over all questions beside the
preset's own.

It stays live because candidates are retrieved once and only re-scored: a
slider move is array work over cached candidates (``Pipeline.rank``); a new
retrieval happens only for a new free-text query or when a setting needs
more candidates per leg than are cached. The widgets are plain attributes,
so tests and notebooks can drive them from Python (``ex.vector_weight.value =
1.0``) and read ``ex.results`` / ``ex.metrics``.

Size: one class, ``Explorer``: its widgets, callbacks (``_on_param``,
``_on_query``) and renderers (``_render_results``, ``_render_metrics``) share
the cached candidates (``_lab_candidates``, ``_free_candidates``) that make a
slider move array work, and the renderers read the widgets directly.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from memlab.config.vocab import DECAY_RULES, MMR_KINDS
from memlab.pipeline import Pipeline
from memlab.pipeline.explain import ranking_frame
from memlab.pipeline.presets import PRESETS
from memlab.pipeline.presets import preset as make_preset
from memlab.retrieval.fusion import clamp_weights
from memlab.stages.best_line import line_keys

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset
    from memlab.eval.lab import Lab, LabCandidates
    from memlab.retrieval.candidates import CandidateSet
    from memlab.store import MemoryIndex

__all__ = ["Explorer"]

DEFAULT_METRICS = ("recall@5", "recall@10", "ndcg@10", "mrr")
# Columns of the results table: (frame column, header, number format).
_RESULT_COLUMNS = (
    ("vector_score", "cosine", ".3f"),
    ("vector_rank", "vec rank", "d"),
    ("text_score", "kw score", ".3f"),
    ("text_rank", "kw rank", "d"),
    ("fused", "fused", ".3f"),
    ("decay", "decay ×", ".3f"),
    ("mmr_position", "MMR pos", "d"),
    ("score", "final", ".3f"),
)
_SLIDER_PARAMS = (
    "vector_weight",
    "candidate_multiplier",
    "min_score",
    "max_results",
    "mmr",
    "mmr_lambda",
    "decay",
    "half_life_days",
)
_SEP = "\x1f"  # the Lab's group/path separator in span paths
_STYLE = (
    "<style>.memlab-x table{border-collapse:collapse;font-size:12px}"
    ".memlab-x th,.memlab-x td{padding:2px 6px;border-bottom:1px solid #ddd;text-align:right}"
    ".memlab-x td.l,.memlab-x th.l{text-align:left}.memlab-x tr.ev td{background:#e6f4ea}"
    ".memlab-x .muted{color:#777}</style>"
)


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if spec == "d":
        v = int(value)
        return "—" if v < 0 else str(v + 1)  # ranks and positions shown 1-based
    return format(float(value), spec)


def _short(text: str, n: int = 110) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


class Explorer:
    """An ipywidgets panel over a ``MemoryIndex``, a ``Lab`` or a ``Dataset``.

    ``source``: an index (free-text queries only), a ``Lab`` (questions with
    evidence; free text too), or a ``Dataset`` (wrapped in a ``Lab`` with
    ``embedder``). ``preset``: the starting preset. ``metrics``: the live
    metrics (lab only), scored as ``run_experiment`` does — each setting asked
    for at least the deepest cutoff's k results, its minScore applied.
    ``prefetch_depth``: candidates per leg retrieved up front (default 200,
    OpenClaw's cap on candidates), so slider moves never need a deeper
    retrieval. ``rows``: result rows shown (the selection itself follows max
    results). ``live_metrics``: recompute metrics on every change (MMR makes
    that a per-question loop; switch it off for very large labs).

    Public state after each refresh: ``pipeline`` (the current system),
    ``results`` (its results for the shown query, ``Pipeline.run`` columns
    plus ``evidence`` on a lab), ``metrics`` (metric → value over all
    questions) and ``baseline_metrics`` (the unedited preset's),
    ``retrievals`` (how many candidate retrievals ran), ``last_seconds``.
    """

    def __init__(
        self,
        source: MemoryIndex | Lab | Dataset,
        *,
        preset: str = "openclaw",
        query: str | None = None,
        qid: str | None = None,
        metrics: Sequence[str] = DEFAULT_METRICS,
        category_metric: str | None = None,
        prefetch_depth: int = 200,
        rows: int = 10,
        live_metrics: bool = True,
        embedder: str = "local",
    ) -> None:
        import ipywidgets as w

        from memlab.datasets.base import Dataset
        from memlab.eval.lab import Lab
        from memlab.eval.metrics import parse_metric

        make_preset(preset)  # an unknown name is a ValueError listing the presets
        if isinstance(source, Dataset):
            # As `memlab eval` and the benchmarks: a Lab runs each system on the index it
            # is defined for (memlab-best on its porter index, openclaw on unicode61),
            # with the vectors cached.
            source = Lab(source, embedder=embedder, progress=False, cache_vectors=True)
        self.lab: Lab | None = source if isinstance(source, Lab) else None
        self.index: MemoryIndex | None = None if self.lab is not None else source  # type: ignore[assignment]
        self.metric_names = [parse_metric(m).name for m in metrics]
        if not self.metric_names:
            raise ValueError("give at least one metric")
        if category_metric is None:
            category_metric = (
                "recall@10" if "recall@10" in self.metric_names else self.metric_names[0]
            )
        if category_metric not in self.metric_names:
            raise ValueError(
                f"category_metric {category_metric!r} must be one of {self.metric_names}"
            )
        self.category_metric = category_metric
        self.prefetch_depth = int(prefetch_depth)
        self.rows = int(rows)
        self.retrievals = 0
        self.last_seconds = 0.0
        self.results = pd.DataFrame()
        self.metrics: dict[str, float] = {}
        self.baseline_metrics: dict[str, float] = {}
        self.pipeline = make_preset(preset)
        self._overrides: dict[str, Any] = {}
        self._syncing = False
        self._free: dict[tuple[str, str, bool, str], CandidateSet] = {}
        self._baseline_cache: dict[tuple[str, str], dict[str, Any]] = {}
        self._lines: dict[tuple[str, str], list[str]] = {}
        self._seen: dict[int, LabCandidates] = {}

        slider = {"continuous_update": False, "style": {"description_width": "120px"}}
        slider_layout = w.Layout(width="380px")
        self.preset = w.Dropdown(options=list(PRESETS), value=preset, description="preset")
        self.vector_weight = w.FloatSlider(
            min=0.0, max=1.0, step=0.05, description="vector weight", layout=slider_layout, **slider
        )
        self.candidate_multiplier = w.FloatSlider(
            min=1.0,
            max=20.0,
            step=0.5,
            description="cand. multiplier",
            layout=slider_layout,
            **slider,
        )
        self.min_score = w.FloatSlider(
            min=-1.0, max=1.0, step=0.01, description="minScore", layout=slider_layout, **slider
        )
        self.max_results = w.IntSlider(
            min=1, max=50, step=1, description="max results", layout=slider_layout, **slider
        )
        self.mmr = w.Dropdown(options=list(MMR_KINDS), description="MMR")
        self.mmr_lambda = w.FloatSlider(
            min=0.0, max=1.0, step=0.05, description="MMR λ", layout=slider_layout, **slider
        )
        self.decay = w.Dropdown(options=list(DECAY_RULES), description="decay")
        self.half_life_days = w.FloatSlider(
            min=1.0,
            max=365.0,
            step=1.0,
            description="half-life (days)",
            layout=slider_layout,
            **slider,
        )
        self.query = w.Text(
            description="query",
            placeholder="type a question and press Enter",
            continuous_update=False,
            layout=w.Layout(width="760px"),
        )
        self.question = w.Dropdown(description="question", layout=w.Layout(width="760px"))
        self.live_metrics = w.Checkbox(value=live_metrics, description="live metrics")
        self.reset = w.Button(description="reset to preset", layout=w.Layout(width="140px"))
        self.status = w.HTML()
        self.results_html = w.HTML()
        self.evidence_html = w.HTML()
        self.metrics_html = w.HTML()

        self._qids: list[str] = []
        if self.lab is not None:
            q = self.lab.dataset.queries
            self._qids = q["qid"].tolist()
            self.question.options = [
                (f"{r.qid} [{r.category}] {_short(r.query, 80)}", r.qid)
                for r in q.itertuples(index=False)
            ]
            start = qid if qid is not None else (self._qids[0] if self._qids else None)
            if start is not None and start not in self._qids:
                raise ValueError(f"qid {start!r} is not a question of the dataset")
            self._syncing = True
            self.question.value = start
            self.query.value = self._query_of(start) if start is not None else ""
            self._syncing = False
        if query is not None:
            self.query.value = query

        self._sync_widgets()
        self.preset.observe(self._on_preset, names="value")
        for name in _SLIDER_PARAMS:
            getattr(self, name).observe(self._on_param(name), names="value")
        self.query.observe(self._on_query, names="value")
        self.question.observe(self._on_question, names="value")
        self.live_metrics.observe(lambda _: self.refresh(), names="value")
        self.reset.on_click(lambda _: self._on_preset({"new": self.preset.value}))

        controls_left = w.VBox(
            [self.vector_weight, self.candidate_multiplier, self.min_score, self.max_results]
        )
        controls_right = w.VBox([self.mmr, self.mmr_lambda, self.decay, self.half_life_days])
        top = [w.HBox([self.preset, self.reset] + ([self.live_metrics] if self.lab else []))]
        if self.lab is not None:
            top.append(self.question)
        top.append(self.query)
        outputs = [self.status, self.results_html]
        if self.lab is not None:
            outputs += [self.evidence_html, self.metrics_html]
        self.panel = w.VBox([*top, w.HBox([controls_left, controls_right]), *outputs])
        self.refresh()

    # ------------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.panel._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.panel)

    # ------------------------------------------------------------------ settings
    def _current_pipeline(self) -> Pipeline:
        params = dict(self._overrides)
        if "vector_weight" in params:
            share = float(params.pop("vector_weight"))
            params["vector_weight"] = share
            params["text_weight"] = round(1.0 - share, 10)
        p = make_preset(self.preset.value, **params)
        return p.replace(name=f"{p.name} (edited)") if params else p

    def _sync_widgets(self) -> None:
        """Show the preset's own values on the widgets without recording overrides."""
        p = make_preset(self.preset.value)
        self._syncing = True
        try:
            self.vector_weight.value = clamp_weights(p.vector_weight, p.text_weight)[0]
            self.candidate_multiplier.value = p.candidate_multiplier
            self.min_score.value = p.min_score
            self.max_results.value = p.max_results
            self.mmr.value = p.mmr
            self.mmr_lambda.value = p.mmr_lambda
            self.decay.value = p.decay
            self.half_life_days.value = p.half_life_days
        finally:
            self._syncing = False

    def _on_preset(self, change: dict[str, Any]) -> None:
        self._overrides.clear()
        self._sync_widgets()
        self.refresh()

    def _on_param(self, name: str) -> Any:
        def handler(change: dict[str, Any]) -> None:
            if self._syncing:
                return
            self._overrides[name] = change["new"]
            self.refresh()

        return handler

    def _on_query(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self.refresh()

    def _on_question(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        self._syncing = True
        self.query.value = self._query_of(change["new"])
        self._syncing = False
        self.refresh()

    def _query_of(self, qid: str | None) -> str:
        if self.lab is None or qid is None:
            return ""
        q = self.lab.dataset.queries
        return str(q.loc[q["qid"] == qid, "query"].iloc[0])

    # ------------------------------------------------------------------ candidates
    def _needed_depth(self, p: Pipeline) -> int:
        depth = p.depth
        if self.lab is not None and self.metric_names:
            from memlab.eval.depth import metric_depth

            depth = max(depth, p.at_k(metric_depth(self.metric_names)).depth)
        return depth

    def _lab_candidates(self, p: Pipeline) -> LabCandidates:
        assert self.lab is not None
        need = self._needed_depth(p)
        lc = self.lab.candidates_for_system(
            p, max(need, min(self.prefetch_depth, p.max_candidates))
        )
        # The Lab hands back the same object while its cache serves the request.
        if id(lc) not in self._seen:
            self._seen[id(lc)] = lc
            self.retrievals += 1
        return lc

    def _free_candidates(self, p: Pipeline, query: str) -> CandidateSet:
        index = self._free_index(p)
        kf = p.retrieval_spec(index.has_vectors).keyword_fallback
        # The index file names the workspace, tokenizer and file rule; a best_line system's
        # candidates also carry its line scores (CandidateSet.extra, one key per setting).
        key = (query, p.keyword_mode, kf, str(index.db_path), line_keys(p))
        cs = self._free.get(key)
        if cs is None or cs.depth < p.depth:
            self.retrievals += 1
            depth = max(p.depth, min(self.prefetch_depth, p.max_candidates))
            # Both legs are retrieved (the pipeline ignores a leg it has off), except for a
            # best_line system: its line scores are made for its own legs. On a lab, the
            # line scores come from the lab's own line index (the one its questions are
            # scored on), not from a line view built beside the chunk index.
            line_index = None
            if p.best_line and self.lab is not None:
                line_index = self.lab.line_index(p, self._free_group())
            system = p if p.best_line else p.replace(keyword=True, vector=True)
            cs = system.retrieve(index, [query], qids=["q"], depth=depth, line_index=line_index)
            self._free[key] = cs
        return cs

    def _free_index(self, p: Pipeline) -> MemoryIndex:
        if self.index is not None:
            return self.index
        assert self.lab is not None
        return self.lab.lab_for(p).index(self._free_group())

    def _free_group(self) -> str:
        # Free text on a lab searches the shown question's workspace (else the first).
        assert self.lab is not None
        if self.question.value is not None:
            q = self.lab.dataset.queries
            return str(q.loc[q["qid"] == self.question.value, "group"].iloc[0])
        return next(iter(self.lab.dataset.workspaces), "default")

    # ------------------------------------------------------------------ rendering
    def refresh(self) -> None:
        """Re-score and re-render for the current widget values."""
        t0 = time.perf_counter()
        try:
            self.pipeline = p = self._current_pipeline()
        except ValueError as exc:  # a setting this preset refuses (best_line with decay...)
            self.status.value = f"<b>not applied:</b> {html.escape(str(exc))}"
            return
        query = self.query.value.strip()
        lab_question = (
            self.lab is not None
            and self.question.value is not None
            and query == self._query_of(self.question.value).strip()
        )
        self.evidence_html.value = ""
        if lab_question:
            lc = self._lab_candidates(p)
            row = self._qids.index(self.question.value)
            self._render_lab_question(p, lc, row)
        elif query:
            cs = self._free_candidates(p, query)
            r = p.rank(cs)
            self.results = ranking_frame(cs, r, p.name, with_text=True)
            self._render_results(self.results, evidence=False)
        else:
            self.results = pd.DataFrame()
            self.results_html.value = "<i>type a query to search</i>"
        if self.lab is not None:
            self._render_metrics(p)
        self.last_seconds = time.perf_counter() - t0
        self._render_status(p, lab_question)

    def _render_status(self, p: Pipeline, lab_question: bool) -> None:
        notes = []
        if p.mmr == "off" and "mmr_lambda" in self._overrides:
            notes.append("MMR is off: λ has no effect")
        if p.decay == "off" and "half_life_days" in self._overrides:
            notes.append("decay is off: the half-life has no effect")
        if self.lab is not None and not lab_question and self.query.value.strip():
            notes.append("free-text query: no evidence to mark")
        changed = p.diff(make_preset(self.preset.value))
        edits = ", ".join(f"{k}={v}" for k, v in changed.items()) or "none"
        self.status.value = (
            f"<div class='memlab-x'><b>{html.escape(p.name)}</b> · depth {p.depth} per leg · "
            f"edits: {html.escape(edits)} · re-scored in {self.last_seconds * 1000:.0f} ms · "
            f"retrievals so far: {self.retrievals}"
            + "".join(f"<br><span class='muted'>{html.escape(n)}</span>" for n in notes)
            + "</div>"
        )

    def _render_results(self, df: pd.DataFrame, *, evidence: bool) -> None:
        if df.empty:
            self.results_html.value = (
                _STYLE + "<div class='memlab-x'><i>no results pass this setting "
                f"(minScore {self.pipeline.min_score:g})</i></div>"
            )
            return
        head = ["#", *(h for _, h, _ in _RESULT_COLUMNS), "selected", "where", "snippet"]
        lefts = {"selected", "where", "snippet"}
        out = [_STYLE, "<div class='memlab-x'><table><tr>"]
        out += [f"<th class='{'l' if h in lefts else ''}'>{html.escape(h)}</th>" for h in head]
        out.append("</tr>")
        for r in df.head(self.rows).itertuples(index=False):
            is_ev = evidence and bool(getattr(r, "evidence", False))
            cells = [str(int(r.rank) + 1)]
            cells += [_fmt(getattr(r, c), f) for c, _, f in _RESULT_COLUMNS]
            where = f"{r.path}#L{r.start_line}-L{r.end_line}"
            tail = [str(r.selected_by), where, _short(getattr(r, "text", ""))]
            out.append(f"<tr class='{'ev' if is_ev else ''}'>")
            out += [f"<td>{html.escape(c)}</td>" for c in cells]
            out += [f"<td class='l'>{html.escape(c)}</td>" for c in tail]
            out.append("</tr>")
        out.append("</table>")
        if evidence:
            out.append("<span class='muted'>green rows cover an evidence span</span>")
        out.append("</div>")
        self.results_html.value = "".join(out)

    def _render_lab_question(self, p: Pipeline, lc: LabCandidates, row: int) -> None:
        sub = lc.subset([row])
        r = p.rank(sub.cs)
        df = ranking_frame(sub.cs, r, p.name, with_text=True)
        cols = r.columns[0][r.columns[0] >= 0]
        covers = sub.covers[0]  # [C, S]
        df["evidence"] = covers[cols].any(axis=1) if len(cols) else np.zeros(0, dtype=bool)
        self.results = df
        self._render_results(df, evidence=True)
        self._render_evidence(p, sub, cols)

    def _span_text(self, group: str, path: str, start: int, end: int) -> str:
        assert self.lab is not None
        key = (group, path)
        if key not in self._lines:
            f = Path(self.lab.dataset.workspaces[group]) / path
            try:
                self._lines[key] = f.read_text(encoding="utf-8").splitlines()
            except OSError:
                self._lines[key] = []
        return " ".join(self._lines[key][start - 1 : end])

    def _render_evidence(self, p: Pipeline, sub: LabCandidates, cols: np.ndarray) -> None:
        sp = sub.spans
        covers = sub.covers[0]
        cs = sub.cs
        rows = []
        for s in np.nonzero(sp.span_valid[0])[0]:
            group, _, path = sp.paths[int(sp.path_idx[0, s])].partition(_SEP)
            start, end = int(sp.start[0, s]), int(sp.end[0, s])
            hit = np.nonzero(covers[cols, s])[0] if len(cols) else np.empty(0, dtype=int)
            if hit.size:
                where = f"found at rank {int(hit[0]) + 1}"
            else:
                cand = np.nonzero(covers[:, s] & cs.valid[0])[0]
                if cand.size:
                    c = int(cand[0])
                    vr, kr = int(cs.vec_rank[0, c]), int(cs.text_rank[0, c])
                    legs = ", ".join(
                        f"{leg} rank {rank + 1}"
                        for leg, rank in (("vector", vr), ("keyword", kr))
                        if rank >= 0
                    )
                    where = f"missed: a candidate ({legs}) not selected"
                else:
                    where = f"missed: neither leg retrieved it in its top {cs.depth}"
            text = self._span_text(group, path, start, end)
            rows.append((f"{path}#L{start}-L{end}", where, _short(text, 160), bool(hit.size)))
        if not rows:
            self.evidence_html.value = (
                "<div class='memlab-x'><i>this question has no evidence</i></div>"
            )
            return
        found = sum(r[3] for r in rows)
        out = [
            _STYLE,
            f"<div class='memlab-x'><b>evidence: {found} of {len(rows)} spans found</b><table>",
            "<tr><th class='l'>span</th><th class='l'>status</th><th class='l'>text</th></tr>",
        ]
        for where_span, status, text, ok in rows:
            out.append(
                f"<tr class='{'ev' if ok else ''}'><td class='l'>{html.escape(where_span)}</td>"
                f"<td class='l'>{html.escape(status)}</td><td class='l'>{html.escape(text)}</td></tr>"
            )
        out.append("</table></div>")
        self.evidence_html.value = "".join(out)

    def _scores(self, p: Pipeline) -> dict[str, Any]:
        """Mean of each metric over questions with evidence, overall and per category,
        plus the mean number of results the setting returns as configured."""
        from memlab.eval.depth import metric_depth

        lc = self._lab_candidates(p)
        scored = p.at_k(metric_depth(self.metric_names))
        values = lc.score(scored, self.metric_names)
        keep = lc.has_evidence
        out: dict[str, Any] = {m: float(np.nanmean(v[keep])) for m, v in values.items()}
        ranking = p.rank(lc.cs)
        out["results returned"] = float((ranking.columns[keep] >= 0).sum(axis=1).mean())
        m = self.category_metric
        cats = pd.Series(values[m][keep]).groupby(lc.categories[keep]).mean()
        out["_by_category"] = (m, cats.to_dict())
        return out

    def _render_metrics(self, p: Pipeline) -> None:
        if not self.live_metrics.value:
            self.metrics_html.value = "<div class='memlab-x muted'>live metrics are off</div>"
            return
        base_key = (self.preset.value, ",".join(self.metric_names))
        if base_key not in self._baseline_cache:
            self._baseline_cache[base_key] = self._scores(make_preset(self.preset.value))
        base = self._baseline_cache[base_key]
        cur = base if not self._overrides else self._scores(p)
        self.metrics = {k: v for k, v in cur.items() if not k.startswith("_")}
        self.baseline_metrics = {k: v for k, v in base.items() if not k.startswith("_")}
        assert self.lab is not None
        n = int(self.lab.dataset.queries["qid"].isin(self.lab.dataset.evidence["qid"]).sum())
        out = [
            _STYLE,
            f"<div class='memlab-x'><b>metrics over {n} questions with evidence</b> "
            "<span class='muted'>(k raised to each cutoff; minScore applied)</span><table>",
            f"<tr><th class='l'>metric</th><th>current</th><th>{html.escape(self.preset.value)}</th>"
            "<th>Δ</th></tr>",
        ]
        for m in self.metrics:
            c, b = self.metrics[m], self.baseline_metrics[m]
            out.append(
                f"<tr><td class='l'>{html.escape(m)}</td><td>{c:.3f}</td><td>{b:.3f}</td>"
                f"<td>{c - b:+.3f}</td></tr>"
            )
        out.append("</table>")
        name, cats = cur["_by_category"]
        base_cats = base["_by_category"][1]
        out.append(f"<br><b>{html.escape(name)} per category</b><table>")
        out.append(
            f"<tr><th class='l'>category</th><th>current</th>"
            f"<th>{html.escape(self.preset.value)}</th><th>Δ</th></tr>"
        )
        for cat, v in cats.items():
            b = base_cats.get(cat, float("nan"))
            out.append(
                f"<tr><td class='l'>{html.escape(str(cat))}</td><td>{v:.3f}</td><td>{b:.3f}</td>"
                f"<td>{v - b:+.3f}</td></tr>"
            )
        out.append("</table></div>")
        self.metrics_html.value = "".join(out)
