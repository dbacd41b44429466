"""What the demo prints and saves besides its steps: the wrapped prose (`wrap_lines`), the
numbers' formats, what a weight sweep chose (`tuning_summary`), the slide table
(`slide_table`), the synthetic part's figures for the conclusion (`synthetic_figures`)
and the sweep plot (`plot_weight_sweep`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.demo.settings import BASELINE, CONFIDENCE, METRIC, METRICS, N_RESAMPLES, WIDTH

if TYPE_CHECKING:
    import pandas as pd

    from memlab.eval.experiment import ExperimentResult
    from memlab.eval.sweep import SweepResult
    from memlab.pipeline import Pipeline

__all__ = [
    "ci_text",
    "effective_share",
    "format_p",
    "plot_weight_sweep",
    "signed_text",
    "slide_table",
    "synthetic_figures",
    "tuning_summary",
    "wrap_lines",
]


def effective_share(vector_weight: float, text_weight: float) -> float:
    """The vector leg's share of a weighted-sum fusion after OpenClaw's clamp and
    renormalisation (``Pipeline.effective_weights``: v / (v + t), both 0 → 0.7)."""
    from memlab.pipeline.presets import wsum_preset

    return wsum_preset(
        vector_weight=float(vector_weight), text_weight=float(text_weight)
    ).effective_weights()[0]


def wrap_lines(text: str, width: int = WIDTH) -> str:
    """Each line of ``text`` wrapped at ``width`` columns, continuation lines indented like
    the line (6 columns after a ``[n/8]`` step label, 2 after a footnote); words — numbers,
    CIs, ``0.7/0.3`` — are never split."""
    import textwrap

    out = []
    for line in text.split("\n"):
        lead = len(line) - len(line.lstrip(" "))
        indent = 6 if line.startswith("[") or lead >= 6 else lead + 2
        out.append(
            textwrap.fill(
                line,
                width,
                subsequent_indent=" " * indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            if len(line) > width
            else line
        )
    return "\n".join(out)


def format_p(p: float, eq: bool = False) -> str:
    """p to 3 decimals, ``<0.001`` below; ``eq`` gives ``= 0.123`` / ``< 0.001`` for prose."""
    if p < 0.001:
        return "< 0.001" if eq else "<0.001"
    return f"= {p:.3f}" if eq else f"{p:.3f}"


def signed_text(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` decimals with its sign always shown (``+0.012``), a negative
    one with the typographic minus (``−0.012``)."""
    s = f"{x:+.{digits}f}"
    return s.replace("-", "−") if x < 0 else s


def ci_text(low: float, high: float, digits: int = 3, signed: bool = False) -> str:
    """A confidence interval as ``[low, high]`` to ``digits`` decimals; ``signed`` shows
    each bound's sign (`signed_text`), as for a difference."""
    f = (lambda v: signed_text(v, digits)) if signed else (lambda v: f"{v:.{digits}f}")
    return f"[{f(low)}, {f(high)}]"


