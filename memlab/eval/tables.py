"""Eval and sweep tables written as Markdown, LaTeX or CSV (``--format``), for a report or
a paper.

An experiment's table (`experiment_table`) gives per system the questions scored, each
metric's mean with its 95 % bootstrap CI and, where labels are partial, judged@k. In
Markdown and LaTeX the systems get letters (a, b, c …) and a mean carries, as superscript,
the letters of the systems it beats significantly, as ranx's reports mark them: every pair
of systems is tested on every metric (the experiment's paired test), Holm-corrected over
the pairs of that metric, and the best mean of a metric is bold. LaTeX is a booktabs
``tabular``. CSV holds the numbers (mean, low, high, judged@k) and, per metric, the systems
each one beats (``;``-separated). A sweep's table (`sweep_table`) is its curve: the
setting, mean, CI (and held-out mean).
"""

from __future__ import annotations

import csv
import io
import itertools
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.config.vocab import TABLE_FORMATS
from memlab.eval.judged import judged_columns
from memlab.eval.significance import holm, paired_p
from memlab.eval.summary import ci_cell

if TYPE_CHECKING:
    from memlab.eval.experiment import ExperimentResult
    from memlab.eval.sweep import SweepResult

__all__ = ["experiment_table", "pairwise_wins", "render", "sweep_table"]

