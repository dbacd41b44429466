"""OpenClaw 2026.9.6's whole ranking over given legs' hits (spec §5.1–§5.9): ``rank_hits``.

The legs' raw outputs come in (cosine scores, FTS5 bm25 ranks of the body and path
tables); everything the release does after its SQL runs is reproduced here: the
200-wide window, the lexical boost on every body hit, expansion for thin results,
the filename leg's exact tiers, the fixed 0.7/0.3 merge, decay × importance ×
project, exact tiers first, MMR, and the selection with keyword-only fill.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from memlab.fusion import bm25_rank_to_score
from memlab.openclaw_current.ranking import (
    DAY_MS,
    MMR_LAMBDA,
    build_fts_query,
    decay_multiplier,
    decay_timestamp_ms,
    expansion_keywords,
    fts_substring_terms,
    importance_multiplier,
    js_trim,
    keyword_boost,
    mmr_rerank,
    path_specificity,
    project_excluded,
    project_multiplier,
)
from memlab.rerank import snippet

WINDOW = 200  # ranked candidates per search and per leg
VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
MIN_SCORE = 0.35
MAX_RESULTS = 6

# ICU root collation order of ASCII punctuation and symbols (JavaScript localeCompare,
# which breaks the release's score ties by path); digits, then letters, follow.
_PUNCT_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


@functools.lru_cache(maxsize=1 << 16)  # paths and ids recur in every search's sort
def locale_key(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """Sort key approximating ``a.localeCompare(b)`` (ICU root): punctuation before
    digits before letters, case ignored first, then lower case before upper.
    Exact for ASCII; other characters compare by case-folded code point."""
    primary: list[tuple[int, int]] = []
    tertiary: list[int] = []
    for ch in text:
        if ch in _PUNCT_ORDER:
            primary.append((0, _PUNCT_ORDER.index(ch)))
        elif ch.isascii() and ch.isdigit():
            primary.append((1, ord(ch)))
        elif ch.isascii() and ch.isalpha():
            primary.append((2, ord(ch.lower())))
        else:
            primary.append((3, ord(ch.casefold()[0])))
        tertiary.append(1 if ch.isupper() else 0)
    return tuple(primary), tuple(tertiary)


def _per_search(ranks: Mapping[str, Any] | None, query: str) -> dict[str, Mapping[str, Any]]:
    """Ranks keyed by search string; a flat mapping is the strict query's alone."""
    if not ranks:
        return {}
    if all(isinstance(v, Mapping) for v in ranks.values()):
        return dict(ranks)
    return {query: ranks}


def _keyword_cmp_key(hit: dict, prefer_exact_body: bool = True) -> tuple:
    exact = hit["spec"] > 0
    return (
        -hit["spec"],
        -int(hit["has_body"]) if prefer_exact_body and exact else 0,
        -hit["score"],
        -hit["text_score"],
        0 if exact else -hit["path_score"],
        locale_key(hit["path"]),
        hit["startLine"],
        locale_key(hit["id"]),
    )


def _search_one(
    term: str,
    query: str,
    by_id: Mapping[str, Mapping],
    body: Mapping[str, Any],
    paths: Mapping[str, Any],
    first_chunk: Mapping[str, Mapping],
    exact_paths: list[str],
    tokenizer: str = "unicode61",
) -> list[dict]:
    """One keyword search (body + path tables) of ``term``, boosted and matched by ``query``."""
    hits: list[dict] = []
    ranked = sorted(body.items(), key=lambda kv: math.inf if kv[1] is None else kv[1])[:WINDOW]
    for cid, rank in ranked:
        c = by_id[cid]
        ts = 0.0 if rank is None else bm25_rank_to_score(rank)
        hits.append(_hit(c, keyword_boost(query, c["path"], c["text"], ts), ts, 0.0, True, 0))
    path_hits = {
        p: _hit(first_chunk[p], 0.0, 0.0, 0.0, False, path_specificity(query, p))
        for p in exact_paths
    }
    # under trigram a term of short tokens only is a substring search: its path rows count
    if build_fts_query(term, tokenizer) is not None or fts_substring_terms(term, tokenizer):
        lexical = sorted(
            paths.items(), key=lambda kv: (-bm25_rank_to_score(kv[1]), locale_key(kv[0]))
        )
        extra = 0
        for p, rank in lexical:
            if p not in first_chunk:
                continue
            ps = bm25_rank_to_score(rank)
            if p in path_hits:
                h = path_hits[p]
                h["path_score"] = max(h["path_score"], ps)
                h["score"] = max(h["score"], ps)
            elif path_specificity(query, p) == 0 and extra < WINDOW:
                path_hits[p] = _hit(first_chunk[p], ps, 0.0, ps, False, 0)
                extra += 1
    return _limit(_merge([hits, list(path_hits.values())], query))


