"""Stages of OpenClaw 2026.9.6's ranking (spec §5–§9), each a parameter off by default.

- ``lexical_boost`` (after ``fusion``, re-running normalize and fusion over the boosted
  input): the keyword leg's input becomes the release's
  keyword score. Over ``keyword_mode="openclaw-current"`` candidates: the boosted
  body score when the chunk has a body hit (textScore > 0), else 0 for an exact-path
  hit, else the path score — path-only hits join the keyword leg. Over any other
  candidates: ``keyword_boost(query, path, text, textScore)`` of every keyword hit.
- ``decay="openclaw-current"`` (``memlab.stages.decay``): the release's dated-path rule,
  × exp(−ln2/half_life · max(0, age days)), in every mode.
- ``importance`` (``importance_boost``): × ``importance_multiplier`` of the chunk's
  stored importance (none → 1; 0.75 + 0.05·clamp(floor n, 1, 10)).
- ``project`` (``project_boost``, ``active_projects``): × ``project_multiplier``
  (all keys active 1.15, tagged otherwise 0.9, else 1); a malformed annotation takes
  the chunk out of ranking (``valid`` False).
- ``exact_tiers`` (``exact_tiers``): chunks whose path the query names exactly
  (``path_specificity`` 3, 2, 1) lead, tier by tier, ordered by
  ``rank_score`` = (1 + clamp(fused, 0, 1))/2 × decay × importance × project; their
  visible score is the project multiplier (hybrid and keyword-only modes).
- ``selection_rule="openclaw-current"`` (the selection stage) and
  ``mmr="openclaw-current"``: ties broken by path (ICU order), start, end line; exact
  tiers first; MMR with the release's tokenizer (``mmr_rerank``'s order, computed by
  ``mmr_rerank_order`` with tokens cached per chunk) per tier and over the rest; keyword-only hits (no vector hit) fill spare slots; when nothing passes
  minScore, keyword hits ≥ 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.config.vocab import SELECTION_RULES
from memlab.retrieval.rerank import snippet
from memlab.stages.legs import fusion_stage, normalize_stage

if TYPE_CHECKING:
    from memlab.openclaw_current.mmr import MmrTokenCache
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params
    from memlab.store import ChunkTable

__all__ = [
    "active_keys",
    "boosted_keyword_leg",
    "check_current_param",
    "current_mmr_order",
    "current_mmr_perm",
    "current_order",
    "exact_tiers_stage",
    "importance_stage",
    "lexical_boost_stage",
    "mmr_token_cache",
    "path_order",
    "project_stage",
]


def check_current_param(name: str, value: Any) -> None:
    """Validate the parameters of these stages (booleans, a rule, a list of keys)."""
    if name == "selection_rule":
        if value not in SELECTION_RULES:
            raise ValueError(
                f"selection_rule must be one of {', '.join(SELECTION_RULES)}; got {value!r}"
            )
    elif name == "active_projects":
        if isinstance(value, str):
            return
        if not isinstance(value, tuple | list | frozenset) or not all(
            isinstance(k, str) for k in value
        ):
            raise ValueError(
                f"active_projects must be a tuple of keys or a string 'a;b', got {value!r}"
            )
    elif not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def _gather(table_col: np.ndarray, cs: CandidateSet) -> np.ndarray:
    return table_col[np.where(cs.valid, cs.pos, 0)]


def boosted_keyword_leg(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``text_in`` = the release's keyword score of every keyword hit (see module doc);
    over release candidates also ``has_text`` (path-only hits join) and ``valid``
    (= has_vec | has_text, as the legs stage defines it)."""
    from memlab.openclaw_current.ranking import keyword_boost

    ex = cs.extra
    if "kw_hit" in ex:
        used = p.mode(cs) != "vector" and p.keyword
        has_t = ex["kw_hit"] & cs.valid & used
        k = np.where(
            ex["kw_text"] > 0, ex["kw_score"], np.where(ex["kw_spec"] > 0, 0.0, ex["kw_path"])
        )
        return {
            "has_text": has_t,
            "valid": st["has_vec"] | has_t,
            "text_in": np.where(has_t, k, np.nan),
        }
    has_t = st["has_text"]
    out = np.array(st["text_in"], dtype=np.float64, copy=True)
    for qi in range(len(cs)):
        cols = np.nonzero(has_t[qi])[0]
        if cols.size == 0:
            continue
        pos = cs.pos[qi, cols]
        for c, ps, text in zip(cols, pos, cs.texts(pos), strict=True):
            out[qi, c] = keyword_boost(
                cs.queries[qi], str(cs.table.paths[ps]), text, float(out[qi, c])
            )
    return {"has_text": has_t, "valid": st["has_vec"] | has_t, "text_in": out}


