"""The memory-flush lifecycle, replayed turn by turn (OpenClaw, openclaw-memory.md §9).

For each conversation (``memlab.flush.transcript``), in time order: an agent session starts
(at the first turn, and again when ``FlushConfig.reset`` says so: a new date for ``day``,
every data-set session for ``session``); each turn adds its token estimate to the context
and its JSONL entry to the transcript; then

1. the flush check (``memlab.flush.config.should_flush``: threshold reached — 176,000 of a
   200k window — or transcript ≥ 2 MiB, once per compaction cycle): the policy gets the
   context's turns and its notes are appended to today's memory (``flush`` event), or,
   on a read-only workspace, nothing is written (``skipped-read-only``);
2. compaction when the context passes ``window − reserveTokensFloor`` (``compaction``
   event): the context keeps its most recent turns up to ``keep_tokens`` and a new cycle
   begins (the transcript on disk is not shortened: the byte rule keeps counting).

OpenClaw checks before the agent's reply, memlab after each turn is appended: the same
moment, one turn of granularity. The flush's own silent turn adds no tokens here. A
session reset drops the context unflushed: what never reached the threshold is in the
transcripts only — the question the experiment measures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlab.flush.config import FlushConfig, should_flush
from memlab.flush.policies import FlushPolicy, FlushWindow, Note
from memlab.flush.transcript import Conversation, Turn, turn_tokens


@dataclass(frozen=True)
class FlushedNote:
    """A written note: its conversation, flush ordinal (per conversation, from 0), the time
    of the session it was written in, the flush's session (index), text and sources."""

    group: str
    flush: int
    when: datetime
    session: int
    text: str
    sources: tuple[tuple[str, int], ...]

    @property
    def tokens(self) -> int:
        """Token estimate of the written line (``- `` + text)."""
        return turn_tokens("- " + self.text)


