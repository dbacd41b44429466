"""Result frames: the results of a ranking, and the explain trace of every candidate.

``ranking_frame`` flattens a `Ranking` into the long results DataFrame
(``qid, docno, score, rank`` plus one column per stage array, named by
``memlab.stages.STAGE_ARRAYS``). ``explain`` lists every candidate with each
term of its score — ``vector_term + text_term + other = fused``, then each
score stage that is on in order (``× decay``, ``+ neighbor``, a registered
stage's term), giving ``score`` — and why it was returned or dropped.
``explain_formula`` writes that sum with the system's effective weights.

Size: one module because ``ranking_frame`` and ``explain`` name the stage columns
alike (``BUILTIN_KEYS``, ``extra_columns``), and ``explain``'s terms must add up to
the sum ``explain_formula`` writes with ``explain_weights``; ``_drop_reason`` is
``explain``'s long tail, one reason per selection rule.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from memlab.config.vocab import SINGLE_LEG_FUSIONS
from memlab.retrieval.fusion import clamp_weights
from memlab.retrieval.textquery import identifier_terms
from memlab.stages import STAGE_ARRAYS, score_terms
from memlab.stages.legs import leg_values
from memlab.stages.selection import SELECTED_BY

if TYPE_CHECKING:
    import pandas as pd

    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.declare import Ranking
    from memlab.stages.views import Params

__all__ = ["explain", "explain_formula", "explain_weights", "ranking_frame", "result_rows"]

# The arrays every system writes (legs, normalize, fusion, decay) and the two context
# stages' keys, which have columns of their own; any other key with a column is a
# registered stage's and joins the frames after them.
BUILTIN_KEYS = frozenset(
    {
        "valid",
        "has_vec",
        "has_text",
        "vec_in",
        "text_in",
        "vec_norm",
        "text_norm",
        "fused",
        "decay",
        "neighbor",
        "heading_only",
        "final",
        "mmr_position",
    }
)


def extra_columns(st: dict[str, np.ndarray]) -> list[tuple[str, str]]:
    """(key, column) of the stage arrays of registered stages present in ``st``."""
    out = []
    for key in st:
        info = STAGE_ARRAYS.get(key)
        if key not in BUILTIN_KEYS and info is not None and info.column:
            out.append((key, info.column))
    return out


def result_rows(cs: CandidateSet, r: Ranking) -> dict[str, np.ndarray]:
    """The returned results of ``r`` as arrays, one entry per result: the one owner of what
    a result row holds (``ranking_frame``, hence ``memlab search`` and the lab, and
    ``memlab.tools.memory_search``, hence ``--json`` and the MCP server, read it).

    Rows run query by query, in rank order (the non-empty slots of ``r.columns``, row-major).
    Keys: ``qi`` (query row), ``column`` (candidate column of ``cs``), ``pos`` (table
    position), ``rank`` (0-based slot), ``score`` (``r.scores``), ``qid``, ``docno``,
    ``path``, ``start_line``, ``end_line``, ``source``. No result → every array empty
    (object arrays for the strings).
    """
    qi, ki = np.nonzero(r.columns >= 0)
    cols = r.columns[qi, ki]
    pos = cs.pos[qi, cols]
    t = cs.table
    obj = np.empty(0, dtype=object)
    return {
        "qi": qi,
        "column": cols,
        "pos": pos,
        "rank": ki,
        "score": r.scores[qi, ki],
        "qid": np.asarray(cs.qids, dtype=object)[qi],
        "docno": t.ids[pos] if len(pos) else obj,
        "path": t.paths[pos] if len(pos) else obj,
        "start_line": t.start_lines[pos],
        "end_line": t.end_lines[pos],
        "source": t.sources[pos] if len(pos) else obj,
    }


def ranking_frame(
    cs: CandidateSet, r: Ranking, system: str = "", *, with_text: bool = False
) -> pd.DataFrame:
    """Flatten a Ranking into the long results DataFrame (see ``Pipeline.run``).

    A ``neighbor`` column (after ``decay``) is added whenever the neighbour stage ran,
    so that score = fused × decay + neighbor; a registered stage's arrays with a
    column (``STAGE_ARRAYS``) come next, before ``mmr_position``.
    """
    import pandas as pd

    rows = result_rows(cs, r)
    qi, cols, pos = rows["qi"], rows["column"], rows["pos"]
    st = r.stage
    df = pd.DataFrame(
        {
            "qid": rows["qid"],
            "docno": rows["docno"],
            "score": rows["score"],
            "rank": rows["rank"],
            "path": rows["path"],
            "start_line": rows["start_line"],
            "end_line": rows["end_line"],
            "source": rows["source"],
            "vector_score": cs.vec_score[qi, cols],
            "text_raw": cs.text_raw[qi, cols],
            "text_score": st["text_in"][qi, cols],
            "vector_norm": st["vec_norm"][qi, cols],
            "text_norm": st["text_norm"][qi, cols],
            "vector_rank": np.where(st["has_vec"][qi, cols], cs.vec_rank[qi, cols], -1),
            "text_rank": np.where(st["has_text"][qi, cols], cs.text_rank[qi, cols], -1),
            "fused": st["fused"][qi, cols],
            "decay": st["decay"][qi, cols],
            "mmr_position": st["mmr_position"][qi, cols],
            "selected_by": SELECTED_BY[np.maximum(r.selected_by[qi, rows["rank"]], 0)],
            "pos": pos,
        }
    )
    if "neighbor" in st:
        # The context term added after decay: score = fused × decay + neighbor.
        df.insert(df.columns.get_loc("decay") + 1, "neighbor", st["neighbor"][qi, cols])
    for key, col in extra_columns(st):
        df.insert(df.columns.get_loc("mmr_position"), col, st[key][qi, cols])
    df.attrs["mode"] = r.mode
    if system:
        df.insert(0, "system", system)
    if with_text:
        df["text"] = cs.texts(pos)
    return df


# How explain names the keyword leg's value for a candidate its query did not match
# (``text_unmatched``, memlab.stages.legs.normalize_stage).
UNMATCHED_NOTE = {
    "missing": "",
    "floor": " (keyword non-match: text_norm of a 0 score, below every match)",
    "pooled": " (text_norm pooled over all candidates, a keyword non-match at 0)",
}


def explain_weights(pipeline: Params) -> tuple[float, float]:
    """The weights the fusion actually applies to (vector_norm, text_norm).

    ``wsum``: OpenClaw's clamp-and-renormalise (``clamp_weights``: 0.7/0.3 stays,
    0.5/0.25 → 0.667/0.333, 0/0 → 0.7/0.3); ``rrf`` and ``comb*``: the weights as given
    (not renormalised); ``vector``/``keyword``: (1, 0) / (0, 1).
    """
    if pipeline.fusion == "vector":
        return 1.0, 0.0
    if pipeline.fusion == "keyword":
        return 0.0, 1.0
    return pipeline.effective_weights()


def explain_formula(pipeline: Params, mode: str) -> str:
    """The score's formula with this system's effective weights, e.g. ``"fused =
    0.700·vector_norm + 0.300·text_norm; score = fused × decay"`` (``+ neighbor`` for a
    system with a context term; a registered stage adds its ``× col`` or ``+ col``, in
    stage order, after parentheses where needed; ``other`` is what the fusion adds beyond
    the two terms: RRF's top-rank bonus, the keyword-only boost). A re-ordering that keeps
    the scores (``novel_lines``) is named after the formula."""
    wv, wt = explain_weights(pipeline)
    if mode == "keyword":
        fused = "fused = text_norm" + (
            " + other (keyword-only boost)" if pipeline.keyword_boost else " (keyword-only mode)"
        )
    elif mode == "vector":
        fused = "fused = vector_norm (vector-only mode)"
    elif pipeline.fusion == "wsum":
        fused = f"fused = {wv:.3f}·vector_norm + {wt:.3f}·text_norm"
        fused += UNMATCHED_NOTE[pipeline.text_unmatched]
        if pipeline.missing:
            leg = "a leg" if pipeline.text_unmatched == "missing" else "the vector leg"
            fused += f" ({leg} that missed counts {pipeline.missing:g})"
    elif pipeline.fusion == "rrf":
        fused = (
            f"fused = {wv:g}/({pipeline.rrf_k:g} + vector_rank + 1)"
            f" + {wt:g}/({pipeline.rrf_k:g} + text_rank + 1)"
            + (" + other (top-rank bonus)" if pipeline.rrf_top_bonus else "")
        )
    else:
        fused = f"fused = {pipeline.fusion}({wv:g}·vector_norm, {wt:g}·text_norm)"
    expr = "fused"
    for key, op in score_terms(pipeline, mode):
        col = STAGE_ARRAYS[key].column or key
        if key == "qmd_doc":  # QMD's per-file fusion (memlab.stages.documents)
            expr = (
                f"{col} = Σ 2·w/({pipeline.rrf_k:g} + file rank + 1) over the file lists"
                + (" + top-rank bonus" if pipeline.rrf_top_bonus else "")
                + ", at the file's best chunk (ties: QMD's order of first sight)"
            )
            continue
        if op == "=":  # the stage replaces the score; what it replaced orders ties
            expr = f"{col} (ties by {expr})"
            continue
        if op == "×" and " + " in expr:
            expr = f"({expr})"
        expr += f" {op} {col}"
    tiers = ""
    if "exact_tiers" in pipeline.active_stages(mode):  # OpenClaw 2026.9.6 (§5.8)
        tiers = (
            "; exact-path tiers lead: score = project, ranked by rank_score ="
            " (1 + clamp(fused, 0, 1))/2 × the multipliers"
        )
    if "novel_lines" in pipeline.active_stages(mode):  # re-orders, keeps the scores
        tiers += (
            "; placed by new lines: next, the chunk whose best top line no chunk above"
            " holds scores highest"
        )
    return f"{fused}; score = {expr}{tiers}"


def explain(
    pipeline: Params, cs: CandidateSet, ranking: Ranking | None = None, *, with_text: bool = False
) -> pd.DataFrame:
    """Every candidate of every query of ``cs`` with each term of its score and its fate.

    Columns: ``qid, docno, path, start_line, end_line, source``, the leg inputs
    (``vector_score``, ``text_raw``, ``vector_rank``, ``text_rank``, ``vector_norm``,
    ``text_norm``), the terms ``vector_term`` + ``text_term`` + ``other`` = ``fused``
    (``explain_weights``; ``other`` = what the fusion adds beyond the two weighted terms:
    RRF's top bonus, the keyword-only boost), ``decay`` (multiplier) and ``decayed`` =
    fused × decay, ``neighbor`` (context term, 0 without one), one column per term of a
    registered stage (``STAGE_ARRAYS``), ``score`` = decayed + neighbor, then each
    registered term in stage order (``explain_formula``; NaN for a candidate this
    system cannot score), ``mmr_position``, ``rank``
    (0-based result rank, −1 when dropped), ``fate`` (``returned``/``dropped``) and
    ``reason``: how it was selected (strict, relaxed, fill, top-up) or why it was dropped
    — beyond this system's depth, found only by a leg it does not use, heading-only,
    below minScore (after decay ×m when decay pushed it under), below the relaxed
    keyword threshold, not a keyword hit under the relaxed fallback, or beyond
    maxResults. Rows per query: returned in rank order, then dropped by score.
    ``ranking``: a ``pipeline.rank(cs)`` already computed (else computed here).
    """
    import pandas as pd

    r = ranking if ranking is not None else pipeline.rank(cs)
    st = r.stage
    mode = r.mode
    nq, width = cs.valid.shape
    d = pipeline.depth
    wv, wt = explain_weights(pipeline)
    has_v, has_t = st["has_vec"], st["has_text"]
    vn, tn, fused = st["vec_norm"], st["text_norm"], st["fused"]
    if mode == "hybrid" and pipeline.fusion == "wsum":
        v_leg, t_leg = leg_values(pipeline, st)
        v_term = np.where(st["valid"], wv * v_leg, np.nan)
        t_term = np.where(st["valid"], wt * t_leg, np.nan)
    elif mode == "hybrid" and pipeline.fusion == "rrf":
        k = pipeline.rrf_k
        v_term = np.where(has_v, wv / (k + cs.vec_rank + 1.0), 0.0)
        t_term = np.where(has_t, wt / (k + cs.text_rank + 1.0), 0.0)
    elif mode == "hybrid" and pipeline.fusion in SINGLE_LEG_FUSIONS:
        v_term = np.where(has_v, vn, 0.0) * wv
        t_term = np.where(has_t, tn, 0.0) * wt
    elif mode == "vector":
        v_term, t_term = np.where(has_v, vn, np.nan), np.zeros(fused.shape)
    elif mode == "keyword":
        v_term, t_term = np.zeros(fused.shape), np.where(has_t, tn, np.nan)
    else:  # comb*: not a sum of two weighted terms; the whole fused value is "other"
        v_term, t_term = np.zeros(fused.shape), np.zeros(fused.shape)
    valid = st["valid"]
    v_term = np.where(valid, v_term, np.nan)
    t_term = np.where(valid, t_term, np.nan)
    other = fused - v_term - t_term
    mult = np.where(valid, np.nan_to_num(st["decay"], nan=1.0), np.nan)
    decayed = fused * mult
    neighbor = np.where(valid, np.nan_to_num(st.get("neighbor", np.zeros(fused.shape))), np.nan)
    extra = {col: np.where(valid, st[key], np.nan) for key, col in extra_columns(st)}
    score = st["final"]
    heads = st.get("heading_only", np.zeros(fused.shape, dtype=bool))

    rank = np.full((nq, width), -1, dtype=np.int64)
    how = np.full((nq, width), -1, dtype=np.int64)
    qi_r, ki_r = np.nonzero(r.columns >= 0)
    rank[qi_r, r.columns[qi_r, ki_r]] = ki_r
    how[qi_r, r.columns[qi_r, ki_r]] = r.selected_by[qi_r, ki_r]
    relaxed_rows = (r.selected_by == 1).any(axis=1)
    _, wt_clamped = clamp_weights(pipeline.vector_weight, pipeline.text_weight)
    ms = pipeline.min_score

    reasons = np.empty((nq, width), dtype=object)
    for qi in range(nq):
        for c in range(width):
            if not cs.valid[qi, c]:
                continue
            if rank[qi, c] >= 0:
                reasons[qi, c] = str(SELECTED_BY[how[qi, c]])
                continue
            reasons[qi, c] = _drop_reason(
                pipeline,
                mode,
                d,
                bool(valid[qi, c]),
                bool(heads[qi, c]),
                bool(cs.has_vec[qi, c]),
                int(cs.vec_rank[qi, c]),
                bool(cs.has_text[qi, c]),
                int(cs.text_rank[qi, c]),
                float(fused[qi, c]),
                float(mult[qi, c]),
                float(score[qi, c]),
                ms,
                bool(relaxed_rows[qi]),
                wt_clamped,
                bool(has_t[qi, c]),
            )
    if "project_out" in st:  # OpenClaw 2026.9.6: a malformed project annotation
        reasons[st["project_out"]] = "malformed project annotation (leaves ranking)"
    qi, ci = np.nonzero(cs.valid)
    pos = cs.pos[qi, ci]
    t = cs.table
    obj = np.empty(0, dtype=object)
    df = pd.DataFrame(
        {
            "qid": np.asarray(cs.qids, dtype=object)[qi],
            "docno": t.ids[pos] if len(pos) else obj,
            "path": t.paths[pos] if len(pos) else obj,
            "start_line": t.start_lines[pos],
            "end_line": t.end_lines[pos],
            "source": t.sources[pos] if len(pos) else obj,
            "vector_score": cs.vec_score[qi, ci],
            "vector_rank": np.where(cs.has_vec[qi, ci], cs.vec_rank[qi, ci], -1),
            "vector_norm": vn[qi, ci],
            "vector_term": v_term[qi, ci],
            "text_raw": cs.text_raw[qi, ci],
            "text_rank": np.where(cs.has_text[qi, ci], cs.text_rank[qi, ci], -1),
            "text_norm": tn[qi, ci],
            "text_term": t_term[qi, ci],
            "other": other[qi, ci],
            "fused": fused[qi, ci],
            "decay": mult[qi, ci],
            "decayed": decayed[qi, ci],
            "neighbor": neighbor[qi, ci],
            **{col: v[qi, ci] for col, v in extra.items()},
            "score": score[qi, ci],
            "mmr_position": st["mmr_position"][qi, ci],
            "rank": rank[qi, ci],
            "fate": np.where(rank[qi, ci] >= 0, "returned", "dropped"),
            "reason": reasons[qi, ci] if len(qi) else obj,
            "pos": pos,
        }
    )
    if with_text:
        df["text"] = cs.texts(pos)
    # Returned first (in rank order), then dropped by score (unscorable last).
    key = np.where(df["rank"] >= 0, df["rank"], width + 1).astype(float)
    df["_k1"] = df["fate"] != "returned"
    df["_k2"] = np.where(df["rank"] >= 0, key, -np.nan_to_num(df["score"], nan=-np.inf))
    qorder = {q: i for i, q in enumerate(cs.qids)}
    df["_k0"] = df["qid"].map(qorder)
    df = df.sort_values(["_k0", "_k1", "_k2"], kind="stable").drop(columns=["_k0", "_k1", "_k2"])
    df = df.reset_index(drop=True)
    df.attrs["mode"] = mode  # attrs["identifiers"]: each query's, with identifier_tier
    df.attrs["formula"] = explain_formula(pipeline, mode)
    if "identifier_tier" in pipeline.active_stages(mode):
        named = {q: identifier_terms(text) for q, text in zip(cs.qids, cs.queries, strict=True)}
        df.attrs["identifiers"] = named
        terms = list(dict.fromkeys(t for ts in named.values() for t in ts))
        df.attrs["formula"] += "; identifier tier: " + (
            f"units holding more of {', '.join(terms)} lead (ids_held)"
            if terms
            else "the query names no identifier (no unit moves)"
        )
    df.attrs["weights"] = (wv, wt)
    return df


def _drop_reason(
    p: Params,
    mode: str,
    depth: int,
    valid: bool,
    heading: bool,
    found_v: bool,
    vrank: int,
    found_t: bool,
    trank: int,
    fused: float,
    mult: float,
    score: float,
    min_score: float,
    relaxed: bool,
    wt: float,
    used_t: bool,
) -> str:
    """Why one retrieved candidate is not a result (see ``explain``)."""
    if heading:
        return "heading-only chunk (drop_headings)"
    if not valid:
        in_v = found_v and vrank < depth and mode != "keyword"
        in_t = found_t and trank < depth and mode != "vector" and p.keyword
        deep = (found_v and vrank >= depth) or (found_t and trank >= depth)
        if deep and not in_v and not in_t:
            legs = (("vector", found_v, vrank), ("keyword", found_t, trank))
            ranks = ", ".join(f"{leg} rank {r + 1}" for leg, f, r in legs if f)
            return f"beyond the depth {depth} ({ranks})"
        if p.best_line and math.isfinite(fused):  # scored, then no top line in it
            return f"holds none of the query's top {p.best_line_depth} lines (best_line)"
        if found_t and not found_v and (mode == "vector" or not p.keyword):
            return "found only by the keyword leg, which this system does not use"
        if found_v and not found_t and mode == "keyword":
            return "found only by the vector leg, which this system does not use"
        return f"the {p.fusion} fusion cannot score a candidate found by one leg only"
    if relaxed:
        if not used_t:
            return "relaxed keyword fallback (nothing passed minScore) keeps keyword hits only"
        if score < min(min_score, wt):
            return f"below the relaxed threshold {min(min_score, wt):g}"
        return f"beyond maxResults {p.max_results}"
    if mode != "keyword" and score < min_score:
        fill = " (no spare slot for a keyword fill)" if p.fill_keyword_only and used_t else ""
        if mult < 1.0 and fused >= min_score:  # decay alone pushed it under the threshold
            return f"below minScore {min_score:g} after decay ×{mult:.4g} (fused {fused:.3f}){fill}"
        return f"below minScore {min_score:g}{fill}"
    return f"beyond maxResults {p.max_results}"