_SUPERSCRIPT = dict(zip(string.ascii_lowercase, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ", strict=True))


def _letter(i: int) -> str:
    """a … z, then aa, ab …: a system's mark in the table."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = string.ascii_lowercase[r] + s
    return s


def pairwise_wins(res: ExperimentResult, metric: str) -> dict[str, list[str]]:
    """{system: the systems whose mean it beats significantly on ``metric``}: every pair
    tested with the experiment's paired test (``info["test"]``: t-test or randomization)
    over the scored questions, Holm-corrected over the pairs of this metric, significant at
    the experiment's alpha, the winner being the pair's higher mean. One system: {}."""
    wide = res.wide(metric)
    names = list(wide.columns)
    pairs = list(itertools.combinations(names, 2))
    out: dict[str, list[str]] = {n: [] for n in names}
    if not pairs or len(wide) < 2:
        return out
    test = res.info.get("test", "ttest")
    pvals = []
    for a, b in pairs:
        x, y = wide[a].to_numpy(np.float64), wide[b].to_numpy(np.float64)
        pvals.append(paired_p(x, y, test))
    alpha = float(res.info.get("alpha", 0.01))
    for (a, b), p in zip(pairs, holm(pvals), strict=True):
        ma, mb = float(res.table.loc[a, metric]), float(res.table.loc[b, metric])
        if p <= alpha and ma != mb:
            win, lose = (a, b) if ma > mb else (b, a)
            out[win].append(lose)
    return out


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, **latex: Any) -> str:
    """``rows`` under ``headers`` as ``fmt`` (``vocab.TABLE_FORMATS`` but ``text``):
    a GitHub Markdown table, a booktabs LaTeX ``table`` (``latex``: ``caption``,
    ``align``, ``escape`` = False for cells that are LaTeX already) or CSV."""
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(headers)
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt == "markdown":
        line = lambda cells: "| " + " | ".join(str(c) for c in cells) + " |"  # noqa: E731
        return "\n".join([line(headers), line(["---"] * len(headers)), *map(line, rows)])
    if fmt == "latex":
        esc = _latex_escape if latex.get("escape", True) else str
        align = latex.get("align") or "l" * len(headers)
        body = [" & ".join(esc(str(c)) for c in r) + r" \\" for r in rows]
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            *([rf"\caption{{{latex['caption']}}}"] if latex.get("caption") else []),
            rf"\begin{{tabular}}{{{align}}}",
            r"\toprule",
            " & ".join(rf"\textbf{{{_latex_escape(h)}}}" for h in headers) + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
        ]
        return "\n".join(lines)
    raise ValueError(f"format must be one of {', '.join(TABLE_FORMATS[1:])}; got {fmt!r}")


def _latex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&")):
        text = text.replace(a, b)
    return text.replace("#", r"\#").replace("$", r"\$")


def experiment_table(res: ExperimentResult, fmt: str, digits: int = 3) -> str:
    """An experiment's table as ``fmt`` (module docstring)."""
    names = [s.name for s in res.systems]
    letters = {n: _letter(i) for i, n in enumerate(names)}
    judged = judged_columns(res.table)
    wins = {m: pairwise_wins(res, m) for m in res.metrics}
    t = res.table
    if fmt == "csv":
        headers = ["system", "n"]
        for m in res.metrics:
            headers += [m, f"{m} low", f"{m} high", f"{m} beats"]
        headers += judged
        rows = []
        for n in names:
            row: list[Any] = [n, int(t.loc[n, "n"])]
            for m in res.metrics:
                row += [_num(t.loc[n, m]), _num(t.loc[n, f"{m} low"]), _num(t.loc[n, f"{m} high"])]
                row.append(";".join(wins[m][n]))
            rows.append(row + [_num(t.loc[n, c]) for c in judged])
        return render(headers, rows, "csv")
    # every system at the best rounded mean is bold (ties are not broken by table order)
    best = {
        m: set(t.index[t[m].astype(float).round(digits) == t[m].astype(float).round(digits).max()])
        for m in res.metrics
    }
    rows = []
    for n in names:
        row = [letters[n], n, str(int(t.loc[n, "n"]))]
        for m in res.metrics:
            mean = f"{t.loc[n, m]:.{digits}f}"
            ci = ci_cell(t.loc[n], m).strip()
            marks = "".join(letters[w] for w in wins[m][n])
            if fmt == "latex":
                mean = rf"\textbf{{{mean}}}" if n in best[m] else mean
                absent = "".join(letters[o] for o in names if o != n and o not in wins[m][n])
                sup = f"$^{{{marks}}}$" if marks else ""
                pad = rf"\hphantom{{$^{{{absent}}}$}}" if absent else ""
                row.append(rf"{mean}{sup}{pad} {{\scriptsize {ci}}}")
            else:
                mean = f"**{mean}**" if n in best[m] else mean
                row.append(f"{mean}{''.join(_SUPERSCRIPT.get(c, c) for c in marks)} {ci}")
        row += [f"{t.loc[n, c]:.2f}" for c in judged]
        rows.append(row)
    headers = ["#", "system", "n", *res.metrics, *judged]
    test = {"ttest": "paired t-test", "randomization": "paired randomization test"}.get(
        str(res.info.get("test")), str(res.info.get("test"))
    )
    note = (
        f"Mean over the n questions with its 95 % bootstrap CI; best in bold. A superscript"
        f" letter marks a system this one beats ({test}, Holm over the pairs of a metric,"
        f" p <= {res.info.get('alpha', 0.01)})."
    )
    if fmt == "latex":
        esc = [[_latex_escape(str(c)) for c in r[:3]] + list(r[3:]) for r in rows]
        align = "cl" + "r" * (1 + len(res.metrics) + len(judged))
        return render(headers, esc, "latex", caption=_latex_escape(note), align=align, escape=False)
    return render(headers, rows, fmt) + f"\n\n{note}"


def sweep_table(res: SweepResult, fmt: str, metric: str | None = None, digits: int = 4) -> str:
    """A sweep's curve for ``metric`` (default: the first) as ``fmt``: every setting
    parameter, the effective weights when the fusion reads them, ``mean`` with its
    ``low``/``high`` CI and, with a split, ``test_mean``."""
    d = res.curve(metric)
    eff = [c for c in ("vector_weight_eff", "text_weight_eff") if c in d.columns]
    cols = [*res.setting_params, *eff, "mean", "low", "high"] + (["test_mean"] if res.train else [])
    rows = [
        [_num(v) if fmt == "csv" else _cell(v, digits) for v in r]
        for r in d.loc[:, cols].itertuples(index=False)
    ]
    caption = (
        f"{metric or res.metrics[0]} per setting: mean over the "
        f"{'train' if res.train else 'scored'} questions with its 95 % bootstrap CI"
        + ("; test_mean on the held-out questions" if res.train else "")
    )
    if fmt == "latex":
        return render(cols, rows, "latex", caption=_latex_escape(caption), align="r" * len(cols))
    out = render(cols, rows, fmt)
    return out if fmt == "csv" else out + f"\n\n{caption}"


def _num(v: Any) -> Any:
    if isinstance(v, float | np.floating):
        return "" if np.isnan(v) else repr(float(v))
    return v.item() if isinstance(v, np.generic) else v


def _cell(v: Any, digits: int) -> str:
    if isinstance(v, float | np.floating):
        return (
            "" if np.isnan(v) else f"{float(v):.{digits}g}" if abs(v) >= 10 else f"{v:.{digits}f}"
        )
    return str(v)
