"""File context: every chunk gains a share of the best score in its own file.

``file_context`` (``Pipeline.file_context``, a weight ≥ 0, 0 = off), run after the
neighbour stage and before the heading filter: with F the score before the neighbour
term (``final − neighbor``; fused × decay × the boosts),

    final = final + file_context · max{F(c) : c a valid candidate of the query in the
                                        chunk's own file}

— the file's best chunk lends its score to every chunk of the file (itself included),
so a turn in the session that matches the question best is ranked above an equally
scored turn of a session that matches it nowhere else (hierarchical retrieval, with
the file as the session: a daily file holds one date's sessions — on LoCoMo dev one
session each, no two share a date — and a BEAM daily log one date's batches). Only a
conversation's file is a session: the term is added in files where at least half of the
chunks carry a speaker label (``memlab.stages.shape.conversation_files``) and is 0
elsewhere — in a curated ``MEMORY.md`` or a log of notes every chunk would otherwise
share the best chunk's score (measured on the synthetic workspaces: docs/studies/context.md). A
file is a path within one segment of the table (``memlab.stages.shape.file_ids``: the
indexes of a lab's merged table never share a file). A heading-only chunk (``## Session 3 — 8 May,
2023``) still counts for its file's maximum — it is what a session's date or title
matches — and the heading filter after this stage removes it from the results
(measured both ways in ``studies/transfer_ideas.py``). Engine layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memlab.stages.shape import conversation_files, file_ids

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = [
    "FILE_CONTEXT_PARAMS",
    "check_file_context",
    "file_best",
    "file_context_active",
    "file_context_stage",
    "file_ids",
]

FILE_CONTEXT_PARAMS = {"file_context": 0.0}


def check_file_context(name: str, value: object) -> None:
    """``file_context`` a finite number ≥ 0 (not a bool)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def file_context_active(p: Params, mode: str) -> bool:
    """The stage runs when its weight is > 0."""
    return p.file_context > 0


def file_best(
    pos: np.ndarray, scores: np.ndarray, valid: np.ndarray, files: np.ndarray
) -> np.ndarray:
    """[Q, C]: for each valid candidate, the largest ``scores`` among the valid candidates
    of the same query row in the same file (``files`` [N], a map of `file_ids`); NaN where
    not valid. A file with one candidate gives that candidate's own score; NaN scores are
    ignored (a file whose valid candidates all score NaN gives NaN)."""
    out = np.full(pos.shape, np.nan)
    q, c = np.nonzero(valid)
    if q.size == 0:
        return out
    n_files = int(files.max()) + 1
    key = q.astype(np.int64) * n_files + files[pos[q, c]]
    uniq, inv = np.unique(key, return_inverse=True)
    best = np.full(uniq.size, -np.inf)
    # fmax, not maximum: a NaN score of one candidate must not erase its file's maximum.
    np.fmax.at(best, inv, np.asarray(scores, dtype=np.float64)[q, c])
    out[q, c] = np.where(np.isfinite(best[inv]), best[inv], np.nan)
    return out


def file_context_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``file_context`` (the added term ``w · max F`` of the chunk's file, NaN where not
    valid) and ``final = final + file_context``; F = ``final − neighbor`` (``final`` when
    the neighbour stage did not run)."""
    valid, final = st["valid"], st["final"]
    base = final - np.nan_to_num(st["neighbor"], nan=0.0) if "neighbor" in st else final
    if not valid.any():
        return {"file_context": np.full(final.shape, np.nan)}
    pos = np.maximum(cs.pos, 0)
    best = file_best(pos, base, valid, file_ids(cs.table))
    # Only a conversation's file is a session; elsewhere (MEMORY.md, notes) the term is 0.
    in_conversation = conversation_files(cs)[pos]
    term = np.where(valid, np.where(in_conversation, p.file_context * best, 0.0), np.nan)
    return {"file_context": term, "final": np.where(valid, final + term, np.nan)}
