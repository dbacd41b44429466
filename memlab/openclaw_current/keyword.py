"""OpenClaw 2026.9.6's keyword leg over given FTS5 ranks (spec §5.1–§5.4): ``keyword_leg``.

The raw bm25 ranks of the body and path tables come in, for the strict query and each
expansion term; out come the release's keyword hits: the 200-wide window, the lexical
boost on every body hit, expansion for thin results, the filename leg's exact tiers,
merged by chunk id. ``locale_key`` is the release's tie order by path (JavaScript
``localeCompare``). The rest of the release's ranking is the ``openclaw-current``
preset's stages; tests/release_oracle.py composes all of it over given hits as the
oracle those stages are checked against.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memlab.openclaw_current.ranking import (
    build_fts_query,
    expansion_keywords,
    fts_substring_terms,
    keyword_boost,
    path_specificity,
)
from memlab.retrieval.fusion import bm25_rank_to_score

WINDOW = 200  # ranked candidates per search and per leg

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


def keyword_order_key(hit: dict, prefer_exact_body: bool = True) -> tuple:
    """The release's order of keyword hits: exact-path tier (3/2/1, then 0) first; within a
    tier, hits with body text first (``prefer_exact_body``), then score, text score, path
    score (non-exact hits only), then ``locale_key`` of the path, start line and id."""
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
        hits.append(hit_row(c, keyword_boost(query, c["path"], c["text"], ts), ts, 0.0, True, 0))
    path_hits = {
        p: hit_row(first_chunk[p], 0.0, 0.0, 0.0, False, path_specificity(query, p))
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
                path_hits[p] = hit_row(first_chunk[p], ps, 0.0, ps, False, 0)
                extra += 1
    return _limit(_merge([hits, list(path_hits.values())], query))


def hit_row(
    c: Mapping, score: float, text_score: float, path_score: float, body: bool, spec: int
) -> dict:
    """One keyword hit of chunk ``c`` as the release carries it: its id, path, lines and
    source, with ``score`` (boosted), ``text_score`` (body bm25 map), ``path_score`` (path
    table), ``has_body`` and ``spec`` (exact-path tier, 0 for none)."""
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
    return sorted(merged, key=keyword_order_key)


def _limit(results: list[dict]) -> list[dict]:
    ranked = sorted(results, key=keyword_order_key)
    exact_body = [r for r in ranked if r["spec"] > 0 and r["has_body"]][:WINDOW]
    exact = sorted(
        exact_body + [r for r in ranked if r["spec"] > 0 and not r["has_body"]],
        key=keyword_order_key,
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
