"""The conversation style of a synthetic workspace (``SynthConfig(style="conversation")``).

A day is one user–assistant session, ``memory/YYYY-MM-DD.md``, written as the converted
conversation benchmarks are (LoCoMo, BEAM, RealMem: ``memlab.datasets.convwriter``): a
heading ``## Session YYYY-MM-DD (Weekday)``, then one line per turn. Each note of the day
— background and facts alike, in an order shuffled per day — is a ``User:`` turn, and the
assistant answers it with a short reply (``realism_wording.ACKS``) that names nothing. So a
fact is one user turn inside a session of talk about other things, and a question's
evidence is that turn (or, at ``level="file"``, the whole session). There is no
``MEMORY.md``: a note meant for it is said in a session on a random day.
"""

from __future__ import annotations

import datetime as dt
import random

from memlab.datasets.synthetic import realism_wording as rw

__all__ = ["render_session", "session_heading"]

# Not strftime("%A"): that one follows the locale, and a corpus is the same everywhere.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def session_heading(date: dt.date) -> str:
    """``## Session 2026-03-03 (Tuesday)``: the session's date and weekday."""
    return f"## Session {date.isoformat()} ({_WEEKDAYS[date.weekday()]})"


def render_session(
    date: dt.date,
    items: list[str | int],
    notes: list[tuple[int, str, str]],
    path: str,
    where: list[tuple[str, int] | None],
    rng: random.Random,
) -> str:
    """The text of one session: the heading, then per item (a background line ``"- …"``,
    or a note's index into ``notes``) in an order shuffled by ``rng`` a ``User:`` turn and
    an ``Assistant:`` reply drawn from ``rng``. Records (``path``, line) of each placed
    note's user turn in ``where``."""
    order = list(items)
    rng.shuffle(order)
    lines = [session_heading(date)]
    for it in order:
        if isinstance(it, int):
            lines.append("User: " + notes[it][2])
            where[it] = (path, len(lines))
        else:
            lines.append("User: " + it.removeprefix("- "))
        lines.append("Assistant: " + rng.choice(rw.ACKS))
    lines.append("")
    return "\n".join(lines)
