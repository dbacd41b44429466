"""A synthetic corpus like a dataset: the realism knobs fitted to its statistics
(``memlab synth OUT --like KIND``).

``fit_like(target)`` takes a dataset's statistics (``memlab.eval.stats.corpus_stats``,
computed without embeddings: the fit reads words, not vectors) and returns the
``SynthConfig`` whose corpus matches them, each statistic beside its target
(``LikeFit.rows``). In order:

1. **style** and **level**: the target's (conversation when most of its units are
   transcript lines; file level when it scores files, as RealMem does).
2. **category mix**: a dataset's own categories have no synthetic counterpart, so what is
   matched is the mix of query forms (``memlab.eval.stats.measure.query_form``). Each form
   has the categories that ask in it (``FORM_CATEGORIES``); their measured form profile on
   a probe corpus gives, by non-negative least squares (``scipy.optimize.nnls``, the
   shares summing to 1), each form group's share, split evenly among its categories
   (``mix`` and ``mix_weights``).
3. **size**: as many days as the target has files per workspace (30–400), and notes per
   day so that a file has its lines (at file level, re-scaled twice by the measured span
   length: a span is a file there).
4. **paraphrase**: a bracketing search on [0, 1] (``_bisect``) for the term overlap (it
   falls as the knob rises).
5. **confusability**: when the best other unit's overlap is below the target, the same
   search on [0, 1] (it rises with the knob; ``distractors_per_fact`` raised to its maximum when
   1 is not enough); when above, the look-alike lines the categories write themselves are
   cut (``distractors_per_fact`` 0, one ``update`` version, one ``redundancy`` copy).
6. the term overlap again (a look-alike line in an evidence file moves it at file level).

Tolerances (``TOLERANCES``): overlap and distractor overlap within 0.05, span length
(lines) within 20 %, the form mix within 0.05 of total variation distance, the style
equal. A statistic the knobs cannot reach is reported as missed, never hidden.

Size: the steps above are one search over one cache of measured corpora (``_Measure``) with
one set of tolerances; ``LikeFit`` is its report. The form profile and mix (``_mix``,
``_probe_profile``) would move out with a second user.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memlab.datasets.synthetic.base import SynthConfig, config_record
from memlab.datasets.synthetic.facts import MAX_DISTRACTORS
from memlab.datasets.synthetic.phenomena import capacity
from memlab.datasets.synthetic.writer import generate

__all__ = ["FORM_CATEGORIES", "TOLERANCES", "LikeFit", "fit_like", "form_distance"]

# The synthetic categories that ask in each query form (memlab.eval.stats.measure).
FORM_CATEGORIES: dict[str, tuple[str, ...]] = {
    "question": ("paraphrase", "update", "distractor"),
    "multi": ("multi", "redundancy"),
    "identifier": ("identifier", "exact"),
    "keyword": ("keyword",),
    "dated": ("dated",),
    "cjk": ("cjk",),
}
TOLERANCES: dict[str, float] = {
    "term_overlap": 0.05,
    "distractor_overlap": 0.05,
    "span_lines": 0.20,  # relative
    "forms": 0.05,  # total variation distance
}
_STEPS = 6  # search steps per knob


def form_distance(a: dict[str, float], b: dict[str, float]) -> float:
    """Total variation distance of two form mixes: ½ Σ_f |a_f − b_f| (0 = the same
    shares, 1 = no form in common)."""
    return 0.5 * sum(abs(a.get(f, 0.0) - b.get(f, 0.0)) for f in set(a) | set(b))


@dataclass
class LikeFit:
    """A fitted config, its corpus's statistics and the target's. ``rows``: one per fitted
    statistic: ``statistic``, ``target``, ``fitted``, ``tolerance`` (text), ``within``."""

    config: SynthConfig
    target: dict[str, Any]
    fitted: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    evaluations: int = 0

    @property
    def within(self) -> bool:
        """Whether every fitted statistic is within its tolerance."""
        return all(r["within"] for r in self.rows)

    def knobs(self) -> dict[str, Any]:
        """The fitted config's fields that differ from ``SynthConfig()``'s (seed aside)."""
        rec, default = config_record(self.config), config_record(SynthConfig())
        return {k: v for k, v in rec.items() if k != "seed" and default.get(k, _NONE) != v}

    def format(self) -> str:
        """The fit as text: each statistic beside its target, then the fitted knobs."""
        cells = [
            (r["statistic"], _show(r["target"]), _show(r["fitted"]), r["tolerance"], r["within"])
            for r in self.rows
        ]
        names = ("statistic", "target", "fitted", "tolerance")
        w = [max(len(c[i]) for c in [names, *cells]) for i in range(4)]
        head = f"{names[0]:<{w[0]}}  {names[1]:>{w[1]}}  {names[2]:>{w[2]}}  {names[3]:<{w[3]}}  ok"
        out = [head, "-" * len(head)]
        for name, t, f, tol, ok in cells:
            out.append(
                f"{name:<{w[0]}}  {t:>{w[1]}}  {f:>{w[2]}}  {tol:<{w[3]}}  {'yes' if ok else 'MISSED'}"
            )
        out.append(
            "forms: q question, m multi (2+ spans), i identifier, k keyword, d dated, c cjk"
            " (memlab.eval.stats.measure.query_form)"
        )
        knobs = ", ".join(f"{k}={_knob(v)}" for k, v in self.knobs().items())
        out.append(f"fitted knobs ({self.evaluations} corpora measured): {knobs}")
        return "\n".join(out)


_NONE = object()


def _knob(v: Any) -> str:
    if isinstance(v, list):
        return ",".join(_knob(x) for x in v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def _show(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3f}"
    if isinstance(x, dict):  # a form mix: "q .52 m .38"
        return " ".join(f"{k[0]} {v:.2f}".replace(" 0.", " .") for k, v in x.items())
    return str(x)


class _Measure:
    """Generate a config's corpus in a scratch folder and measure it (cached per config)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.seen: dict[SynthConfig, dict[str, Any]] = {}

    def __call__(self, cfg: SynthConfig) -> dict[str, Any]:
        from memlab.eval.stats import corpus_stats

        if cfg not in self.seen:
            ds = generate(cfg, self.folder / "corpus", overwrite=True)
            stats = corpus_stats(ds)
            stats.pop("per_query")
            self.seen[cfg] = stats
        return self.seen[cfg]