def lexical_boost_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The keyword leg's input boosted (``boosted_keyword_leg``), then the normalize and
    fusion stages run again over it (the stage sits after ``fusion`` in ``STAGES``, so
    the declared order of the first three stages stays legs → normalize → fusion)."""

    legs = dict(st)
    legs.update(boosted_keyword_leg(p, cs, st))
    legs.update(normalize_stage(p, cs, legs))
    # this boost replaces keyword-only mode's older one (keyword_boost), never stacks on it
    legs.update(fusion_stage(p, cs, legs, keyword_boost=False))
    keys = ("has_text", "valid", "text_in", "vec_norm", "text_norm", "text_floor", "fused")
    keys += ("final",)
    return {k: legs[k] for k in keys}


def _importance_column(table: ChunkTable) -> np.ndarray:
    from memlab.openclaw_current.ranking import importance_multiplier

    def compute(t: ChunkTable) -> np.ndarray:
        if t.importance is None:
            return np.ones(len(t))
        return np.array(
            [1.0 if np.isnan(v) else importance_multiplier(float(v)) for v in t.importance]
        )

    return table.derived(("openclaw-current", "importance"), compute)


def importance_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``importance`` (the multiplier; NaN where not valid) and ``final × importance``."""
    mult = np.where(st["valid"], _gather(_importance_column(cs.table), cs), np.nan)
    return {"importance": mult, "final": st["final"] * mult}


