"""The identifier tier: a unit that holds an identifier the query names ranks above every
unit that holds fewer of them (``identifier_tier``, off by default).

Agents send ``memory_search`` bare identifiers as often as questions: a commit
(``a828e60``), a ticket (``INC-3317``), a host and port, an IP, a path. A hybrid score can
rank the unit holding it below a semantically closer one, and a near miss one edit away
(``INC-3502``) shares most of its tokens. OpenClaw 2026.9.6 lets exact path matches lead
(its ``exact_tiers``); this stage does the same for the identifiers of the query text
(``memlab.retrieval.textquery.identifier_terms``, the one rule of what an identifier is):

    ids_held = number of the query's identifiers the unit's text or its file's path
               holds verbatim (``memlab.retrieval.textquery.identifier_pattern``:
               case-insensitive, whole word)
    id_tier  = ids_held × (max final − min final over the query's valid candidates + 1)
    final   += id_tier

so, the offset exceeding the query's whole score range, units are ordered by ``ids_held``
first and by their score within a tier, while the score stays a score: a chunk ranked by
its best line (``best_line``) inherits its line's tier, and the order steps that follow
(MMR, new-line order, selection) read one array. A query that names no identifier
(``ids_held`` 0 everywhere) keeps every score bit for bit. Only keyword hits' texts are
read (a unit holding an identifier verbatim matches the keyword query's tokens); every
candidate's path is (a dated query ``2026-03-03`` names the day's log).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memlab.retrieval.textquery import identifier_pattern, identifier_terms

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = ["check_identifier_tier", "identifier_tier_stage", "ids_held"]


def ids_held(cs: CandidateSet, matched: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """[Q, C] int: how many of each query's identifiers (``identifier_terms``) each
    candidate holds verbatim (``identifier_pattern``) in its file's path — every candidate
    where ``candidates`` is True — or in its text — where ``matched`` is True (a unit
    holding an identifier in its text matches the keyword query's tokens, so only keyword
    hits are read). An identifier in both counts once; 0 elsewhere and for a query naming
    none. The path counts because a daily log's name is its date (``2026-03-03``) and an
    agent may look a file up by its path."""
    out = np.zeros(cs.pos.shape, dtype=np.int64)
    paths = cs.table.paths
    for qi, query in enumerate(cs.queries):
        terms = identifier_terms(query)
        if not terms:
            continue
        patterns = [identifier_pattern(t) for t in terms]
        cols = np.nonzero(candidates[qi])[0]
        in_path: dict[str, frozenset[int]] = {}
        held: dict[int, set[int]] = {}
        for c in cols:
            path = str(paths[cs.pos[qi, c]])
            if path not in in_path:
                in_path[path] = frozenset(i for i, pat in enumerate(patterns) if pat.search(path))
            held[int(c)] = set(in_path[path])
        hits = np.nonzero(matched[qi] & candidates[qi])[0]
        for c, text in zip(hits, cs.texts(cs.pos[qi, hits]), strict=True):
            held[int(c)].update(i for i, pat in enumerate(patterns) if pat.search(text))
        for c, found in held.items():
            out[qi, c] = len(found)
    return out


def identifier_tier_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``ids_held`` (NaN where not valid), ``id_tier`` = ids_held × (the query's score span
    + 1) and ``final + id_tier`` (module docstring)."""
    valid, final = st["valid"], st["final"]
    held = ids_held(cs, st["has_text"], valid)
    # `initial` and `where`: a query without valid candidates (or none at all) has span 0.
    lo = np.min(final, axis=1, keepdims=True, initial=np.inf, where=valid)
    hi = np.max(final, axis=1, keepdims=True, initial=-np.inf, where=valid)
    span = np.where(np.isfinite(hi - lo), hi - lo, 0.0) + 1.0
    tier = np.where(valid, held * span, np.nan)
    return {
        "ids_held": np.where(valid, held.astype(np.float64), np.nan),
        "id_tier": tier,
        "final": final + np.where(valid, tier, 0.0),
    }


def check_identifier_tier(name: str, value: object) -> None:
    """ValueError unless ``identifier_tier`` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
