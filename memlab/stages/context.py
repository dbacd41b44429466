"""Context stages: a chunk's neighbours in its file lend it score; heading-only chunks go.

1. ``neighbor`` (``Pipeline.neighbor_prev`` / ``neighbor_next``, weights in
   [0, 1], both 0 = off): with F the score so far (fused × decay),
   ``final = F + max(neighbor_prev · F(previous chunk), neighbor_next ·
   F(next chunk), 0)``, a neighbour counting 0 when it is not a candidate of
   the query. In a chat log the turn that answers a question is often a reply
   whose words are in the turn before. With ``neighbor_shape="roles"``, in a
   user–assistant file (``memlab.stages.shape``: every labelled line is User or
   Assistant) the rule is by role instead: a User line adds
   ``neighbor_user_next · F(next line)`` (the reply), an Assistant line
   ``neighbor_assistant_prev · F(previous line)`` (the request); files of named
   speakers keep the prev/next rule. Off by default. A wider window
   (``neighbor_prev2`` / ``neighbor_next2``, weights in [0, 1] of the chunks two
   before / two after, never in a user–assistant file under ``roles``) and
   ``neighbor_agg="sum"`` (add every positive term instead of the largest) widen it.
2. ``headings`` (``Pipeline.drop_headings``): a chunk made only of Markdown
   heading lines (a session's ``## Session 3 — date`` line) is not a result,
   though it still lent its score to its neighbours (it runs after ``neighbor``).

Neighbours come from the chunk table alone (``ChunkTable.segments`` tells the
indexes of a lab's merged table apart), so the engine needs nothing from the lab.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memlab.config.vocab import NEIGHBOR_AGGS, NEIGHBOR_SHAPES
from memlab.stages.shape import ROLE_ASSISTANT, ROLE_USER, chunk_roles, user_assistant_files

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params
    from memlab.store import ChunkTable

__all__ = [
    "HEADING_LINE",
    "NEIGHBOR_SHAPE_PARAMS",
    "NEIGHBOR_WINDOW_PARAMS",
    "check_neighbor_shape",
    "heading_chunks",
    "headings_stage",
    "neighbor_active",
    "neighbor_columns",
    "neighbor_positions",
    "neighbor_scores",
    "neighbor_stage",
    "role_weights",
    "second_neighbors",
]

# An ATX Markdown heading line: up to 3 spaces, 1-6 '#', then a space, a tab or the end.
HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
# The neighbour stage's shape parameters (Pipeline parameters through the stage registry);
# the weights only count when neighbor_shape is "roles".
NEIGHBOR_SHAPE_PARAMS = {
    "neighbor_shape": "off",
    "neighbor_user_next": 1.0,
    "neighbor_assistant_prev": 0.0,
}
# The wider window: weights of the chunks two before / after, and how the terms combine.
# The defaults give the one-step rule bit for bit.
NEIGHBOR_WINDOW_PARAMS = {"neighbor_prev2": 0.0, "neighbor_next2": 0.0, "neighbor_agg": "max"}


def check_neighbor_shape(name: str, value: object) -> None:
    """``neighbor_shape`` one of ``NEIGHBOR_SHAPES``, ``neighbor_agg`` one of
    ``NEIGHBOR_AGGS``; the role and second-neighbour weights in [0, 1]."""
    if name in ("neighbor_shape", "neighbor_agg"):
        allowed = NEIGHBOR_SHAPES if name == "neighbor_shape" else NEIGHBOR_AGGS
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")


def neighbor_active(p: Params, mode: str) -> bool:
    """The neighbour stage runs when a prev/next weight (one or two steps) is > 0 or the
    shape rule is on."""
    return (
        p.neighbor_prev > 0
        or p.neighbor_next > 0
        or p.neighbor_shape != "off"
        or p.neighbor_prev2 > 0
        or p.neighbor_next2 > 0
    )


def neighbor_positions(
    table: ChunkTable, offsets: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's previous and next chunk in the same file: (prev [N], next [N]), −1 = none.

    Chunk p−1 is the previous neighbour of p (and p its next) when both are in
    the same segment (``ChunkTable.segments`` of a lab's merged table; or
    ``offsets``, the first table positions of the merged indexes; neither = one index), have the same path, and p starts
    after p−1 starts and at most one line after p−1 ends (adjacent lines, or
    overlapping chunks). Tables list each file's chunks in line order, so this
    is "the chunk before / after in the file". Cached on the table.
    """
    key = tuple(int(o) for o in offsets) if offsets is not None else ()

    def compute(table: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
        n = len(table)
        prev = np.full(n, -1, dtype=np.int64)
        nxt = np.full(n, -1, dtype=np.int64)
        if n > 1:
            if key or table.segments is None:
                seg = np.zeros(n, dtype=np.int64)
                starts = [o for o in key if 0 < o < n]
                seg[starts] = 1
                seg = np.cumsum(seg)
            else:
                seg = np.asarray(table.segments, dtype=np.int64)
            s, e = table.start_lines, table.end_lines
            linked = (
                (table.paths[1:] == table.paths[:-1])
                & (seg[1:] == seg[:-1])
                & (s[1:] > s[:-1])
                & (s[1:] <= e[:-1] + 1)
            )
            idx = np.nonzero(linked)[0]
            prev[idx + 1] = idx
            nxt[idx] = idx + 1
        return prev, nxt

    return table.derived(("neighbors", key), compute)


def neighbor_columns(
    pos: np.ndarray, valid: np.ndarray, neighbor: np.ndarray, n_chunks: int
) -> np.ndarray:
    """[Q, C]: the column, in the same query row, of each valid candidate's neighbour
    (``neighbor`` [N], a map of `neighbor_positions`); −1 where there is no neighbour or
    it is not a valid candidate of that row. One sort serves every neighbour feature."""
    out = np.full(pos.shape, -1, dtype=np.int64)
    q, c = np.nonzero(valid)
    if q.size == 0:
        return out
    p = pos[q, c]
    key = q.astype(np.int64) * n_chunks + p
    order = np.argsort(key, kind="stable")
    skey = key[order]
    nb = neighbor[p]
    want = q.astype(np.int64) * n_chunks + np.maximum(nb, 0)
    i = np.minimum(np.searchsorted(skey, want), skey.size - 1)
    hit = (nb >= 0) & (skey[i] == want)
    out[q, c] = np.where(hit, c[order][i], -1)
    return out


def neighbor_scores(
    pos: np.ndarray, scores: np.ndarray, valid: np.ndarray, neighbor: np.ndarray, n_chunks: int
) -> np.ndarray:
    """For every candidate, its neighbour's score in the same query: [Q, C].

    ``pos`` [Q, C] table positions, ``scores`` [Q, C], ``valid`` [Q, C],
    ``neighbor`` [N] a neighbour map (`neighbor_positions`). The value is the
    score of the candidate of the same row whose position is
    ``neighbor[pos]``; 0 where there is no neighbour, the neighbour is not a
    valid candidate of that row, or the candidate itself is not valid.
    """
    col = neighbor_columns(pos, valid, neighbor, n_chunks)
    found = np.take_along_axis(np.asarray(scores, dtype=np.float64), np.maximum(col, 0), axis=1)
    return np.where(col >= 0, np.nan_to_num(found, nan=0.0), 0.0)


def heading_chunks(cs: CandidateSet, positions: np.ndarray) -> np.ndarray:
    """Whether each table position holds a heading-only chunk: bool, shaped like ``positions``.

    Heading-only = at least one non-blank line and every non-blank line an ATX
    Markdown heading (``#`` to ``######`` after at most 3 spaces, then a space,
    tab or the line end). Texts are read once per table and the answers
    cached on it; negative positions (padding) are False.
    """
    table = cs.table
    # −1 unknown, 0/1 known: filled lazily, only for positions that were candidates.
    known: np.ndarray = table.derived("heading_only", lambda t: np.full(len(t), -1, dtype=np.int8))
    pos = np.asarray(positions, dtype=np.int64)
    flat = pos[pos >= 0]
    todo = np.unique(flat[known[flat] < 0]) if flat.size else flat
    if todo.size:
        for p, text in zip(todo.tolist(), cs.texts(todo), strict=True):
            lines = [ln for ln in text.splitlines() if ln.strip()]
            known[p] = int(bool(lines) and all(HEADING_LINE.match(ln) for ln in lines))
    return np.where(pos >= 0, known[np.maximum(pos, 0)] == 1, False)


def neighbor_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``neighbor`` (the added term, NaN where not valid) and ``final = final + neighbor``
    with the term ``max(wp · F(prev), wn · F(next), 0)``: ``wp, wn`` = ``neighbor_prev``,
    ``neighbor_next``, except with ``neighbor_shape="roles"`` in a user–assistant file, where
    ``(0, neighbor_user_next)`` for a User line, ``(neighbor_assistant_prev, 0)`` for an
    Assistant line and ``(0, 0)`` for an unlabelled one.

    The window: ``wp2 · F(prev of prev)`` and ``wn2 · F(next of next)`` (``neighbor_prev2``,
    ``neighbor_next2``; 0 in a user–assistant file under ``roles``) join the terms when a
    weight is > 0; ``neighbor_agg="sum"`` makes the term ``Σ max(w · F(neighbour), 0)``
    over the terms instead of their maximum (and 0). A neighbour that is no candidate
    counts 0."""
    valid, final = st["valid"], st["final"]
    term = np.zeros(final.shape, dtype=np.float64)
    if valid.any():
        prev, nxt = neighbor_positions(cs.table)  # segments: the table knows them
        n = len(cs.table)
        fp = neighbor_scores(cs.pos, final, valid, prev, n)
        fn = neighbor_scores(cs.pos, final, valid, nxt, n)
        wp, wn = p.neighbor_prev, p.neighbor_next
        if p.neighbor_shape == "roles":
            wp, wn = role_weights(p, cs)
        terms = [wp * fp, wn * fn]
        if p.neighbor_prev2 > 0 or p.neighbor_next2 > 0:
            wp2, wn2 = p.neighbor_prev2, p.neighbor_next2
            if p.neighbor_shape == "roles":
                named = ~user_assistant_files(cs)[np.maximum(cs.pos, 0)]
                wp2, wn2 = np.where(named, wp2, 0.0), np.where(named, wn2, 0.0)
            prev2, nxt2 = second_neighbors(prev), second_neighbors(nxt)
            terms += [
                wp2 * neighbor_scores(cs.pos, final, valid, prev2, n),
                wn2 * neighbor_scores(cs.pos, final, valid, nxt2, n),
            ]
        if p.neighbor_agg == "sum":
            term = np.sum([np.maximum(t, 0.0) for t in terms], axis=0)
        elif len(terms) == 2:  # the one-step rule, as it always was
            term = np.maximum(np.maximum(terms[0], terms[1]), 0.0)
        else:
            term = np.maximum(np.max(terms, axis=0), 0.0)
        final = np.where(valid, final + term, np.nan)
    return {"neighbor": np.where(valid, term, np.nan), "final": final}


def second_neighbors(neighbor: np.ndarray) -> np.ndarray:
    """The neighbour of each chunk's neighbour (a map of `neighbor_positions` applied
    twice): [N], −1 where either step has none."""
    return np.where(neighbor >= 0, neighbor[np.maximum(neighbor, 0)], -1)


def role_weights(p: Params, cs: CandidateSet) -> tuple[np.ndarray, np.ndarray]:
    """The [Q, C] previous / next weights of the ``roles`` rule (see ``neighbor_stage``)."""
    at = np.maximum(cs.pos, 0)
    ua, role = user_assistant_files(cs)[at], chunk_roles(cs)[at]
    wp = np.where(
        ua, np.where(role == ROLE_ASSISTANT, p.neighbor_assistant_prev, 0.0), p.neighbor_prev
    )
    wn = np.where(ua, np.where(role == ROLE_USER, p.neighbor_user_next, 0.0), p.neighbor_next)
    return wp, wn


def headings_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``heading_only`` (the candidates removed), and ``valid``, ``final``, ``has_vec``,
    ``has_text`` without them (``neighbor`` and ``file_context``, if present, too: NaN
    where not valid)."""
    valid, final = st["valid"], st["final"]
    if not valid.any():
        return {"heading_only": np.zeros(final.shape, dtype=bool)}
    heads = heading_chunks(cs, np.where(valid, cs.pos, -1)) & valid
    valid = valid & ~heads
    out = {
        "heading_only": heads,
        "valid": valid,
        "final": np.where(valid, final, np.nan),
        "has_vec": st["has_vec"] & valid,
        "has_text": st["has_text"] & valid,
    }
    for key in ("neighbor", "file_context"):  # the added terms of the stages before it
        if key in st:
            out[key] = np.where(valid, st[key], np.nan)
    return out
