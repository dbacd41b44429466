"""Test oracle: OpenClaw 2026.9.6's whole ``memory_search`` ranking over given legs' hits.

``rank_hits`` reproduces, hit by hit, everything the release does after its SQL runs
(spec §5.1–§5.9): the keyword leg (the engine's ``keyword_leg``), the fixed 0.7/0.3
merge, decay × importance × project, exact tiers first, MMR, and the selection with
keyword-only fill. It is written as the release reads — per hit, in dicts — and not as
memlab ranks (arrays, declared stages), so the ``openclaw-current`` preset is checked
against an independent composition of the same rules; the node differential
(tests/test_openclaw_current_ranking.py) checks this oracle against the release itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from memlab.openclaw_current.keyword import (
    WINDOW,
    hit_row,
    keyword_leg,
    keyword_order_key,
    locale_key,
)
from memlab.openclaw_current.ranking import (
    DAY_MS,
    MMR_LAMBDA,
    decay_multiplier,
    decay_timestamp_ms,
    importance_multiplier,
    js_trim,
    mmr_rerank,
    path_specificity,
    project_excluded,
    project_multiplier,
)
from memlab.retrieval.rerank import snippet

VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
MIN_SCORE = 0.35
MAX_RESULTS = 6


def rank_hits(
    query: str,
    chunks: Sequence[Mapping[str, Any]],
    vector_scores: Mapping[str, float] | None,
    bm25_ranks: Mapping[str, Any] | None,
    *,
    path_rows: Mapping[str, Any] | None = None,
    active_projects: Iterable[str] | None = None,
    now_ms: float,
    mtimes: Mapping[str, float] | None = None,
    max_results: int = MAX_RESULTS,
    min_score: float = MIN_SCORE,
    tokenizer: str = "unicode61",
) -> list[dict[str, Any]]:
    """OpenClaw 2026.9.6's ``memory_search`` ranking of given hits → ``[{id, path, startLine, score}]``.

    ``chunks``: every indexed chunk, mappings with ``id, path, startLine, endLine, text``
    and optional ``importance``, ``projectKey``, ``source`` ("memory"). ``vector_scores``:
    chunk id → cosine score of the vector leg (None: no provider, keyword-only mode).
    ``bm25_ranks``: chunk id → FTS5 bm25 rank of the body table for the query (None
    for a substring-only hit), or search string → such a mapping for the query and
    each expansion term (flat: the strict query's hits only, so expansion terms find
    nothing; None: no FTS, vector-only mode). ``path_rows``: path →
    bm25 rank of the path table, flat or per search string likewise; exact path
    tiers are found from the chunks' paths. ``mtimes``: path → ms, for undated
    non-evergreen files. Scores: content = 0.7·vector + 0.3·keyword, × decay ×
    importance × project; exact-path hits lead by tier with score = the project
    multiplier; MMR λ 0.7; selection ≥ ``min_score`` with keyword-only fill, or
    keyword hits ≥ 0 when nothing passes. ``tokenizer``: the index's FTS tokenizer the
    legs came from (``keyword_leg``; a substring-only path row under trigram has rank 0).
    """
    query = js_trim(query)
    if not query:
        return []
    active = set(active_projects or ())
    window = WINDOW if active else max(WINDOW, max_results)
    by_id = {c["id"]: c for c in chunks}
    keyword = (
        keyword_leg(query, chunks, bm25_ranks, path_rows, tokenizer)
        if bm25_ranks is not None
        else []
    )
    vector = sorted(
        ((cid, s) for cid, s in (vector_scores or {}).items() if cid in by_id),
        key=lambda kv: -kv[1],
    )
    vector = vector[:WINDOW]

    def adjust(score: float, c: Mapping) -> float:
        ts = decay_timestamp_ms(c["path"], c.get("source", "memory"), mtimes)
        if ts is not None:
            score = score * decay_multiplier((now_ms - ts) / DAY_MS)
        score = score * importance_multiplier(c.get("importance"))
        return score * project_multiplier(c.get("projectKey"), active) if active else score

    def out(rows: Iterable[Mapping]) -> list[dict[str, Any]]:
        return [
            {"id": r["id"], "path": r["path"], "startLine": r["startLine"], "score": r["score"]}
            for r in list(rows)[:max_results]
        ]

    if vector_scores is None:  # keyword-only mode
        ranked = []
        for r in keyword:
            c = by_id[r["id"]]
            if project_excluded(c.get("projectKey")):
                continue
            base = (
                (1 + max(0.0, min(1.0, r["score"] if r["has_body"] else 0.0))) / 2
                if r["spec"]
                else r["score"]
            )
            ranked.append(dict(r, score=adjust(base, c)))
        ranked.sort(key=lambda r: keyword_order_key(r, prefer_exact_body=False))
        for r in ranked:
            if r["spec"]:
                r["score"] = project_multiplier(by_id[r["id"]].get("projectKey"), active)
        strict = [r for r in ranked if r["score"] >= min_score]
        return out(strict[:window] if strict else [r for r in ranked if r["score"] >= 0][:window])
    if bm25_ranks is None:  # vector-only mode
        rows = [
            dict(hit_row(by_id[cid], 0, 0, 0, False, 0), score=adjust(s, by_id[cid]))
            for cid, s in vector
            if not project_excluded(by_id[cid].get("projectKey"))
        ]
        rows = [r for r in rows if r["score"] >= min_score]
        rows.sort(key=lambda r: (-r["score"], locale_key(r["path"]), r["startLine"], r["endLine"]))
        return out(rows[:window])
    return out(merge_hybrid(query, by_id, vector, keyword, active, adjust, window, min_score))


def merge_hybrid(
    query: str,
    by_id: Mapping[str, Mapping],
    vector: list[tuple[str, float]],
    keyword: list[dict],
    active: set[str],
    adjust: Callable[[float, Mapping], float],
    window: int,
    min_score: float,
) -> list[dict]:
    """The merge by chunk id (0.7·vector + 0.3·keyword), multipliers, exact tiers
    3/2/1 (each MMR-ordered, scored by the project multiplier), then the other
    hits by score and MMR, then the selection."""
    entries: dict[str, dict] = {}
    for cid, s in vector:
        entries[cid] = dict(
            hit_row(by_id[cid], 0, 0, 0, False, path_specificity(query, by_id[cid]["path"])),
            vector=s,
            ranking=0.0,
            has_vec=True,
            has_kw=False,
        )
    for r in keyword:
        e = entries.get(r["id"])
        if e is None:
            entries[r["id"]] = dict(r, vector=0.0, ranking=r["score"], has_vec=False, has_kw=True)
        else:
            e.update(
                text_score=r["text_score"],
                has_body=r["has_body"],
                ranking=r["score"],
                path_score=r["path_score"],
                spec=max(e["spec"], r["spec"]),
                has_kw=True,
            )
    rankable = []
    for e in entries.values():
        c = by_id[e["id"]]
        if project_excluded(c.get("projectKey")):
            continue
        kw = e["ranking"] if e["text_score"] > 0 else (0.0 if e["spec"] > 0 else e["path_score"])
        content = VECTOR_WEIGHT * e["vector"] + TEXT_WEIGHT * kw
        lexical = e["ranking"] if e["has_body"] and e["text_score"] == 0 else 0.0
        if e["spec"] > 0:
            base = (1 + max(0.0, min(1.0, content))) / 2
        else:
            base = lexical if content == 0 else content
        ranking = adjust(base, c)
        score = (
            project_multiplier(c.get("projectKey"), active)
            if e["spec"] > 0
            else (0.0 if content == 0 else ranking)
        )
        rankable.append(
            dict(e, rank_score=ranking, lexical=lexical, score=score, snippet=snippet(c["text"]))
        )

    def tie(r: dict) -> tuple:
        return (
            -r["rank_score"],
            -r["lexical"],
            locale_key(r["path"]),
            r["startLine"],
            r["endLine"],
        )

    ordered: list[dict] = []
    for tier in (3, 2, 1):
        group = sorted((r for r in rankable if r["spec"] == tier), key=tie)
        for r in mmr_rerank([dict(r, score=r["rank_score"]) for r in group], MMR_LAMBDA):
            ordered.append(
                dict(r, score=project_multiplier(by_id[r["id"]].get("projectKey"), active))
            )
    rest = sorted((r for r in rankable if r["spec"] == 0), key=lambda r: (-r["score"], *tie(r)))
    ordered.extend(mmr_rerank(rest, MMR_LAMBDA))
    return select(ordered, keyword, window, min_score)


def select(merged: list[dict], keyword: list[dict], window: int, min_score: float) -> list[dict]:
    strict = [r for r in merged if r["score"] >= min_score]
    selected = strict[:window]
    if not keyword or len(selected) == window:
        return selected

    def key(r: Mapping) -> tuple:
        return (r["source"], r["path"], r["startLine"], r["endLine"])

    keys = {key(r) for r in keyword}
    if not strict:
        return [r for r in merged if r["score"] >= 0 and key(r) in keys][:window]
    seen = {key(r) for r in selected}
    for r in merged:
        if len(selected) == window:
            break
        if r["score"] < min_score and r["vector"] == 0 and key(r) in keys and key(r) not in seen:
            seen.add(key(r))
            selected.append(r)
    return selected