def _bisect(measure: Callable[[float], float], target: float, tol: float, rising: bool) -> float:
    """The knob in [0, 1] whose measure is nearest ``target`` (the measure monotone in the
    knob, rising or falling): the end it cannot pass, else a bracketing search — the
    secant through the bracket's ends (Illinois' regula falsi; the knob is roughly linear in
    the measure), bisection when a step lands at an end — to within ``tol / 2`` or
    ``_STEPS`` steps."""
    lo, hi = 0.0, 1.0
    f_lo, f_hi = measure(lo), measure(hi)
    sign = 1.0 if rising else -1.0
    if sign * (target - f_lo) <= 0:
        return lo
    if sign * (target - f_hi) >= 0:
        return hi
    best, gap = min(((lo, abs(f_lo - target)), (hi, abs(f_hi - target))), key=lambda t: t[1])
    side = 0
    for _ in range(_STEPS):
        mid = lo + (target - f_lo) * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else (lo + hi) / 2
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        mid = round(mid, 2)  # a knob to two decimals: what a user would type
        if mid in (lo, hi):
            break
        f = measure(mid)
        if abs(f - target) < gap:
            best, gap = mid, abs(f - target)
        if gap <= tol / 2:
            break
        if sign * (target - f) > 0:  # the target lies above mid
            lo, f_lo = mid, f
            if side == -1:  # Illinois: halve the stale end's weight
                f_hi = target + (f_hi - target) / 2
            side = -1
        else:
            hi, f_hi = mid, f
            if side == 1:
                f_lo = target + (f_lo - target) / 2
            side = 1
    return best


