"""The lesson as a function of the corpus: the tuned vector weight and the presets' order
against term overlap, synthetic corpora and real groups on one axis.

A *point* is a set of questions on one workspace or more: a synthetic corpus at one
paraphrase level and style, or one real group (a LoCoMo conversation, a BEAM chat, a
RealMem persona). Per point (``measure_points``):

- ``overlap`` / ``distractor``: its questions' mean term overlap with their evidence and
  with the best other unit (``memlab.eval.stats``);
- the **weight curve**: the ``wsum`` preset (OpenClaw's weighted sum on the OR keyword
  leg, no threshold) scored at each vector weight of ``WEIGHTS`` (text = 1 − vector,
  ``memlab.eval.sweep``), and its **plateau**: the contiguous run of weights whose mean is
  within max(``PLATEAU_TOLERANCE``, 1/n) of the best around the first best one, n the
  point's questions (``memlab.eval.sweep.tied_run``, the sweep's plateau rule, at that
  tolerance: one question more or less does not tell two weights apart);
- ``figures``: each preset of ``CURVE_PRESETS`` as it ships.

The **curve** is the synthetic points of one style ordered by overlap. Its prediction at
overlap x (``predict``) is linear interpolation between the two nearest points (held
flat beyond the ends) of the plateau's midpoint (the predicted weight) and of each
preset's figure (the predicted order). A real group is then judged by ``place``: whether
its own plateau contains the predicted weight, and Kendall's tau-b (``scipy.stats.
kendalltau``) between its presets' figures and the predicted ones.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.eval.metrics import exact_mean
from memlab.eval.sweep import tied_run

if TYPE_CHECKING:
    from memlab.eval.lab import Lab

__all__ = [
    "CURVE_PRESETS",
    "LADDERS",
    "LEVELS",
    "PLATEAU_TOLERANCE",
    "WEIGHTS",
    "Point",
    "committed_ladder",
    "curve_table",
    "judge",
    "kendall_tau",
    "ladder_points",
    "like_point",
    "measure_points",
    "place",
    "plateau",
    "predict",
]

# The retrieval presets whose order is compared (no query-blind baseline: every set puts
# those last, which would lift every tau alike).
CURVE_PRESETS = ("bm25", "vector", "openclaw", "wsum", "rrf", "qmd-like", "memlab-best")
WEIGHTS = [round(i * 0.05, 2) for i in range(21)]
# Two weights whose means differ by less than one point of recall, or by less than one
# question of the point (1/n), are not told apart.
PLATEAU_TOLERANCE = 0.01
# The synthetic curve: one corpus per style (``SynthConfig`` fields), asked at each level
# of ``LEVELS`` (a paraphrase ladder, ``memlab.datasets.synthetic.ladder``), committed as
# ``datasets/realism-<style>`` (``studies/realism_curve.py --make-datasets``).
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
LADDERS: dict[str, dict[str, Any]] = {
    "notes": {"days": 40, "queries_per_type": 16, "seed": 3, "style": "notes"},
    "conversation": {"days": 40, "queries_per_type": 16, "seed": 3, "style": "conversation"},
}


@dataclass
class Point:
    """One point on the axis (module docstring): where it lies and what it teaches."""

    name: str
    style: str
    metric: str
    n: int
    overlap: float
    distractor: float
    best: float
    low: float
    high: float
    top: float
    curve: list[float] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)
    paraphrase: float | None = None

    @property
    def middle(self) -> float:
        """The plateau's midpoint: the weight the curve interpolates."""
        return (self.low + self.high) / 2

    def to_json(self) -> dict[str, Any]:
        """The point as plain JSON values."""
        return asdict(self)


def plateau(
    weights: Sequence[float], means: Sequence[float], tolerance: float = PLATEAU_TOLERANCE
) -> tuple[float, float, float]:
    """(best, low, high): the first weight (grid order) with the top mean, and the
    contiguous run of weights around it whose mean is ≥ top − ``tolerance``
    (``tied_run``). ``weights`` ascending. All-NaN means → ValueError."""
    m = np.asarray(means, dtype=float)
    if np.isnan(m).all():
        raise ValueError("no mean to find a plateau in: every value is NaN")
    top = float(np.nanmax(m))
    at = int(np.flatnonzero(m >= top)[0])
    lo, hi = tied_run(np.nan_to_num(m, nan=-np.inf) >= top - tolerance, at)
    return float(weights[at]), float(weights[lo]), float(weights[hi])


