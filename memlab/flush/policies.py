"""Flush policies: what the agent writes in its silent pre-compaction turn.

A policy is a plain function ``policy(window: FlushWindow) -> list[Note]``: it sees the
turns about to be compacted and returns notes, each naming the turns it came from
(``Note.sources``, ``(path, line)`` of the source workspace). Plug in an LLM by writing
such a function (send ``window.prompt`` and ``window.text()``, map its lines back to
turns); ``simulate`` refuses a note whose sources are not turns of its window, so every
written note's provenance is true and relevance carries over to it.

The built-in policies (``POLICIES``; names in ``memlab.config.vocab.FLUSH_POLICIES``):

- ``none``: writes nothing (OpenClaw's ``NO_REPLY``; equivalently ``enabled: false``).
- ``extracted``: the memory points a data set's own LLM memory manager wrote for these
  turns (RealMem's per-session ``extracted_memory``, placed on their source turns), one
  note per point; nothing where the data carries none.
- ``extractive``: a baseline without a model, within ``window.budget_tokens``: candidates
  are the first sentence (cut at 200 characters) of every turn not spoken by ``Assistant``
  (users state facts; assistants elaborate), scored ``words + 2 × specifics`` — distinct
  words of 4+ letters outside a stop list, and distinct tokens holding a digit or a
  capital not at the sentence start (names, numbers, identifiers); taken best first (ties:
  the later turn) while the notes' token estimate fits the budget, written in time order.
- ``oracle``: every turn of the window that lies in a question's evidence, verbatim (the
  upper bound: the notes hold exactly what will be asked about; no budget).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from memlab.flush.transcript import SourceSession, Turn, turn_tokens

DEFAULT_BUDGET_TOKENS = 2_000
SENTENCE_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_WORD = re.compile(r"[^\W_]+|\S*\d\S*", re.UNICODE)
_LABEL = re.compile(r"^(?:\[[^\]]*\]\s*)?([^:]{1,60}):\s")
_STOP = frozenset(
    "about after again also been before being could does doing from have just like more most"
    " much only other over really same should some such than that their them then there these"
    " they this those very want were what when where which while will with would your yours"
    " into know think thanks thank yeah okay sure great good".split()
)


@dataclass(frozen=True)
class Note:
    """One line a flush writes: its text and the turns it came from, ``(path, line)`` in
    the source workspace."""

    text: str
    sources: tuple[tuple[str, int], ...]


@dataclass
class FlushWindow:
    """What a flush policy sees: the conversation's group, the flush's ordinal and time, the
    turns in the context (oldest first), their sessions (``sessions[turn.session]``), the
    token budget, the evidence lines (``(path, line)``, for ``oracle``) and OpenClaw's
    prompts (None = its defaults)."""

    group: str
    flush: int
    when: datetime
    turns: list[Turn]
    sessions: list[SourceSession]
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    evidence: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    prompt: str | None = None
    system_prompt: str | None = None

    def text(self) -> str:
        """The window as a transcript, one turn per line (what an LLM policy would send)."""
        return "\n".join(t.text for t in self.turns)


FlushPolicy = Callable[[FlushWindow], list[Note]]


def policy_none(window: FlushWindow) -> list[Note]:
    """Nothing is written (``NO_REPLY``)."""
    return []


def policy_extracted(window: FlushWindow) -> list[Note]:
    """One note per memory point the data set extracted from a turn of the window
    (``SourceSession.extracted``), in turn order; [] when it carries none."""
    out = []
    for t in window.turns:
        for point in window.sessions[t.session].extracted.get(t.index, []):
            out.append(Note(point, ((t.path, t.line),)))
    return out


def policy_oracle(window: FlushWindow) -> list[Note]:
    """Every turn of the window in ``window.evidence``, verbatim, in order."""
    return [
        Note(t.text, ((t.path, t.line),))
        for t in window.turns
        if (t.path, t.line) in window.evidence
    ]


def first_sentence(text: str, limit: int = SENTENCE_CHARS) -> str:
    """A turn's content (speaker label and ``[id]`` removed) up to its first ``.``/``!``/``?``
    followed by a space, cut at ``limit`` characters; "" for an empty turn."""
    m = _LABEL.match(text)
    content = text[m.end() :] if m else text
    head = _SENTENCE_END.split(content.strip(), maxsplit=1)[0]
    return head[:limit].strip()


def sentence_score(sentence: str) -> int:
    """``words + 2 × specifics`` (module docstring, ``extractive``)."""
    tokens = _WORD.findall(sentence)
    words = {w.lower() for w in tokens if len(w) >= 4 and w.isalpha() and w.lower() not in _STOP}
    specific = {
        w
        for i, w in enumerate(tokens)
        if any(c.isdigit() for c in w) or (i > 0 and w[:1].isupper())
    }
    return len(words) + 2 * len(specific)


def policy_extractive(window: FlushWindow) -> list[Note]:
    """The extractive baseline within ``window.budget_tokens`` (module docstring): each note
    ``first_sentence`` of a non-Assistant turn, chosen by ``sentence_score`` (ties: the later
    turn) while ``Σ turn_tokens(note) ≤ budget``; a budget of 0 writes nothing."""
    cands = []
    for pos, t in enumerate(window.turns):
        m = _LABEL.match(t.text)
        if m and m.group(1).strip().lower() == "assistant":
            continue
        s = first_sentence(t.text)
        if s:
            cands.append((sentence_score(s), pos, s, t))
    cands.sort(key=lambda c: (-c[0], -c[1]))
    used, chosen = 0, []
    for _score, pos, s, t in cands:
        cost = turn_tokens(s)
        if used + cost > window.budget_tokens:
            continue
        used += cost
        chosen.append((pos, Note(s, ((t.path, t.line),))))
    return [n for _, n in sorted(chosen, key=lambda c: c[0])]


POLICIES: dict[str, FlushPolicy] = {
    "none": policy_none,
    "extracted": policy_extracted,
    "extractive": policy_extractive,
    "oracle": policy_oracle,
}