def _project_columns(table: ChunkTable, active: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    from memlab.openclaw_current.ranking import project_excluded, project_multiplier

    def compute(t: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
        keys = t.project_keys if t.project_keys is not None else [None] * len(t)
        mult = np.array([project_multiplier(k, active) for k in keys], dtype=np.float64)
        out = np.array([project_excluded(k) for k in keys], dtype=bool)
        return mult, out

    return table.derived(("openclaw-current", "project", active), compute)


def active_keys(value: str | tuple[str, ...] | list[str] | frozenset[str]) -> tuple[str, ...]:
    """The active project keys of ``active_projects``: a collection of keys, or one string
    split on ``;`` and ``,`` (``--set active_projects=net;home``); trimmed, empty ones
    dropped, sorted."""
    items = value.replace(",", ";").split(";") if isinstance(value, str) else list(value)
    return tuple(sorted({k.strip() for k in items if k.strip()}))


def project_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``project`` multiplier, ``final × project``; chunks with a malformed project
    annotation leave ranking (``valid`` False, ``final`` NaN, ``project_out`` True)."""
    active = active_keys(p.active_projects)
    mult_col, out_col = _project_columns(cs.table, active)
    out = st["valid"] & _gather(out_col, cs)
    valid = st["valid"] & ~out
    mult = np.where(valid, _gather(mult_col, cs), np.nan)
    final = np.where(valid, st["final"] * mult, np.nan)
    return {"valid": valid, "project": mult, "project_out": out, "final": final}


def exact_tiers_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``tier`` (path_specificity of the query for the chunk's path, 0 = none),
    ``rank_score`` (the order key: final for tier 0; for tiers 1–3
    (1 + clamp(fused, 0, 1))/2 × decay × importance × project, multiplied in that
    order), and ``final`` = the project multiplier (1 without that stage) for tiers."""
    from memlab.openclaw_current.ranking import path_specificity

    valid = st["valid"]
    tier = np.zeros(valid.shape, dtype=np.int64)
    paths = cs.table.paths
    for qi in range(len(cs)):
        memo: dict[str, int] = {}
        for c in np.nonzero(valid[qi])[0]:
            path = str(paths[cs.pos[qi, c]])
            if path not in memo:
                memo[path] = path_specificity(cs.queries[qi], path)
            tier[qi, c] = memo[path]
    tier = np.where(valid, tier, 0)
    base = (1 + np.clip(st["fused"], 0.0, 1.0)) / 2
    for key in ("decay", "importance", "project"):
        if key in st:
            base = base * st[key]
    is_tier = tier > 0
    proj = st["project"] if "project" in st else np.ones(valid.shape)
    final = np.where(is_tier, proj, st["final"])
    return {
        "tier": tier,
        "rank_score": np.where(valid, np.where(is_tier, base, st["final"]), np.nan),
        "final": np.where(valid, final, np.nan),
    }


def path_order(table: ChunkTable) -> np.ndarray:
    """Per chunk, the rank of its path in the release's tie order (ICU ``localeCompare``,
    ``memlab.openclaw_current.keyword.locale_key``), computed once per table."""
    from memlab.openclaw_current.keyword import locale_key

    def compute(t: ChunkTable) -> np.ndarray:
        uniq = sorted(set(map(str, t.paths)), key=locale_key)
        rank = {path: i for i, path in enumerate(uniq)}
        return np.array([rank[str(path)] for path in t.paths], dtype=np.int64)

    return table.derived(("openclaw-current", "path-order"), compute)


def id_order(table: ChunkTable) -> np.ndarray:
    """Per chunk, the rank of its id in ICU order (``locale_key``), once per table."""
    from memlab.openclaw_current.keyword import locale_key

    def compute(t: ChunkTable) -> np.ndarray:
        ranked = sorted(range(len(t)), key=lambda k: locale_key(str(t.ids[k])))
        out = np.empty(len(t), dtype=np.int64)
        out[np.asarray(ranked, dtype=np.int64)] = np.arange(len(t))
        return out

    return table.derived(("openclaw-current", "id-order"), compute)


def mmr_token_cache(table: ChunkTable) -> MmrTokenCache:
    """The table's cache of the release's MMR tokens, by chunk position (each chunk's
    700-unit snippet tokenised once, then reused by every query and system)."""
    from memlab.openclaw_current.mmr import MmrTokenCache

    return table.derived(("openclaw-current", "mmr-tokens"), lambda t: MmrTokenCache())


def current_mmr_perm(
    scores: list[float],
    texts: list[str],
    lam: float,
    *,
    positions: Sequence[int] | np.ndarray | None = None,
    table: ChunkTable | None = None,
) -> list[int]:
    """The release's MMR order (``mmr_rerank``: min-max relevance, Jaccard over
    ``mmr_tokenize`` of each text's 700-unit snippet, ties → higher score, then earlier)
    as a permutation of the inputs, which are given in ranked order; computed by
    ``mmr_rerank_order`` (the same permutation, vectorised). With ``positions`` and
    ``table`` the snippets' tokens are cached by chunk position across calls."""
    from memlab.openclaw_current.mmr import mmr_rerank_order

    snippets = [snippet(t) for t in texts]
    if positions is None or table is None:
        return mmr_rerank_order(scores, snippets, lam)
    keys = [int(p) for p in positions]
    return mmr_rerank_order(scores, snippets, lam, cache=mmr_token_cache(table), keys=keys)


def current_order(p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]) -> np.ndarray:
    """The ranked columns [Q, C] under ``selection_rule="openclaw-current"``: valid ones
    first, by (tier desc, rank_score desc, path ICU order, start line, end line); in
    keyword-only mode ties as the release's keyword list breaks them."""
    valid, final = st["valid"], st["final"]
    tier = st.get("tier", np.zeros(valid.shape, dtype=np.int64))
    rscore = st.get("rank_score", final)
    t = cs.table
    pos = np.where(cs.valid, cs.pos, 0)
    porder = path_order(t)[pos]
    start, end = t.start_lines[pos], t.end_lines[pos]
    nq, width = valid.shape
    order = np.empty((nq, width), dtype=np.int64)
    # Keyword-only mode breaks ties as the release's keyword list does: best body
    # textScore, then path score (non-exact hits), path, start line, chunk id.
    kw_ties = p.mode(cs) == "keyword" and "kw_text" in cs.extra
    if kw_ties:
        ex = cs.extra
        text_s = np.where(valid, ex["kw_text"], 0.0)
        path_s = np.where(valid & (tier == 0), ex["kw_path"], 0.0)
        last = id_order(t)[pos]
    for qi in range(nq):
        head: tuple[np.ndarray, ...] = (end[qi], start[qi], porder[qi])
        if kw_ties:
            head = (last[qi], start[qi], porder[qi], -path_s[qi], -text_s[qi])
        keys = (*head, -np.nan_to_num(rscore[qi], nan=0.0), -tier[qi], ~valid[qi])
        order[qi] = np.lexsort(keys)
    return order


def current_mmr_order(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray], order: np.ndarray
) -> np.ndarray:
    """``order`` (from `current_order`: tiers contiguous, highest first) with each tier
    and the untiered rest re-ordered by ``current_mmr_perm`` (the release's MMR, λ =
    ``p.mmr_lambda``; relevance: rank_score in a tier, the score in the rest)."""
    valid = st["valid"]
    tier = st.get("tier", np.zeros(valid.shape, dtype=np.int64))
    rscore = st.get("rank_score", st["final"])
    out = order.copy()
    for qi in range(order.shape[0]):
        n = int(valid[qi].sum())
        head = order[qi, :n]
        parts = []
        for level in (3, 2, 1, 0):
            cols = head[tier[qi, head] == level]
            if cols.size > 1:
                pos_c = cs.pos[qi, cols]
                perm = current_mmr_perm(
                    rscore[qi, cols].tolist(),
                    cs.texts(pos_c),
                    p.mmr_lambda,
                    positions=pos_c,
                    table=cs.table,
                )
                cols = cols[np.asarray(perm, dtype=np.int64)]
            parts.append(cols)
        out[qi, :n] = np.concatenate(parts)
    return out