def _hit(
    c: Mapping, score: float, text_score: float, path_score: float, body: bool, spec: int
) -> dict:
    return {
        "id": c["id"],
        "path": c["path"],
        "startLine": c["startLine"],
        "endLine": c["endLine"],
        "source": c.get("source", "memory"),
        "score": score,
        "text_score": text_score,
        "path_score": path_score,
        "has_body": body,
        "spec": spec,
    }


def _merge(result_sets: Iterable[list[dict]], query: str) -> list[dict]:
    seen: dict[str, dict] = {}
    for results in result_sets:
        for r in results:
            e = seen.get(r["id"])
            if e is None:
                seen[r["id"]] = dict(r, spec=path_specificity(query, r["path"]))
                continue
            body = max(e["score"] if e["has_body"] else 0.0, r["score"] if r["has_body"] else 0.0)
            e["text_score"] = max(e["text_score"], r["text_score"])
            e["path_score"] = max(e["path_score"], r["path_score"])
            e["has_body"] = e["has_body"] or r["has_body"]
            e["score"] = body if body > 0 else e["path_score"]
    merged = list(seen.values())
    for r in merged:
        if not r["has_body"]:
            r["score"] = 1.0 if r["spec"] > 0 else r["path_score"]
    return sorted(merged, key=_keyword_cmp_key)


def _limit(results: list[dict]) -> list[dict]:
    ranked = sorted(results, key=_keyword_cmp_key)
    exact_body = [r for r in ranked if r["spec"] > 0 and r["has_body"]][:WINDOW]
    exact = sorted(
        exact_body + [r for r in ranked if r["spec"] > 0 and not r["has_body"]],
        key=_keyword_cmp_key,
    )
    keep: set[tuple[str, str]] = set()
    for r in exact:
        keep.add((r["source"], r["path"]))
        if len(keep) == WINDOW:
            break
    return [r for r in exact if (r["source"], r["path"]) in keep] + [
        r for r in ranked if r["spec"] == 0
    ][:WINDOW]


def keyword_leg(
    query: str,
    chunks: Sequence[Mapping],
    bm25_ranks: Mapping[str, Any],
    path_rows: Mapping[str, Any] | None,
    tokenizer: str = "unicode61",
) -> list[dict]:
    """The release's keyword results: strict search, then expansion when fewer than 200
    non-exact hits (skipped when the terms rebuild the same AND query and the strict
    search found hits), merged by chunk id, exact-path hits first. ``tokenizer``: the
    index's FTS tokenizer as the release builds queries for it (``unicode61`` or
    ``trigram``: short tokens are substring filters, expansion keeps CJK runs whole)."""
    by_id = {c["id"]: c for c in chunks}
    first_chunk: dict[str, Mapping] = {}
    for c in sorted(chunks, key=lambda c: (c["startLine"], c["endLine"], c["id"])):
        first_chunk.setdefault(c["path"], c)
    exact_paths = sorted(
        (p for p in first_chunk if path_specificity(query, p) > 0),
        key=lambda p: (-path_specificity(query, p), p),
    )[:WINDOW]
    bodies, paths = _per_search(bm25_ranks, query), _per_search(path_rows, query)

    def run(term: str) -> list[dict]:
        return _search_one(
            term,
            query,
            by_id,
            bodies.get(term, {}),
            paths.get(term, {}),
            first_chunk,
            exact_paths,
            tokenizer,
        )

    full = run(query)
    if sum(1 for r in full if r["spec"] == 0) >= WINDOW:
        return full
    terms = expansion_keywords(query, tokenizer)
    if not terms:
        return full
    strict, kw = build_fts_query(query, tokenizer), build_fts_query(" ".join(terms), tokenizer)
    if full and (strict and strict.lower()) == (kw and kw.lower()):
        return full
    return _limit(_merge([full, *(run(t) for t in terms)], query))


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
        ranked.sort(key=lambda r: _keyword_cmp_key(r, prefer_exact_body=False))
        for r in ranked:
            if r["spec"]:
                r["score"] = project_multiplier(by_id[r["id"]].get("projectKey"), active)
        strict = [r for r in ranked if r["score"] >= min_score]
        return out(strict[:window] if strict else [r for r in ranked if r["score"] >= 0][:window])
    if bm25_ranks is None:  # vector-only mode
        rows = [
            dict(_hit(by_id[cid], 0, 0, 0, False, 0), score=adjust(s, by_id[cid]))
            for cid, s in vector
            if not project_excluded(by_id[cid].get("projectKey"))
        ]
        rows = [r for r in rows if r["score"] >= min_score]
        rows.sort(key=lambda r: (-r["score"], locale_key(r["path"]), r["startLine"], r["endLine"]))
        return out(rows[:window])
    return out(_merge_hybrid(query, by_id, vector, keyword, active, adjust, window, min_score))


def _merge_hybrid(
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
            _hit(by_id[cid], 0, 0, 0, False, path_specificity(query, by_id[cid]["path"])),
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
    return _select(ordered, keyword, window, min_score)


def _select(merged: list[dict], keyword: list[dict], window: int, min_score: float) -> list[dict]:
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
