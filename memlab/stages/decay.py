"""The temporal decay stage: ``final = fused × m`` with m the chunk's decay multiplier.

``decay="exact"`` (OpenClaw's pin: dated ``memory/YYYY-MM-DD.md`` files only)
or ``"latest"`` (dated files at any depth); ``decay_kind`` exponential
(``m = 0.5^(age / half_life)``) or QMD's boost; evergreen files (``MEMORY.md``,
undated notes) keep m = 1. Ages are measured from each query's own time
(``CandidateSet.times``; the wall clock when it has none). The formulas live
in ``memlab.retrieval.rerank`` (``apply_decay``, ``file_timestamp``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memlab.retrieval.candidates import now_seconds
from memlab.retrieval.rerank import apply_decay, file_timestamp

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params
    from memlab.store import ChunkTable


def chunk_times(table: ChunkTable, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-chunk (timestamp seconds or NaN, evergreen) under a decay rule (``file_timestamp``
    once per (path, source, mtime)), kept with the table (``ChunkTable.derived``)."""

    def compute(t: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
        by_path: dict[tuple[str, str, float], tuple[float, bool]] = {}
        ts = np.full(len(t), np.nan)
        ev = np.zeros(len(t), dtype=bool)
        for i, (p, src, m) in enumerate(zip(t.paths, t.sources, t.mtimes, strict=True)):
            key = (p, src, m)
            if key not in by_path:
                stamp, e = file_timestamp(str(p), float(m) if m else None, rule, source=str(src))
                by_path[key] = (math.nan if stamp is None else stamp, e)
            ts[i], ev[i] = by_path[key]
        return ts, ev

    return table.derived(("times", rule), compute)


def decay_stage(p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``decay`` (the multiplier m, NaN where not valid) and ``final = fused × m``."""
    if p.decay == "openclaw-current":
        return current_decay(p, cs, st)
    ts, evergreen = chunk_times(cs.table, p.decay)
    pos = np.where(cs.valid, cs.pos, 0)
    now = now_seconds(cs.times)[:, None]
    final, mult = apply_decay(
        st["fused"],
        ts[pos],
        evergreen[pos],
        now,
        p.half_life_days,
        kind=p.decay_kind,
        weight=p.decay_weight,
    )
    return {"decay": np.where(st["valid"], mult, np.nan), "final": final}


def current_times_ms(table: ChunkTable) -> np.ndarray:
    """Per chunk, the time OpenClaw 2026.9.6 decays it from, in ms (NaN = never):
    ``memlab.openclaw_current.ranking.decay_timestamp_ms`` (dated path → its UTC
    midnight; evergreen memory → none; else the file's mtime, sessions by mtime)."""
    from memlab.openclaw_current.ranking import decay_timestamp_ms

    def compute(t: ChunkTable) -> np.ndarray:
        out = np.full(len(t), np.nan)
        memo: dict[tuple[str, str, float], float] = {}
        for i, (path, src, m) in enumerate(zip(t.paths, t.sources, t.mtimes, strict=True)):
            key = (str(path), str(src), float(m))
            if key not in memo:
                mt = {key[0]: key[2] * 1000.0} if m and math.isfinite(float(m)) else None
                ts = decay_timestamp_ms(key[0], key[1], mt)
                memo[key] = math.nan if ts is None else ts
            out[i] = memo[key]
        return out

    return table.derived(("times", "openclaw-current"), compute)


def current_decay(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``decay="openclaw-current"``: m = exp(−ln2/half_life · max(0, (now − t) / 1 day))
    with the release's float operations (``decay_multiplier``), now in ms = the query's
    time × 1000; m = 1 for a chunk with no time (evergreen)."""
    from memlab.openclaw_current.ranking import DAY_MS, decay_multiplier

    cand_ts = current_times_ms(cs.table)[np.where(cs.valid, cs.pos, 0)]
    now_ms = now_seconds(cs.times) * 1000.0
    valid = st["valid"]
    mult = np.where(valid, 1.0, np.nan)
    for qi, c in zip(*np.nonzero(valid & ~np.isnan(cand_ts)), strict=True):
        age = (float(now_ms[qi]) - float(cand_ts[qi, c])) / DAY_MS
        mult[qi, c] = decay_multiplier(age, p.half_life_days)
    # × 1.0 where a chunk has no time leaves its score bit-identical, as the release's skip
    return {"decay": mult, "final": np.where(valid, st["fused"] * mult, np.nan)}
