"""The memory-flush configuration and its trigger rule (OpenClaw's pre-compaction flush).

Spec: ../shared/spec/openclaw-memory.md §9 — "When a session's token count reaches
contextWindow − reserveTokensFloor (20,000) − softThresholdTokens (4,000) (176k for a 200k
window), the agent gets one silent turn per compaction cycle to append durable notes to
today's ``memory/YYYY-MM-DD.md`` ... A transcript of 2 MiB or more forces a flush. Skipped
when the workspace is read-only." OpenClaw's ``memory-flush.ts`` (``shouldRunMemoryFlush``)
states the same rule in code: ``threshold = max(0, window − reserveFloor − soft)``, no
flush when ``threshold ≤ 0``, a flush when ``totalTokens ≥ threshold`` ("reaches") and the
session has not flushed in its current compaction cycle (``memoryFlushCompactionCount ==
compactionCount``); ``forceFlushTranscriptBytes`` defaults to ``2 * 1024 * 1024`` (0 turns
the byte rule off). Config keys: ``agents.defaults.compaction.memoryFlush.{enabled,
softThresholdTokens, forceFlushTranscriptBytes, prompt, systemPrompt}``,
``agents.defaults.compaction.reserveTokensFloor``, and the context window
``agents.defaults.contextTokens`` (OpenClaw's default 200,000 when the model's is unknown).

What the spec leaves open and memlab assumes (each a field, documented there): compaction
itself fires when the context passes ``window − reserveTokensFloor`` (pi's rule
``contextTokens > window − reserve``, the reserve at its floor), and keeps the most recent
turns up to ``keep_tokens`` (default 0: the whole context is summarised away); an agent
session starts over by ``reset`` (``never``: one long session, OpenClaw's main DM session;
``day``: a new session at each new date; ``session``: each data-set session is its own).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memlab.config.keys import check_key_tree, json_kind
from memlab.config.vocab import FLUSH_RESETS

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_SOFT_THRESHOLD_TOKENS = 4_000
DEFAULT_RESERVE_TOKENS_FLOOR = 20_000
DEFAULT_FORCE_FLUSH_TRANSCRIPT_BYTES = 2 * 1024 * 1024

# OpenClaw's strict memoryFlush object (memory-flush.ts's resolveMemoryFlushSettings reads
# these five); prompt and systemPrompt are what an LLM policy would send, memlab keeps them.
MEMORY_FLUSH_KEYS: dict[str, Any] = {
    "enabled": "bool",
    "softThresholdTokens": "int",
    "forceFlushTranscriptBytes": "bytes",
    "prompt": "str",
    "systemPrompt": "str",
}
_BYTE_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


@dataclass(frozen=True)
class FlushConfig:
    """The flush settings of one simulated agent (module docstring for the rule).

    ``enabled`` (True), ``soft_threshold_tokens`` (4,000), ``reserve_tokens_floor``
    (20,000), ``force_flush_transcript_bytes`` (2 MiB; 0 = off), ``context_window``
    (200,000) are OpenClaw's; ``reset`` (``never``), ``keep_tokens`` (0) and ``read_only``
    (False) are the simulation's assumptions; ``prompt`` / ``system_prompt`` are passed to a
    policy that calls an LLM (None = OpenClaw's defaults)."""

    enabled: bool = True
    soft_threshold_tokens: int = DEFAULT_SOFT_THRESHOLD_TOKENS
    reserve_tokens_floor: int = DEFAULT_RESERVE_TOKENS_FLOOR
    force_flush_transcript_bytes: int = DEFAULT_FORCE_FLUSH_TRANSCRIPT_BYTES
    context_window: int = DEFAULT_CONTEXT_WINDOW
    reset: str = "never"
    keep_tokens: int = 0
    read_only: bool = False
    prompt: str | None = None
    system_prompt: str | None = None
    source: str = field(default="defaults (openclaw-memory.md §9)", compare=False)

    def __post_init__(self) -> None:
        for name in (
            "soft_threshold_tokens",
            "reserve_tokens_floor",
            "force_flush_transcript_bytes",
            "keep_tokens",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer ≥ 0, got {v!r}")
        w = self.context_window
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"context_window must be an integer ≥ 1, got {w!r}")
        if self.reset not in FLUSH_RESETS:
            raise ValueError(f"reset must be one of {', '.join(FLUSH_RESETS)}; got {self.reset!r}")

    @property
    def threshold(self) -> int:
        """``flush_threshold`` of these settings (176,000 at the defaults)."""
        return flush_threshold(
            self.context_window, self.reserve_tokens_floor, self.soft_threshold_tokens
        )

    @property
    def compaction_limit(self) -> int:
        """``window − reserve_tokens_floor`` (180,000 at the defaults): a context past it is
        compacted (pi's ``contextTokens > window − reserve``)."""
        return max(0, self.context_window - self.reserve_tokens_floor)

    def with_(self, **changes: Any) -> FlushConfig:
        """A copy with ``changes`` (checked again)."""
        return replace(self, **changes)


def flush_threshold(
    context_window: int, reserve_tokens_floor: int, soft_threshold_tokens: int
) -> int:
    """``max(0, window − reserve − soft)``, each floored at 0 and the window at 1
    (memory-flush.ts): 200,000 − 20,000 − 4,000 = 176,000. 0 means no flush ever fires."""
    window = max(1, int(context_window))
    return max(0, window - max(0, int(reserve_tokens_floor)) - max(0, int(soft_threshold_tokens)))


def should_flush(
    cfg: FlushConfig,
    *,
    context_tokens: int,
    transcript_bytes: int,
    compaction_count: int,
    flushed_at_compaction: int | None,
) -> bool:
    """OpenClaw's trigger: enabled, not yet flushed in this compaction cycle
    (``flushed_at_compaction != compaction_count``), and either the context reaches the
    threshold (``context_tokens ≥ threshold > 0``) or the transcript reaches the force size
    (``force > 0 and transcript_bytes ≥ force``: 2 MiB, the byte rule). A read-only
    workspace still triggers: the caller skips the write (``simulate`` records
    ``skipped-read-only``)."""
    if not cfg.enabled or flushed_at_compaction == compaction_count:
        return False
    threshold = cfg.threshold
    by_tokens = threshold > 0 and context_tokens >= threshold
    force = cfg.force_flush_transcript_bytes
    by_bytes = force > 0 and transcript_bytes >= force
    return by_tokens or by_bytes


def parse_byte_size(value: Any, where: str) -> int:
    """A byte size: a non-negative integer, or a string ``N[.N]`` + ``b``/``k``/``kb``/
    ``kib``/``m``/``mb``/``mib``/``g``… (all binary: ``2mb`` = 2,097,152, as 2 MiB is
    OpenClaw's default). ``ValueError`` naming ``where`` otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        m = _BYTE_SIZE.match(value)
        if m:
            unit = (m.group(2) or "").lower()[:1]
            return int(float(m.group(1)) * _UNITS[unit])
    raise ValueError(f"{where} must be a byte size (an integer ≥ 0 or '2mb'), got {value!r}")


def _leaf_problem(kind: str, value: Any) -> str | None:
    ok = {
        "bool": isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool) and value >= 0,
        "str": isinstance(value, str),
        "bytes": True,  # parse_byte_size says what is wrong, with the value
    }[kind]
    return (
        None
        if ok
        else {"bool": "must be true or false", "int": "must be an integer ≥ 0"}.get(
            kind, "must be a string"
        )
    )


def flush_config_from_openclaw(
    data: Mapping[str, Any], source: str = "openclaw.json"
) -> FlushConfig:
    """The flush settings of an OpenClaw configuration object (parsed JSON5): missing keys
    take the spec's defaults. ``agents.defaults.compaction.memoryFlush`` is checked strictly
    (an unknown key is a ``ValueError`` naming it and the nearest valid one); other
    ``compaction`` keys (mode, reserveTokens …) belong to OpenClaw and are not read."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: the top level must be an object, got {json_kind(data)}")
    node: Any = data
    for key in ("agents", "defaults"):
        node = node.get(key, {}) if isinstance(node, Mapping) else None
        if not isinstance(node, Mapping):
            raise ValueError(f"{source}: {key} must be an object")
    defaults = node
    compaction = defaults.get("compaction", {})
    if not isinstance(compaction, Mapping):
        raise ValueError(f"{source}: agents.defaults.compaction must be an object")
    flush = compaction.get("memoryFlush", {})
    problems: list[str] = []
    where = "agents.defaults.compaction.memoryFlush"
    check_key_tree(flush, MEMORY_FLUSH_KEYS, where, problems, leaf_problem=_leaf_problem)
    if problems:
        raise ValueError(f"{source}: " + "; ".join(problems))
    kw: dict[str, Any] = {"source": source}
    if flush.get("enabled") is not None:
        kw["enabled"] = flush["enabled"]
    if flush.get("softThresholdTokens") is not None:
        kw["soft_threshold_tokens"] = flush["softThresholdTokens"]
    if flush.get("forceFlushTranscriptBytes") is not None:
        kw["force_flush_transcript_bytes"] = parse_byte_size(
            flush["forceFlushTranscriptBytes"], f"{source}: {where}.forceFlushTranscriptBytes"
        )
    for key, name in (("prompt", "prompt"), ("systemPrompt", "system_prompt")):
        if isinstance(flush.get(key), str) and flush[key].strip():
            kw[name] = flush[key]
    floor = compaction.get("reserveTokensFloor")
    if floor is not None:
        if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
            raise ValueError(
                f"{source}: agents.defaults.compaction.reserveTokensFloor must be an integer"
                f" ≥ 0, got {floor!r}"
            )
        kw["reserve_tokens_floor"] = floor
    window = defaults.get("contextTokens")
    if window is not None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(
                f"{source}: agents.defaults.contextTokens must be an integer ≥ 1, got {window!r}"
            )
        kw["context_window"] = window
    return FlushConfig(**kw)


def load_flush_config(path: str | os.PathLike[str]) -> FlushConfig:
    """``flush_config_from_openclaw`` of a JSON5 file; ``FileNotFoundError`` /
    ``ValueError`` naming the file."""
    import json5

    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"OpenClaw config not found: {p}")
    try:
        data = json5.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{p}: not valid JSON5 ({exc})") from exc
    return flush_config_from_openclaw(data, str(p))