@dataclass
class FlushRun:
    """What a replay produced: the events (dicts: ``group, kind, session, turn, when,
    context_tokens, transcript_bytes, compactions``, plus ``notes`` for a flush) and the notes,
    per conversation in order; ``conversations`` as read."""

    config: FlushConfig
    policy: str
    conversations: list[Conversation]
    events: list[dict[str, Any]] = field(default_factory=list)
    notes: list[FlushedNote] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Counts over all conversations: sessions, turns, transcript tokens, agent sessions,
        flushes (written / skipped read-only / forced by bytes), compactions, notes, note
        tokens, turns covered by a note, and flushes per 100k transcript tokens."""
        kinds = [e["kind"] for e in self.events]
        tokens = sum(t.tokens for c in self.conversations for s in c.sessions for t in s.turns)
        covered = {(n.group, src) for n in self.notes for src in n.sources}
        flushes = kinds.count("flush")
        return {
            "conversations": len(self.conversations),
            "sessions": sum(len(c.sessions) for c in self.conversations),
            "turns": sum(len(s.turns) for c in self.conversations for s in c.sessions),
            "transcript_tokens": tokens,
            "agent_sessions": kinds.count("session-start"),
            "flushes": flushes,
            "flushes_by_bytes": sum(1 for e in self.events if e.get("by_bytes")),
            "skipped_read_only": kinds.count("skipped-read-only"),
            "compactions": kinds.count("compaction"),
            "notes": len(self.notes),
            "note_tokens": sum(n.tokens for n in self.notes),
            "turns_covered": len(covered),
            "flushes_per_100k_tokens": 1e5 * flushes / tokens if tokens else 0.0,
        }


def simulate(
    conversations: Iterable[Conversation],
    config: FlushConfig,
    policy: FlushPolicy,
    *,
    policy_name: str | None = None,
    budget_tokens: int | None = None,
    evidence: dict[str, frozenset[tuple[str, int]]] | None = None,
) -> FlushRun:
    """Replay every conversation under ``config`` with ``policy`` (module docstring).

    ``evidence``: per group, the ``(path, line)`` of evidence turns (``FlushWindow.evidence``,
    for ``oracle``); ``budget_tokens``: the window's budget (default
    ``policies.DEFAULT_BUDGET_TOKENS``). A note whose sources are not turns of its window
    (or has none) is a ``ValueError`` naming the policy: provenance must hold."""
    name = policy_name or getattr(policy, "__name__", "policy")
    run = FlushRun(config, name, list(conversations))
    for conv in run.conversations:
        replay(conv, config, policy, run, name, budget_tokens, (evidence or {}).get(conv.group))
    return run


def replay(
    conv: Conversation,
    cfg: FlushConfig,
    policy: FlushPolicy,
    run: FlushRun,
    name: str,
    budget_tokens: int | None,
    evidence: frozenset[tuple[str, int]] | None,
) -> None:
    """One conversation's lifecycle, appending to ``run`` (``simulate``)."""
    context: list[Turn] = []
    ctx_tokens = transcript = compactions = flushes = 0
    flushed_at: int | None = None
    started = False
    last_day = None

    def event(kind: str, si: int, turn: int, **extra: Any) -> None:
        run.events.append(
            {
                "group": conv.group,
                "kind": kind,
                "session": si,
                "turn": turn,
                "when": conv.sessions[si].when.isoformat(),
                "context_tokens": ctx_tokens,
                "transcript_bytes": transcript,
                "compactions": compactions,
                **extra,
            }
        )

    for si, sess in enumerate(conv.sessions):
        day = sess.when.date()
        new = not started or cfg.reset == "session" or (cfg.reset == "day" and day != last_day)
        last_day = day
        if new:
            context, ctx_tokens, transcript, compactions, flushed_at = [], 0, 0, 0, None
            started = True
            event("session-start", si, 0)
        for t in sess.turns:
            context.append(t)
            ctx_tokens += t.tokens
            transcript += t.nbytes
            if should_flush(
                cfg,
                context_tokens=ctx_tokens,
                transcript_bytes=transcript,
                compaction_count=compactions,
                flushed_at_compaction=flushed_at,
            ):
                flushed_at = compactions
                by_bytes = not (cfg.threshold > 0 and ctx_tokens >= cfg.threshold)
                if cfg.read_only:
                    event("skipped-read-only", si, t.index, by_bytes=by_bytes)
                else:
                    window = FlushWindow(
                        conv.group,
                        flushes,
                        sess.when,
                        list(context),
                        conv.sessions,
                        evidence=evidence or frozenset(),
                        prompt=cfg.prompt,
                        system_prompt=cfg.system_prompt,
                        **({} if budget_tokens is None else {"budget_tokens": budget_tokens}),
                    )
                    notes = policy(window)
                    check_provenance(notes, context, name)
                    run.notes.extend(
                        FlushedNote(conv.group, flushes, sess.when, si, n.text, n.sources)
                        for n in notes
                    )
                    event("flush", si, t.index, by_bytes=by_bytes, notes=len(notes))
                    flushes += 1
            if ctx_tokens > cfg.compaction_limit:
                compactions += 1
                context = keep_recent(context, cfg.keep_tokens)
                ctx_tokens = sum(x.tokens for x in context)
                event("compaction", si, t.index)


def keep_recent(turns: list[Turn], keep_tokens: int) -> list[Turn]:
    """The longest suffix of ``turns`` whose token estimates sum to ≤ ``keep_tokens``
    (0 → [])."""
    kept, used = [], 0
    for t in reversed(turns):
        if used + t.tokens > keep_tokens:
            break
        kept.append(t)
        used += t.tokens
    return kept[::-1]


def check_provenance(notes: list[Note], window: list[Turn], policy: str) -> None:
    """``ValueError`` naming ``policy`` when a note is not a `Note`, has empty text or no
    sources, or names a ``(path, line)`` that is not a turn of ``window``."""
    places = {(t.path, t.line) for t in window}
    for i, n in enumerate(notes):
        if not isinstance(n, Note) or not n.text.strip() or not n.sources:
            raise ValueError(f"flush policy {policy!r}: note {i} needs text and sources: {n!r}")
        bad = [s for s in n.sources if tuple(s) not in places]
        if bad:
            raise ValueError(
                f"flush policy {policy!r}: note {i} names {bad[0]}, not a turn of its window"
            )
