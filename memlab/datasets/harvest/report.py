"""The health of an agent's memory search, from its query log (``memlab harvest``'s report).

Over the harvested ``memory_search`` calls (:func:`query_log_report`):

- calls per day (UTC): per day, and the mean and largest over the days with a call;
- the share that errored (the call's result was an error, or never came);
- the share with no result, over the calls that did not error and whose result was read;
- the share re-asked within a minute: a call followed, in the same turn (no user message
  between) and from a later assistant message, by another call at most ``REASK_SECONDS``
  later: the agent reformulated or retried on its own;
- the query kinds (``memlab.retrieval.textquery.query_kind``);
- the distribution of the scores of the hits shown: count, mean, quartiles, extremes and
  a histogram over ``SCORE_BINS`` equal bins of [0, 1] (a score outside is counted in
  the end bin).

A share over no calls is None. :func:`format_report` prints it with harvest's summary.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memlab.config.vocab import QUERY_KINDS
from memlab.datasets.harvest.link import SearchCall
from memlab.retrieval.textquery import query_kind

__all__ = ["REASK_SECONDS", "SCORE_BINS", "format_report", "query_log_report", "reasked"]

REASK_SECONDS = 60.0
SCORE_BINS = 10


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def reasked(calls: Sequence[SearchCall]) -> set[str]:
    """The qids of the calls re-asked within ``REASK_SECONDS``: the next call of the same
    turn of the same session, from a later assistant message, comes at most that many
    seconds later (times known; calls of one message were sent together, not re-asked)."""
    out: set[str] = set()
    by_turn: dict[tuple[str, int], list[SearchCall]] = {}
    for c in calls:
        by_turn.setdefault((c.session, c.turn), []).append(c)
    for group in by_turn.values():
        timed = sorted((c for c in group if math.isfinite(c.time)), key=lambda c: c.time)
        for i, c in enumerate(timed):
            nxt = next((d for d in timed[i + 1 :] if d.entry != c.entry), None)
            if nxt is not None and nxt.time - c.time <= REASK_SECONDS:
                out.add(c.qid)
    return out


def query_log_report(calls: Sequence[SearchCall]) -> dict[str, Any]:
    """The query-log health of ``calls`` (module docstring): ``{"calls", "days",
    "calls_per_day": {"mean", "max", "by_day": {YYYY-MM-DD: n}}, "error_share",
    "no_result_share", "reasked_share", "kinds": {kind: n}, "shown_scores": {"n", "mean",
    "min", "p25", "median", "p75", "max", "histogram": {"edges", "counts"}}}``."""
    n = len(calls)
    by_day = Counter(
        datetime.fromtimestamp(c.time, UTC).strftime("%Y-%m-%d")
        for c in calls
        if math.isfinite(c.time)
    )
    per_day = sorted(by_day.items())
    errors = sum(c.error for c in calls)
    read = [c for c in calls if not c.error and c.hits is not None]
    empty = sum(not c.hits for c in read)
    kinds = Counter(query_kind(c.query) for c in calls)
    scores = np.array(
        [h.score for c in calls for h in (c.hits or ()) if math.isfinite(h.score)], dtype=float
    )
    edges = np.linspace(0.0, 1.0, SCORE_BINS + 1)
    counts, _ = np.histogram(np.clip(scores, 0.0, 1.0), bins=edges)
    dist: dict[str, Any] = {"n": int(scores.size)}
    for key, fn in (("mean", np.mean), ("min", np.min), ("max", np.max)):
        dist[key] = float(fn(scores)) if scores.size else None
    for key, q in (("p25", 25), ("median", 50), ("p75", 75)):
        dist[key] = float(np.percentile(scores, q)) if scores.size else None
    dist["histogram"] = {"edges": [round(float(e), 6) for e in edges], "counts": counts.tolist()}
    return {
        "calls": n,
        "days": len(per_day),
        "calls_per_day": {
            "mean": n_timed / len(per_day) if (n_timed := sum(by_day.values())) else None,
            "max": max(by_day.values()) if by_day else None,
            "by_day": dict(per_day),
        },
        "error_share": _share(errors, n),
        "no_result_share": _share(empty, len(read)),
        "reasked_share": _share(len(reasked(calls)), n),
        "kinds": {k: kinds.get(k, 0) for k in QUERY_KINDS},
        "shown_scores": dist,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def format_report(summary: Mapping[str, Any], health: Mapping[str, Any]) -> str:
    """Harvest's printed report: what was read and written (``summary``: sessions, calls,
    queries, shown hits placed, implicit spans, dropped and skipped by reason) and the
    query log's health (:func:`query_log_report`)."""
    s = summary
    lines = [
        f"transcripts: {s['places']}",
        f"sessions {s['sessions']}, entries {s['entries']}, memory_search calls {s['calls']},"
        f" queries {s['queries']} ({s['errors']} errored)",
        f"hits shown {s['shown']}: placed in shown.trec {s['shown_placed']}",
        f"implicit spans {s['evidence']}: " + _counts(s["evidence_by_signal"]),
        f"queries with a same-day log {s['same_day_log']}",
    ]
    for title, key in (("evidence dropped", "dropped"), ("hits not placed", "shown_dropped")):
        if s[key]:
            lines.append(f"{title}: " + _counts(s[key]))
    if s["skipped"]:
        lines.append("skipped: " + _counts(s["skipped"]))
    h = health
    cpd = h["calls_per_day"]
    lines += [
        "",
        "query log",
        f"  calls per day     mean {_num(cpd['mean'])}, max {cpd['max'] or 0}"
        f" over {h['days']} day(s)",
        f"  errored           {_pct(h['error_share'])}",
        f"  no result         {_pct(h['no_result_share'])}",
        f"  re-asked <= {REASK_SECONDS:.0f} s  {_pct(h['reasked_share'])}",
        "  query kinds       " + _counts(h["kinds"]),
    ]
    d = h["shown_scores"]
    lines.append(
        f"  shown scores      n {d['n']}, mean {_num(d['mean'])}, min {_num(d['min'])},"
        f" p25 {_num(d['p25'])}, median {_num(d['median'])}, p75 {_num(d['p75'])},"
        f" max {_num(d['max'])}"
    )
    return "\n".join(lines)


def _counts(c: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.items()) or "none"