def _mix(
    target: dict[str, Any],
    probe: dict[str, Any],
    total: int,
    cfg: SynthConfig,
    fixed_qpt: int | None = None,
) -> SynthConfig:
    """``mix``, ``mix_weights`` and ``queries_per_type`` for the target's form shares
    (module docstring, step 2), capped by each category's capacity; ``fixed_qpt``: the
    ``queries_per_type`` given, which the largest category then asks (the rest in
    proportion, each capped by its capacity when generated)."""
    import numpy as np
    from scipy.optimize import nnls

    want = dict(target["forms"])
    groups = [g for g in FORM_CATEGORIES if g != "cjk" or want.get("cjk", 0) > 0]
    forms = sorted(set(want) | {f for g in groups for f in probe.get(g, {})} | set(groups))
    a = np.array([[probe.get(g, {}).get(f, 0.0) for g in groups] for f in forms])
    b = np.array([want.get(f, 0.0) for f in forms])
    # The shares sum to one: a heavy row of ones.
    x, _ = nnls(np.vstack([a, 10 * np.ones(len(groups))]), np.append(b, 10.0))
    x = x / x.sum() if x.sum() > 0 else np.full(len(groups), 1 / len(groups))
    counts: dict[str, int] = {}
    for g, share in zip(groups, x, strict=True):
        for c in FORM_CATEGORIES[g]:
            counts[c] = math.floor(share * total / len(FORM_CATEGORIES[g]) + 0.5)
    if cfg.level == "unit" and (target.get("span_lines") or 1.0) < 1.5:
        # A dated question's evidence is its whole day: a target whose spans are lines
        # asks its dated questions as plain questions.
        counts["paraphrase"] = counts.get("paraphrase", 0) + counts.pop("dated", 0)
    counts = {c: n for c, n in counts.items() if n > 0}
    caps = capacity(replace(cfg, mix=tuple(counts)))
    counts = {c: min(n, caps[c]) for c, n in counts.items()}
    qpt = max(counts.values())
    if fixed_qpt:  # the largest category asks this many; the others in proportion
        counts = {c: max(1, math.floor(n * fixed_qpt / qpt + 0.5)) for c, n in counts.items()}
        qpt = fixed_qpt
    return replace(
        cfg,
        mix=tuple(counts),
        mix_weights=tuple(round(n / qpt, 4) for n in counts.values()),
        queries_per_type=qpt,
        cjk_fraction=0.2 if "cjk" in counts else 0.0,
    )


def _probe_profile(measure: _Measure, cfg: SynthConfig) -> dict[str, dict[str, float]]:
    """Each form group's measured form shares on a probe corpus of every category."""
    cats = [c for g in FORM_CATEGORIES.values() for c in g]
    # A query's form reads its text and its span count only: a small corpus tells it.
    probe = replace(
        cfg,
        mix=tuple(cats),
        mix_weights=(),
        queries_per_type=20,
        cjk_fraction=0.2,
        days=30,
        notes_per_day=2,
    )
    rows = measure(probe)
    out: dict[str, dict[str, float]] = {}
    for g, members in FORM_CATEGORIES.items():
        acc: dict[str, float] = {}
        for c in members:
            for f, s in rows["by_category"].get(c, {}).get("forms", {}).items():
                acc[f] = acc.get(f, 0.0) + s / len(members)
        out[g] = acc
    return out


def fit_like(
    target: dict[str, Any],
    *,
    seed: int = 0,
    questions: int | None = None,
    fixed: dict[str, Any] | None = None,
    workdir: str | Path | None = None,
) -> LikeFit:
    """Fit the realism knobs to ``target`` (``corpus_stats`` of a dataset; module docstring).

    ``questions``: how many questions the corpus asks (default: the target's per group,
    within 100–400); ``fixed``: ``SynthConfig`` fields the fit keeps as given (``--set``);
    ``workdir``: where the trial corpora are written (default a temporary folder, under
    /dev/shm when there is one).
    """
    fixed = dict(fixed or {})
    # Trial corpora are written and read once each: in memory when the system has a tmpfs
    # (Linux's /dev/shm), several times faster than a disk.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="memlab-like-", dir=shm) as tmp:
        measure = _Measure(Path(workdir) if workdir else Path(tmp))
        cfg = _fit(target, measure, seed, questions, fixed)
        got = measure(cfg)
        return LikeFit(cfg, target, got, _rows(target, got), len(measure.seen))


def _fit(
    target: dict[str, Any],
    measure: _Measure,
    seed: int,
    questions: int | None,
    fixed: dict[str, Any],
) -> SynthConfig:
    def pin(c: SynthConfig, **kw: Any) -> SynthConfig:
        return replace(c, **{k: v for k, v in kw.items() if k not in fixed})

    groups = max(int(target.get("groups") or 1), 1)
    total = questions or min(400, max(100, round(target["queries"] / groups)))
    files = float(target.get("files_per_workspace") or 60)
    cfg = SynthConfig(seed=seed, **fixed)
    cfg = pin(cfg, style=target["style"], level=target["level"], days=_clamp(files, 30, 400))
    if "mix" not in fixed:
        qpt = fixed.get("queries_per_type")
        cfg = _mix(target, _probe_profile(measure, cfg), total, cfg, qpt)
    tol = TOLERANCES
    for _ in range(3):  # size, overlap, confusers; again while a statistic is out
        if "notes_per_day" not in fixed:
            cfg = _size(target, measure, cfg, files, fixed)
        if "paraphrase" not in fixed:

            def overlap(p: float, c: SynthConfig = cfg) -> float:
                return measure(replace(c, paraphrase=p))["term_overlap"]

            p = _bisect(overlap, target["term_overlap"], tol["term_overlap"], False)
            cfg = replace(cfg, paraphrase=p)
        if "confusability" not in fixed:
            cfg = _confuse(target, measure, cfg, fixed)
        if all(r["within"] for r in _rows(target, measure(cfg))):
            break
    return cfg