def measure_points(
    lab: Lab,
    parts: Mapping[str, Sequence[str]],
    metric: str,
    stats: Mapping[str, Mapping[str, Any]],
    *,
    style: str,
    presets: Sequence[str] = CURVE_PRESETS,
    weights: Sequence[float] = WEIGHTS,
    tolerance: float = PLATEAU_TOLERANCE,
    paraphrase: Mapping[str, float] | None = None,
) -> list[Point]:
    """One ``Point`` per named part of ``lab``'s questions (``parts``: name → qids): one
    weight sweep and one experiment over the whole lab, each part's means from their
    per-query values (``exact_mean``, over the part's questions with evidence).
    ``stats``: name → that part's ``corpus_stats``-style figures (``term_overlap``,
    ``distractor_overlap``); ``paraphrase``: name → its level (synthetic points)."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.sweep import sweep
    from memlab.pipeline.presets import preset

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties and flat curves are what the plateau reports
        sw = sweep(lab, preset("wsum"), {"vector_weight": list(weights)}, [metric])
    res = run_experiment([preset(p) for p in presets], lab, [metric], baseline=None)
    pq = res.per_query[res.per_query["metric"] == metric]
    values = sw.per_query[metric]
    index = {q: i for i, q in enumerate(sw.qids)}
    out = []
    for name, qids in parts.items():
        cols = np.array([index[q] for q in qids if q in index], dtype=int)
        cols = cols[~np.isnan(values[0, cols])] if len(cols) else cols
        if not len(cols):
            continue
        means = [exact_mean(r) for r in values[:, cols]]
        best, low, high = plateau(weights, means, max(tolerance, 1.0 / len(cols)))
        keep = set(np.asarray(sw.qids, dtype=object)[cols].tolist())
        mine = pq[pq["qid"].isin(keep)]
        figures = {p: exact_mean(mine.loc[mine["system"] == p, "value"]) for p in presets}
        st = stats[name]
        out.append(
            Point(
                name=name,
                style=style,
                metric=metric,
                n=len(cols),
                overlap=float(st["term_overlap"]),
                distractor=float(st["distractor_overlap"]),
                best=best,
                low=low,
                high=high,
                top=float(np.nanmax(means)),
                curve=[float(x) for x in means],
                figures=figures,
                paraphrase=None if paraphrase is None else paraphrase.get(name),
            )
        )
    return out


def committed_ladder(style: str) -> Path | None:
    """``datasets/realism-<style>`` of the repository this package runs from, or None when
    memlab runs from an installed package without the checkout."""
    folder = Path(__file__).resolve().parents[2] / "datasets" / f"realism-{style}"
    return folder if (folder / "queries.jsonl").is_file() else None


def ladder_points(lab: Lab, style: str, **kw: Any) -> list[Point]:
    """The curve's points of one style: ``measure_points`` over a ladder dataset's levels
    (``lab.dataset``, ``memlab.datasets.synthetic.ladder``), each level's overlaps from
    ``corpus_stats`` of its questions (no embeddings), metric ``recall@10``."""
    from memlab.datasets.synthetic.ladder import LADDER_COLUMN, level_subset
    from memlab.eval.stats import corpus_stats

    ds = lab.dataset
    levels = sorted(set(ds.queries[LADDER_COLUMN].astype(float)))
    names = {f"{style} p={lv:.2f}": lv for lv in levels}
    parts, stats = {}, {}
    for name, lv in names.items():
        sub = level_subset(ds, lv)
        parts[name] = sub.queries["qid"].tolist()
        stats[name] = corpus_stats(sub)
    return measure_points(lab, parts, "recall@10", stats, style=style, paraphrase=names, **kw)


def like_point(
    target: Mapping[str, Any],
    name: str,
    folder: str | Path,
    metric: str,
    *,
    embedder: Any = "local",
    seed: int = 0,
    **kw: Any,
) -> tuple[Point, Any]:
    """The point of a synthetic corpus fitted to ``target`` (a dataset's ``corpus_stats``:
    ``memlab.datasets.synthetic.fit.fit_like``), written to ``folder`` (reused when it
    holds that config's corpus), indexed one line per unit at the target's level, scored
    with ``metric``. Returns (point, the fit): a second prediction for the target's groups
    (``judge`` with its plateau midpoint and figures), from every statistic the fit matches
    rather than from the overlap alone."""
    from memlab.datasets.base import load_folder
    from memlab.datasets.synthetic import generate, generated_with
    from memlab.datasets.synthetic.fit import fit_like
    from memlab.eval.lab import Lab
    from memlab.eval.stats import corpus_stats

    fit = fit_like(dict(target), seed=seed)
    folder = Path(folder)
    ds = load_folder(folder) if generated_with(folder, fit.config) else None
    ds = ds or generate(fit.config, folder, overwrite=True)
    lab = Lab(
        ds,
        embedder=embedder,
        unit="turn",
        level=ds.info.get("level", "unit"),
        progress=False,
        cache_vectors=True,
    )
    stats = corpus_stats(ds)
    parts = {name: ds.queries["qid"].tolist()}
    return measure_points(lab, parts, metric, {name: stats}, style=stats["style"], **kw)[0], fit


def predict(curve: Sequence[Point], overlap: float) -> tuple[float, dict[str, float]]:
    """The curve's prediction at ``overlap``: the interpolated plateau midpoint and each
    preset's interpolated figure (module docstring). ``curve``: points of one style."""
    pts = sorted(curve, key=lambda p: p.overlap)
    xs = [p.overlap for p in pts]
    weight = float(np.interp(overlap, xs, [p.middle for p in pts]))
    presets = [k for k in pts[0].figures if all(k in p.figures for p in pts)]
    figures = {k: float(np.interp(overlap, xs, [p.figures[k] for p in pts])) for k in presets}
    return weight, figures


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall's tau-b of two sets of figures over the presets both have (ties counted as
    ties); NaN with fewer than two, or when one side is constant."""
    from scipy.stats import kendalltau

    keys = [k for k in a if k in b]
    if len(keys) < 2:
        return math.nan
    return float(kendalltau([a[k] for k in keys], [b[k] for k in keys]).statistic)


def judge(group: Point, weight: float, figures: Mapping[str, float]) -> dict[str, Any]:
    """A real group against a prediction (a weight and the presets' figures): its overlap,
    its plateau, whether the plateau holds the weight, the best preset (own and predicted)
    and Kendall's tau-b of the preset orders."""
    return {
        "group": group.name,
        "n": group.n,
        "overlap": group.overlap,
        "distractor": group.distractor,
        "plateau": (group.low, group.high),
        "best": group.best,
        "predicted": weight,
        "inside": bool(group.low - 1e-9 <= weight <= group.high + 1e-9),
        "tau": kendall_tau(group.figures, figures),
        "best_preset": max(group.figures, key=lambda k: group.figures[k]),
        "predicted_best_preset": max(figures, key=lambda k: figures[k]),
    }


def place(group: Point, curve: Sequence[Point]) -> dict[str, Any]:
    """A real group against the curve of its style: ``judge`` of ``predict`` at its
    overlap."""
    return judge(group, *predict(curve, group.overlap))


def curve_table(points: Sequence[Point]) -> list[dict[str, Any]]:
    """One row per point, ordered by style then overlap: level, overlap, distractor
    overlap, plateau, best weight and each preset's figure (rounded for printing)."""
    rows = []
    for p in sorted(points, key=lambda p: (p.style, -p.overlap)):
        row: dict[str, Any] = {
            "point": p.name,
            "style": p.style,
            "n": p.n,
            "overlap": round(p.overlap, 3),
            "distractor": round(p.distractor, 3),
            "plateau": f"{p.low:.2f}–{p.high:.2f}",
            "best w": p.best,
        }
        row.update({k: round(v, 3) for k, v in p.figures.items()})
        rows.append(row)
    return rows
