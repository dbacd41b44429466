"""Best line: rank chunks by the best of their lines' scores under a line-level system.

A ~400-token chunk scored as one unit is one vector of its first 256 word pieces and one
BM25 score over every word in it; its lines, scored one by one, can each use the
turn-level rules (the speaker-shape neighbour rule reads a line's own speaker, which a
chunk starting mid-message cannot). ``best_line`` (a preset name of
``memlab.config.vocab.BEST_LINE_SYSTEMS``; ``""`` = off) names the line system; the search then
runs it on the line index of the same files (``MemoryIndex.line_view``), keeps each
query's top ``best_line_depth`` lines, and this stage, the last score stage, sets

    final(q, c) = max{ s_line(q, l) : l among the query's top lines, path(l) = path(c),
                       start(c) ≤ line(l) ≤ end(c) }

(MaxP with the line as the passage; a line inside two overlapping chunks counts for
both). A chunk that holds none of those lines is no longer a candidate; ties (two
overlapping chunks sharing their best line) go to the higher score of the chunk system
before this stage (``tie_break``), then to insertion order. The line scores arrive in
``CandidateSet.extra[line_scores_key(p)]`` (``line_matrices``; one key per line
setting, so candidates never lend one setting's scores to another): ``Pipeline.retrieve``
and the lab's candidates fill it, so the stage itself reads no index. Studied in
``studies/chunk_lines.py`` (docs/studies/best-line.md).

``best_line_order`` (``memlab.config.vocab.BEST_LINE_ORDERS``) says how the chunks are then
ordered. ``"max"``: by that score. ``"novel"``: greedily by the best line a chunk adds,
``novel_line_order`` — the next chunk is the one holding the best-scoring top line that no
chunk above it holds, so a chunk that overlaps the one above and owes its score to their
shared line no longer takes the next slot with nothing new (equal scores: the ``"max"``
order; a chunk whose top lines are all held above comes after every chunk that adds one).
Scores stay the chunks' best-line scores, as MMR keeps its input scores. It reads the lines
each chunk holds from ``CandidateSet.extra[line_held_key(p)]`` (``held_line_codes``: one
integer per held line, coding the line and its score's place).
Engine layer.

Size: one module because the stage (``best_line_stage``), its order step
(``novel_line_order``) and the arrays they read (``line_matrices``, ``held_line_codes``,
keyed by ``line_scores_key`` / ``line_held_key``) are one contract;
``register_line_system`` sits here so the engine never imports ``memlab.pipeline.presets``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memlab.config.vocab import BEST_LINE_ORDERS, BEST_LINE_SYSTEMS, LINE_VIEW_MEMORY_FILES

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.declare import Ranking
    from memlab.stages.views import Params

__all__ = [
    "BEST_LINE_HELD_KEY",
    "BEST_LINE_KEY",
    "BEST_LINE_PARAMS",
    "LINE_SYSTEMS",
    "LineHits",
    "best_line_active",
    "best_line_scores",
    "best_line_stage",
    "carried_line_array",
    "carried_line_scores",
    "check_best_line",
    "check_best_line_pipeline",
    "held_line_codes",
    "held_lines",
    "line_arrays",
    "line_held_key",
    "line_hits",
    "line_keys",
    "line_matrices",
    "line_scores_key",
    "line_system_factory",
    "novel_line_order",
    "novel_lines_active",
    "register_line_system",
]

BEST_LINE_PARAMS = {"best_line": "", "best_line_depth": 100, "best_line_order": "max"}
# The factories of the line systems, by name: filled by ``memlab.pipeline.presets`` on import
# (``register_line_system``), since the presets build on the pipeline, not the reverse.
LINE_SYSTEMS: dict[str, Callable[[], Params]] = {}
# The stage array's name, and the prefix of the CandidateSet.extra keys the line scores
# travel under (``line_scores_key``: one key per line setting).
BEST_LINE_KEY = "best_line"
# The prefix of the CandidateSet.extra keys of the lines each chunk holds
# (``line_held_key``; read by the "novel" order only).
BEST_LINE_HELD_KEY = "best_line_held"
# One query's top lines: (paths [H], 1-based line numbers [H], scores [H]), best first.
LineHits = tuple[np.ndarray, np.ndarray, np.ndarray]


def check_best_line(name: str, value: object) -> None:
    """``best_line``: ``""`` or a name of ``BEST_LINE_SYSTEMS``; ``best_line_order``: one of
    ``BEST_LINE_ORDERS``; ``best_line_depth``: an integer ≥ 1 (not a bool)."""
    if name == "best_line":
        if value != "" and value not in BEST_LINE_SYSTEMS:
            raise ValueError(
                f"best_line must be '' (off) or one of {', '.join(BEST_LINE_SYSTEMS)}; got {value!r}"
            )
        return
    if name == "best_line_order":
        if value not in BEST_LINE_ORDERS:
            raise ValueError(
                f"best_line_order must be one of {', '.join(BEST_LINE_ORDERS)}; got {value!r}"
            )
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def register_line_system(name: str, factory: Callable[[], Params]) -> None:
    """Make ``factory`` the line system ``best_line=name`` runs; ``name`` must be one of
    ``BEST_LINE_SYSTEMS`` (ValueError otherwise)."""
    if name not in BEST_LINE_SYSTEMS:
        raise ValueError(f"line systems are {', '.join(BEST_LINE_SYSTEMS)}; got {name!r}")
    LINE_SYSTEMS[name] = factory


def line_system_factory(name: str) -> Callable[[], Params]:
    """The factory registered for ``name``; a ValueError naming ``memlab.pipeline.presets`` when
    none is (the presets register theirs when that module is imported)."""
    try:
        return LINE_SYSTEMS[name]
    except KeyError:
        raise ValueError(
            f"best_line={name!r}: no line system registered under that name; "
            "memlab.pipeline.presets registers them on import (import it first)"
        ) from None


def check_best_line_pipeline(p: Params) -> None:
    """ValueError when ``best_line`` is combined with what it would silently discard.

    The stage replaces the chunk's score by its best line's, so a stage that changes the
    chunk score after fusion — decay, release 2026.9.6's importance and project
    multipliers and lexical boost — would only break ties, and the release's exact-path
    tiers and selection rule order results by keys of their own, and MMR would re-order
    what the ``"novel"`` order has just ordered. A line view needs a
    file rule of ``LINE_VIEW_MEMORY_FILES`` (release 2026.9.6 chunks with its own
    chunker). The neighbour and file-context stages stay allowed: they shape the
    tie-break on purpose (``memlab-best-chunk``).
    """
    if not p.best_line:
        return
    if p.memory_files not in LINE_VIEW_MEMORY_FILES:
        raise ValueError(
            f"best_line={p.best_line!r} cannot be combined with memory_files="
            f"{p.memory_files!r}: a line view needs memory_files in "
            f"{', '.join(LINE_VIEW_MEMORY_FILES)}; set best_line='' to use it"
        )
    clash = [
        name
        for name, on in (
            (f"decay={p.decay!r}", p.decay != "off"),
            ("importance_boost=True", p.importance_boost),
            ("project_boost=True", p.project_boost),
            ("lexical_boost=True", p.lexical_boost),
            ("exact_tiers=True", p.exact_tiers),
            (f"selection_rule={p.selection_rule!r}", p.selection_rule != "openclaw"),
            (f"rank_by={p.rank_by!r}", p.rank_by != "score"),
            # Both re-order the list for diversity; one order rule at a time.
            (f"mmr={p.mmr!r}", p.mmr != "off" and p.best_line_order == "novel"),
        )
        if on
    ]
    if clash:
        raise ValueError(
            f"best_line={p.best_line!r} cannot be combined with {' and '.join(clash)}: the "
            "chunk's score becomes its best line's and best_line_order sets the order, so it "
            "would be silently discarded; set best_line='' to use it"
        )


def best_line_active(p: Params, mode: str) -> bool:
    """On in every mode when ``p.best_line`` names a line system."""
    return bool(p.best_line)


def novel_lines_active(p: Params, mode: str) -> bool:
    """The ``novel_lines`` rank step: on when a best-line system asks for the ``"novel"``
    order."""
    return bool(p.best_line) and p.best_line_order == "novel"


def held_lines(
    chunk_paths: np.ndarray,
    chunk_start: np.ndarray,
    chunk_end: np.ndarray,
    line_paths: np.ndarray,
    line_no: np.ndarray,
) -> np.ndarray:
    """[C, L] bool: chunk ``c`` holds line ``l`` when ``line_paths[l] == chunk_paths[c]`` and
    ``chunk_start[c] ≤ line_no[l] ≤ chunk_end[c]`` (1-based inclusive line numbers); two
    overlapping chunks both hold a shared line. Paths are compared as integer codes."""
    codes = {p: i for i, p in enumerate(dict.fromkeys(np.asarray(line_paths).tolist()))}
    cp = np.array([codes.get(p, -1) for p in np.asarray(chunk_paths).tolist()], dtype=np.int64)
    lp = np.array([codes[p] for p in np.asarray(line_paths).tolist()], dtype=np.int64)
    ln = np.asarray(line_no)
    return (
        (cp[:, None] == lp[None, :])
        & (np.asarray(chunk_start)[:, None] <= ln[None, :])
        & (np.asarray(chunk_end)[:, None] >= ln[None, :])
    )


def best_line_scores(
    chunk_paths: np.ndarray,
    chunk_start: np.ndarray,
    chunk_end: np.ndarray,
    line_paths: np.ndarray,
    line_no: np.ndarray,
    line_score: np.ndarray,
) -> np.ndarray:
    """[C]: for each chunk ``c``, ``max line_score[l]`` over the lines ``l`` with
    ``line_paths[l] == chunk_paths[c]`` and ``chunk_start[c] ≤ line_no[l] ≤ chunk_end[c]``
    (1-based inclusive line numbers); NaN for a chunk that holds none of the lines (and
    for every chunk when there are no lines). A line inside two overlapping chunks counts
    for both; a NaN line score is ignored."""
    inside = held_lines(chunk_paths, chunk_start, chunk_end, line_paths, line_no)
    return _best_of(inside, np.asarray(line_score, dtype=np.float64))


def _best_of(inside: np.ndarray, score: np.ndarray) -> np.ndarray:
    """[C]: each row's highest ``score`` where ``inside`` [C, L], NaN scores ignored; NaN for
    a row with none."""
    out = np.full(inside.shape[0], np.nan)
    if inside.size == 0:
        return out
    s = np.where(inside, score[None, :], np.nan)
    has = (inside & np.isfinite(s)).any(axis=1)
    out[has] = np.nanmax(s[has], axis=1)
    return out


def line_hits(cs: CandidateSet, ranking: Ranking) -> list[LineHits]:
    """Each query's returned lines of a line-level ``ranking`` over ``cs``, best first:
    ``(paths, start lines, scores)`` (a line chunk's start line is its line)."""
    out: list[LineHits] = []
    for i in range(len(cs.qids)):
        cols = ranking.columns[i][ranking.columns[i] >= 0]
        pos = cs.pos[i, cols]
        out.append((cs.table.paths[pos], cs.table.start_lines[pos], ranking.scores[i][: len(cols)]))
    return out


def held_line_codes(
    chunk_paths: np.ndarray,
    chunk_start: np.ndarray,
    chunk_end: np.ndarray,
    line_paths: np.ndarray,
    line_no: np.ndarray,
    line_score: np.ndarray,
    depth: int,
) -> np.ndarray:
    """[C, K] int64: for each chunk, one code per top line it holds (``held_lines``),
    ``tier · depth + position``, ascending, padded with −1: ``position`` is the line's place
    in the query's list (so ``code % depth`` names the line) and ``tier`` the dense rank of
    its score among the list's scores, 0 for the highest (so ``code // depth`` orders by
    score, equal scores equal). A line with a NaN score is left out. ``depth`` must exceed
    every position (the line system's ``best_line_depth``; ValueError otherwise); K is the
    most lines one chunk holds, at least 1."""
    inside = held_lines(chunk_paths, chunk_start, chunk_end, line_paths, line_no)
    return _codes_of(inside, np.asarray(line_score, dtype=np.float64), depth)


def _codes_of(inside: np.ndarray, score: np.ndarray, depth: int) -> np.ndarray:
    """``held_line_codes`` from the [C, L] ``inside`` matrix and the lines' scores."""
    if len(score) > depth:
        raise ValueError(f"{len(score)} top lines for a depth of {depth}")
    finite = np.isfinite(score)
    tier = np.zeros(len(score), dtype=np.int64)
    tier[finite] = np.unique(-score[finite], return_inverse=True)[1]
    code = tier * depth + np.arange(len(score), dtype=np.int64)
    inside = inside & finite[None, :]
    counts = inside.sum(axis=1) if inside.size else np.zeros(inside.shape[0], dtype=np.int64)
    out = np.full((inside.shape[0], max(1, int(counts.max(initial=0)))), -1, dtype=np.int64)
    rows, cols = np.nonzero(inside)
    vals = code[cols]
    order = np.lexsort((vals, rows))  # by row, then code
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    out[rows[order], slot] = vals[order]
    return out


def line_matrices(
    cs: CandidateSet, hits: Sequence[LineHits], depth: int | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """[Q, C] ``best_line_scores`` of every candidate chunk of ``cs`` (row ``q`` against
    ``hits[q]``; NaN for padding and for chunks holding none of the query's lines) and,
    when ``depth`` is given, [Q, C, K] their ``held_line_codes`` (−1 for padding columns and
    unused slots; K the largest over the queries; int32 when every code fits, ``depth``² <
    2³¹, else int64), else None. One pass: each query's chunk × line matrix is built once
    for both. The rows of ``hits`` follow ``cs.qids``."""
    if len(hits) != len(cs.qids):
        raise ValueError(f"{len(hits)} queries of line hits for {len(cs.qids)} queries of chunks")
    best = np.full(cs.pos.shape, np.nan)
    t = cs.table
    per: list[tuple[np.ndarray, np.ndarray]] = []
    for i, (paths, lines, scores) in enumerate(hits):
        cols = np.nonzero(cs.pos[i] >= 0)[0]
        pos = cs.pos[i, cols]
        inside = held_lines(t.paths[pos], t.start_lines[pos], t.end_lines[pos], paths, lines)
        score = np.asarray(scores, dtype=np.float64)
        best[i, cols] = _best_of(inside, score)
        if depth is not None:
            per.append((cols, _codes_of(inside, score, depth)))
    if depth is None:
        return best, None
    k = max((c.shape[1] for _, c in per), default=1)
    held = np.full((*cs.pos.shape, k), -1, dtype=np.int32 if depth * depth < 2**31 else np.int64)
    for i, (cols, codes) in enumerate(per):
        held[i, cols, : codes.shape[1]] = codes
    return best, held


def line_arrays(
    p: Params, cs: CandidateSet, line_system: Params, line_cs: CandidateSet
) -> dict[str, np.ndarray]:
    """What chunk system ``p`` reads from its line system, keyed for ``CandidateSet.extra``:
    ``line_system`` ranks ``line_cs`` (the same queries over the line view, rows in ``cs``'s
    order), its top lines are ``line_hits``, and each candidate chunk of ``cs`` gets its best
    line's score under ``line_scores_key(p)`` and, for the ``"novel"`` order, the lines it
    holds under ``line_held_key(p)`` (``line_matrices``, one pass for both). The one mapping
    from a line ranking to chunks: ``Pipeline.retrieve`` and the lab both call it."""
    hits = line_hits(line_cs, line_system.rank(line_cs))
    novel = p.best_line_order == "novel"
    best, held = line_matrices(cs, hits, p.best_line_depth if novel else None)
    out = {line_scores_key(p): best}
    if held is not None:
        out[line_held_key(p)] = held
    return out


def novel_line_order(
    order: np.ndarray, valid: np.ndarray, held: np.ndarray, depth: int, limit: int | None = None
) -> np.ndarray:
    """``order`` [Q, C] (each query's valid columns first, best first) re-ordered greedily
    by new lines. ``held`` [Q, C, K] codes the top lines each column holds
    (``held_line_codes`` with this ``depth``: ``code % depth`` names the line, ``code //
    depth`` is its score's tier, 0 = the highest; −1 = none), each row ascending. Step by
    step the next column is the remaining valid one whose best line not held by any column
    already placed has the highest score (lowest tier); equal scores go to the column
    earlier in ``order``, so the result does not depend on how equal lines were listed.
    When no remaining column holds a new line the rest follow in ``order``; invalid
    columns keep their places after the valid ones. Columns that share no line keep the
    order of their best lines' scores. ``limit``: place at most that many columns greedily
    (a search returning ``max_results`` needs no more), the rest following in ``order``;
    None places all. Cost per query: at most min(``limit``, top lines) steps, each
    O(n · K) for its n valid columns."""
    out = order.copy()
    for q in range(order.shape[0]):
        n = int(valid[q].sum())
        if n <= 1:
            continue
        cols = order[q, :n]
        codes = held[q, cols].astype(np.int64)
        if codes.max(initial=-1) < 0:
            continue
        # Unused slots point at line ``depth``, always covered, so they never count as new.
        line = np.where(codes >= 0, codes % depth, depth)
        tier = codes // depth
        covered = np.zeros(depth + 1, dtype=bool)
        covered[depth] = True
        left = np.ones(n, dtype=bool)
        placed: list[int] = []
        rows = np.arange(n)
        none = np.iinfo(np.int64).max  # no new line, or already placed
        while limit is None or len(placed) < limit:
            new = ~covered[line]
            # Slots ascend by tier, so a row's first new slot is its best new line.
            best = np.where(new.any(axis=1) & left, tier[rows, new.argmax(axis=1)], none)
            i = int(best.argmin())  # the first of the lowest tier: the earlier in ``order``
            if best[i] == none:
                break
            placed.append(i)
            left[i] = False
            covered[line[i]] = True
        rest = np.nonzero(left)[0].tolist()
        out[q, :n] = cols[np.asarray(placed + rest, dtype=np.int64)]
    return out


def line_scores_key(p: Params) -> str:
    """The ``CandidateSet.extra`` key of chunk system ``p``'s line scores:
    ``best_line:<line system>:<best_line_depth>:<legs>`` (``:identifier_tier`` appended
    when ``p`` has it: `Pipeline.line_system` inherits it), legs the chunk system's
    (``vector``, ``keyword``, ``vector+keyword`` or ``none``; the line system runs only the
    legs ``p`` has, ``Pipeline.line_system``). Those are everything the scores depend on
    beyond the index and queries, so candidates can carry several settings' scores side by
    side, and a system never reads scores made for another setting. Two settings whose
    line systems happen to score alike (``bm25`` has no vector leg to drop) still get two
    keys: a second computation, never a wrong score."""
    legs = "+".join(n for n, on in (("vector", p.vector), ("keyword", p.keyword)) if on)
    tier = ":identifier_tier" if p.identifier_tier else ""  # the line system inherits it
    return f"{BEST_LINE_KEY}:{p.best_line}:{p.best_line_depth}:{legs or 'none'}{tier}"


def line_held_key(p: Params) -> str:
    """The ``CandidateSet.extra`` key of the lines each candidate chunk of ``p`` holds
    (``held_line_codes``, for ``best_line_order="novel"``): ``line_scores_key`` with the
    prefix ``best_line_held``."""
    return BEST_LINE_HELD_KEY + line_scores_key(p)[len(BEST_LINE_KEY) :]


def line_keys(p: Params) -> tuple[str, ...]:
    """Every ``CandidateSet.extra`` key chunk system ``p`` reads from its line system:
    none with ``best_line`` off, ``line_scores_key``, and ``line_held_key`` for the
    ``"novel"`` order."""
    if not p.best_line:
        return ()
    if p.best_line_order == "novel":
        return (line_scores_key(p), line_held_key(p))
    return (line_scores_key(p),)


def carried_line_array(cs: CandidateSet, key: str, needs: str) -> np.ndarray:
    """``cs.extra[key]``, a line array a chunk system reads (``line_keys``); when ``cs`` does
    not carry it, a ValueError: ``needs``, the key, the line arrays ``cs`` does carry
    (``carried_line_scores``) and where they come from."""
    if key not in cs.extra:
        carried = carried_line_scores(cs)
        have = f"these candidates carry {', '.join(carried)}" if carried else "none is there"
        raise ValueError(
            f"{needs} in CandidateSet.extra[{key!r}] and {have}: retrieve with this system's "
            "Pipeline.retrieve (or the lab), which runs its line system on the index's lines"
        )
    return cs.extra[key]


def carried_line_scores(cs: CandidateSet) -> list[str]:
    """The keys of the line arrays ``cs`` carries (``line_scores_key``, ``line_held_key``),
    sorted."""
    prefixes = (f"{BEST_LINE_KEY}:", f"{BEST_LINE_HELD_KEY}:")
    return sorted(k for k in cs.extra if k.startswith(prefixes))


def best_line_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``final`` ← the chunk's best line score (module docstring); ``valid`` keeps only
    chunks holding one of the query's top lines; ``tie_break`` = −(the chunk system's
    ``final``), read by ``Pipeline.rank`` to order equal line scores. The scores are read
    from ``cs.extra[line_scores_key(p)]``; ValueError when ``cs`` carries none for ``p``'s
    line setting (naming the settings it does carry)."""
    line = carried_line_array(
        cs, line_scores_key(p), f"best_line={p.best_line!r} needs its line scores"
    )
    valid = st["valid"] & np.isfinite(line)
    before = np.nan_to_num(st["final"], nan=-np.inf)
    return {
        "valid": valid,
        BEST_LINE_KEY: np.where(valid, line, np.nan),
        "tie_break": np.where(valid, -before, np.inf),
        "final": np.where(valid, line, np.nan),
    }