def _clamp(x: float, low: int, high: int) -> int:
    return int(min(high, max(low, round(x))))


def _size(
    target: dict[str, Any], measure: _Measure, cfg: SynthConfig, files: float, fixed: dict[str, Any]
) -> SynthConfig:
    """Notes per day so that a file has the target's lines; at file level, where a span is
    a file, re-scaled by the measured span length, and more days when a file is too long
    even without background notes (module docstring, step 3)."""
    per_file = float(target["units_per_workspace"]) / max(files, 1.0)
    probe = measure(replace(cfg, notes_per_day=0))
    base = probe["units_per_workspace"] / max(probe["files_per_workspace"], 1.0)
    per_note = 2.0 if cfg.style == "conversation" else 1.0  # a user turn and a reply
    cfg = replace(cfg, notes_per_day=_clamp((per_file - base) / per_note, 0, 200))
    want = target.get("span_lines")
    if cfg.level != "file" or not want:
        return cfg
    for _ in range(3):
        got = measure(cfg)["span_lines"] or 1.0
        if abs(got - want) <= TOLERANCES["span_lines"] * want / 2:
            break
        npd = cfg.notes_per_day + (want - got) / per_note
        if npd < 0 and "days" not in fixed:  # too many facts a day: spread them out
            days = _clamp(cfg.days * max(got - 1.0, 1.0) / max(want - 1.0, 1.0), 30, 1000)
            cfg = replace(cfg, days=days, notes_per_day=0)
        else:
            cfg = replace(cfg, notes_per_day=_clamp(npd, 0, 200))
    return cfg


def _confuse(
    target: dict[str, Any], measure: _Measure, cfg: SynthConfig, fixed: dict[str, Any]
) -> SynthConfig:
    """The look-alike lines for the target's distractor overlap (step 5)."""
    want, tol = target["distractor_overlap"], TOLERANCES["distractor_overlap"]
    plain = replace(cfg, confusability=None)
    natural = measure(plain)["distractor_overlap"]
    if abs(natural - want) <= tol:
        return plain
    if natural > want:
        cut = {"distractors_per_fact": 0, "update_versions": 1, "redundancy_copies": 1}
        return replace(plain, **{k: v for k, v in cut.items() if k not in fixed})
    for d in sorted({cfg.distractors_per_fact or 1, MAX_DISTRACTORS}):
        trial = replace(cfg, distractors_per_fact=d)

        def dist(c: float, t: SynthConfig = trial) -> float:
            return measure(replace(t, confusability=c))["distractor_overlap"]

        c = _bisect(dist, want, tol, True)
        out = replace(trial, confusability=c)
        if abs(measure(out)["distractor_overlap"] - want) <= tol or "distractors_per_fact" in fixed:
            return out
    return out


def _rows(target: dict[str, Any], got: dict[str, Any]) -> list[dict[str, Any]]:
    tol = TOLERANCES
    rows = []
    for key in ("term_overlap", "distractor_overlap"):
        t, g = target[key], got[key]
        rows.append(_row(key, t, g, f"±{tol[key]}", abs(g - t) <= tol[key]))
    t, g = target["span_lines"], got["span_lines"]
    rows.append(
        _row("span_lines", t, g, f"±{tol['span_lines']:.0%}", abs(g - t) <= tol["span_lines"] * t)
    )
    d = form_distance(target["forms"], got["forms"])
    rows.append(
        _row(
            "forms",
            target["forms"],
            got["forms"],
            f"TV {d:.3f} <= {tol['forms']}",
            d <= tol["forms"],
        )
    )
    rows.append(
        _row("style", target["style"], got["style"], "equal", target["style"] == got["style"])
    )
    return rows


def _row(name: str, target: Any, fitted: Any, tolerance: str, within: bool) -> dict[str, Any]:
    return {
        "statistic": name,
        "target": target,
        "fitted": fitted,
        "tolerance": tolerance,
        "within": bool(within),
    }