def tuning_summary(sw: SweepResult, best: dict[str, Any], base: Pipeline, tuned: Pipeline) -> str:
    """The lines that report what a 1-D ``vector_weight`` sweep chose: the effective
    weights of ``tuned`` (``v/(v+t)``), its train mean and CI, the tied weights (train
    means within 1e-12 of the best; from ``best["tied"]``, else counted on the curve)
    with the tie rule, the plateau when it spans more than one grid point, the curve's
    min/max/spread and its value at 0.70, and the sweep's warnings. Never a bare
    number from a tie."""
    import numpy as np
    import pandas as pd

    curve = sw.curve(METRIC)
    tw = (
        curve["text_weight"] if "text_weight" in curve else pd.Series(base.text_weight, curve.index)
    )
    shares = [effective_share(v, t) for v, t in zip(curve["vector_weight"], tw, strict=True)]
    means = curve["mean"].to_numpy(float)
    w = effective_share(tuned.vector_weight, tuned.text_weight)
    lines = [
        f"      chosen: vector {w:.2f} / text {1 - w:.2f} (effective weights of the scored"
        f" system); train {METRIC} {best['train_mean']:.3f}"
        f" {ci_text(best['low'], best['high'])}"
    ]
    tied = best.get("tied")
    if tied is None:  # a sweep without tie reporting: count exact ties of the maximum
        top = means.max()
        tied = [
            {"vector_weight": s} for s, m in zip(shares, means, strict=True) if m >= top - 1e-12
        ]
    tied_shares = sorted(
        {
            round(effective_share(t["vector_weight"], t.get("text_weight", base.text_weight)), 4)
            for t in tied
        }
        if tied and "text_weight" in tied[0]
        else {round(float(t["vector_weight"]), 4) for t in tied}
    )
    if len(tied_shares) > 1:
        lines.append(
            f"      tied on train: {len(tied_shares)} weights from {tied_shares[0]:.2f} to"
            f" {tied_shares[-1]:.2f} score the same {METRIC}"
            + (f"; rule among ties: {best['rule']}" if best.get("rule") else "")
        )
    else:
        lines.append("      no other weight ties it on train")
    plateau = best.get("plateau")
    if plateau and plateau.get("n", 1) > 1:
        lines.append(
            f"      plateau: the chosen weight lies in a run of {plateau['n']} tied grid points,"
            f" {plateau.get('param', 'vector_weight')} {plateau['low']:.2f}–{plateau['high']:.2f}"
        )
    spread = best.get("spread", float(means.max() - means.min()))
    lines.append(
        f"      curve over the grid: train {METRIC} from {means.min():.3f} to {means.max():.3f}"
        f" (spread {spread:.3f}); at 0.70: "
        + (
            f"{means[int(np.argmin(np.abs(np.asarray(shares) - 0.7)))]:.3f}"
            if min(abs(s - 0.7) for s in shares) < 1e-9
            else "not on the grid"
        )
    )
    if w <= min(shares) + 1e-9 or w >= max(shares) - 1e-9:
        leg = "keyword" if w < 0.5 else "vector"
        lines.append(
            f"      {w:.2f} is the end of the grid: the fused score is the {leg} leg's alone"
            f" (the other leg still contributes candidates)"
        )
    inside = any(abs(s - 0.7) < 1e-9 for s in tied_shares)
    if inside and abs(w - 0.7) > 1e-9:
        lines.append("      0.70 is one of the tied weights: on train, tuning does not beat it")
    for msg in getattr(sw, "warnings", None) or []:
        lines.append(f"      warning: {msg}")
    return "\n".join(lines)


