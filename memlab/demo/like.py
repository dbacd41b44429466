"""The demo's synthetic half fitted to its real half, and the lesson as a function of
term overlap.

``memlab demo`` generates its synthetic corpus ``--like`` the shipped RealMem persona
(``memlab.datasets.synthetic.fit``): the persona's statistics (``memlab.eval.stats``,
words only) are the target, and the fitted knobs — paraphrase, confusability, style,
level, the question mix, the size — are printed beside it, so the two halves are
comparable. Its last step asks the question at other paraphrase levels of the same
fitted corpus (every other knob kept), places the persona by its own overlap on that
curve, and says what the curve predicts for it against what the persona's own sweep
found (``memlab.eval.realism``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

__all__ = ["LESSON_LEVELS", "fit_to_persona", "lesson_lines", "lesson_points"]

# The paraphrase levels of the last step's curve (the fitted corpus is a point too).
LESSON_LEVELS = (0.0, 0.5, 1.0)


def fit_to_persona(
    out: Path,
    *,
    seed: int,
    days: int | None,
    notes_per_day: int | None,
    queries_per_type: int | None,
) -> tuple[Any, dict[str, Any]] | None:
    """(the ``LikeFit``, the persona's statistics) for the shipped persona, the sizes given
    kept as given (None: fitted); None when the persona is not there (an installed package
    without the checkout). Writes the converted persona under ``out/realmem/data`` (the
    real half reads it there)."""
    from memlab.datasets.realmem import load_realmem
    from memlab.datasets.synthetic.fit import fit_like
    from memlab.demo.real import shipped_persona
    from memlab.eval.stats import corpus_stats

    src = shipped_persona()
    if src is None:
        return None
    stats = corpus_stats(load_realmem(src, out / "realmem" / "data"))
    stats.pop("per_query")
    sizes = {"days": days, "notes_per_day": notes_per_day, "queries_per_type": queries_per_type}
    fixed = {k: v for k, v in sizes.items() if v is not None}
    return fit_like(stats, seed=seed, fixed=fixed), stats


def lesson_points(
    config: Any, out: Path, embedder: Any, metric: str, progress: bool | None
) -> list[Any]:
    """The curve of the last step: ``config`` (the fitted one) at each of ``LESSON_LEVELS``
    and at its own level, each corpus under ``out/lesson`` (reused when it holds that
    config's corpus), indexed as the real half is (one line per unit, the corpus's level),
    each a ``memlab.eval.realism.Point`` scored with ``metric``."""
    from memlab.datasets.base import load_folder
    from memlab.datasets.synthetic import generate, generated_with
    from memlab.eval.lab import Lab
    from memlab.eval.realism import measure_points
    from memlab.eval.stats import corpus_stats

    levels = sorted({*LESSON_LEVELS, float(config.paraphrase or 0.0)})
    points = []
    for level in levels:
        cfg = replace(config, paraphrase=level)
        folder = out / "lesson" / f"p{round(level * 100):03d}"
        ds = load_folder(folder) if generated_with(folder, cfg) else None
        ds = ds or generate(cfg, folder, overwrite=True)
        lab = Lab(
            ds,
            embedder=embedder,
            unit="turn",
            level=ds.info.get("level", "unit"),
            index_dir=folder.parent / f"index-p{round(level * 100):03d}",
            progress=progress,
        )
        name = f"paraphrase {level:.2f}"
        stats = {name: corpus_stats(ds)}
        points += measure_points(
            lab,
            {name: ds.queries["qid"].tolist()},
            metric,
            stats,
            style=config.style,
            paraphrase={name: level},
        )
    return points


def lesson_lines(points: list[Any], persona: Any, fitted_level: float) -> list[str]:
    """The lesson as prose: the tuned weight's plateau at each overlap of the curve, then
    the persona placed on it (its overlap, the predicted weight, its own plateau, inside or
    not, and the presets' order agreement)."""
    from memlab.eval.realism import place

    line = sorted(points, key=lambda p: -p.overlap)
    steps = "; ".join(
        f"overlap {p.overlap:.2f} → {p.low:.2f}–{p.high:.2f}"
        + (" (the fitted corpus)" if abs((p.paraphrase or 0) - fitted_level) < 1e-9 else "")
        for p in line
    )
    r = place(persona, line)
    hi, lo = line[0], line[-1]
    shift = lo.middle - hi.middle
    trend = "more" if shift > 0.05 else "less" if shift < -0.05 else "about the same"
    return [
        f"On corpora like the persona, reworded from none to all of their evidence's words,"
        f" the tuned vector weight's plateau (weights within max(0.01, 1/n) of the best) is:"
        f" {steps}. The fewer words a question shares with its evidence, the {trend} weight"
        " the vector leg earns: a tuned weight is a function of the corpus, not a constant.",
        f"The persona asks with overlap {persona.overlap:.2f} (its best other session"
        f" {persona.distractor:.2f}): the curve predicts a vector weight of {r['predicted']:.2f};"
        f" its own plateau, on all its queries, is {persona.low:.2f}–{persona.high:.2f} —"
        f" {'inside' if r['inside'] else 'outside'}. The presets' order on the persona"
        f" against the curve's at that overlap: Kendall tau {r['tau']:.2f} (best preset"
        f" {r['best_preset']} there, {r['predicted_best_preset']} predicted).",
    ]