def slide_table(
    res: ExperimentResult,
    systems: list[Pipeline],
    labels: dict[str, str],
    seed: int,
) -> tuple[str, pd.DataFrame]:
    """The slide table: per system its candidate generation, recall@6 with a bootstrap CI,
    the paired difference to the baseline with its CI and Holm p, better/same/worse
    counts and the other metrics. Returns the text and the numbers."""
    import numpy as np
    import pandas as pd

    from memlab.eval.significance import bootstrap_ci, win_tie_loss
    from memlab.stages.floor import threshold_text

    wide = res.wide(METRIC)
    base = wide[BASELINE].to_numpy(float)
    rows = []
    for s in systems:
        x = wide[s.name].to_numpy(float)
        low, high = bootstrap_ci(x, CONFIDENCE, N_RESAMPLES, seed)
        row: dict[str, Any] = {
            "system": labels.get(s.name, s.name),
            "keywords": (s.keyword_mode.upper() if s.keyword else "—"),
            "fusion": (
                s.fusion if (s.keyword and s.vector) else ("vector" if s.vector else "keyword")
            ),
            "minScore": threshold_text(s),
            METRIC: float(x.mean()),
            "low": low,
            "high": high,
        }
        if s.name == BASELINE:
            row.update(delta=np.nan, d_low=np.nan, d_high=np.nan, p_holm=np.nan, wtl="baseline")
        else:
            d = x - base
            dl, dh = bootstrap_ci(d, CONFIDENCE, N_RESAMPLES, seed)
            w, t, lo = win_tie_loss(x, base)
            row.update(
                delta=float(d.mean()),
                d_low=dl,
                d_high=dh,
                p_holm=float(res.table.loc[s.name, f"{METRIC} p_adj"]),
                wtl=f"{w}/{t}/{lo}",
            )
        for m in METRICS[1:]:
            row[m] = float(res.table.loc[s.name, m])
        rows.append(row)
    df = pd.DataFrame(rows)
    cells = []
    for r in rows:
        base_row = r["wtl"] == "baseline"
        cells.append(
            {
                "system": r["system"],
                "keywords": r["keywords"],
                "minScore": r["minScore"],
                METRIC: f"{r[METRIC]:.3f}",
                "95% CI": ci_text(r["low"], r["high"]),
                "Δ vs 0.7/0.3": "—" if base_row else signed_text(r["delta"]),
                "95% CI of Δ*": "—" if base_row else ci_text(r["d_low"], r["d_high"], signed=True),
                "p (Holm)": "—" if base_row else format_p(r["p_holm"]),
                "better/same/worse": "—" if base_row else r["wtl"],
                **{m: f"{r[m]:.3f}" for m in METRICS[1:]},
            }
        )
    cols = list(cells[0])
    right = {METRIC, "Δ vs 0.7/0.3", "p (Holm)", *METRICS[1:]}
    widths = {c: max(len(c), *(len(r[c]) for r in cells)) for c in cols}

    def line(r: dict[str, str]) -> str:
        return "  ".join(
            r[c].rjust(widths[c]) if c in right else r[c].ljust(widths[c]) for c in cols
        )

    text = [line({c: c for c in cols}), "  ".join("─" * widths[c] for c in cols)]
    text += [line(r) for r in cells]
    return "\n".join(text), df


def synthetic_figures(
    numbers: pd.DataFrame,
    systems: list[Pipeline],
    tuned_name: str,
    w_tuned: float,
    drop: dict[str, str],
) -> dict[str, Any]:
    """The synthetic part's figures for ``memlab.demo.real.conclusion``: per system (a
    repeated one under each of its names) its recall@6, Δ vs 0.7/0.3 with its CI and p."""
    import math

    per: dict[str, Any] = {}
    for s, r in zip(systems, numbers.to_dict("records"), strict=True):
        base_row = r["wtl"] == "baseline"
        per[s.name] = {
            "mean": r[METRIC],
            "delta": 0.0 if base_row else r["delta"],
            "ci": (0.0, 0.0) if base_row else (r["d_low"], r["d_high"]),
            "p": math.nan if base_row else r["p_holm"],
        }
    for other, kept in drop.items():
        per[other] = per[kept]
    return {"systems": per, "tuned": tuned_name, "tuned_weight": w_tuned}


def plot_weight_sweep(
    sw: SweepResult, base: Pipeline, w_tuned: float, n_train: int, n_test: int, path: Path
) -> None:
    """The train curve with its bootstrap band and the held-out curve against the effective
    vector weight, OpenClaw's 0.7 and the tuned weight marked."""
    import pandas as pd

    from memlab.viz import plot_sweep

    curve = sw.curve(METRIC)
    tw = (
        curve["text_weight"] if "text_weight" in curve else pd.Series(base.text_weight, curve.index)
    )
    table = pd.DataFrame(
        {
            "vector_weight": [
                effective_share(v, t) for v, t in zip(curve["vector_weight"], tw, strict=True)
            ],
            "metric": METRIC,
            "mean": curve["mean"].to_numpy(float),
            "low": curve["low"].to_numpy(float),
            "high": curve["high"].to_numpy(float),
            "test_mean": curve["test_mean"].to_numpy(float),
        }
    )
    refs = {"OpenClaw": 0.7}
    if abs(w_tuned - 0.7) > 1e-9:
        refs["tuned"] = w_tuned
    plot_sweep(
        table,
        METRIC,
        reference=refs,
        mark_best=False,
        path=path,
        title=f"weighted sum on the OR keyword leg: train n={n_train}, held-out n={n_test}",
    )
