"""The release's MMR (spec §6) vectorised: the same permutation as ``mmr_rerank``, fast.

:func:`memlab.openclaw_current.ranking.mmr_rerank` is the readable reference (pure
Python over token sets, O(n²) set intersections per query). Here each distinct snippet
is tokenised once (a :class:`MmrTokenCache` keeps token ids per key, e.g. per chunk
position, across queries), the pairwise Jaccard matrix comes from one sparse incidence
product of integer counts, and the greedy loop runs in numpy. Every float is computed
by the same IEEE operations in the same order as the reference, so the order is
identical, ties included; inputs where the reference's comparisons meet NaN (or
scores that float64 cannot hold exactly) are handed to the reference itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memlab.chunking.annotations import js_trim
from memlab.openclaw_current.ranking import MMR_CJK_CLASS, MMR_LAMBDA, mmr_rerank

__all__ = ["MmrTokenCache", "mmr_jaccard_matrix", "mmr_rerank_order", "mmr_tokens_fast"]

_WORD_RE = re.compile("[a-z0-9_]+")
_CJK_RUN_RE = re.compile(MMR_CJK_CLASS + "+")
_EXACT_INT = 2**53  # |int| below this converts to float64 exactly


def mmr_tokens_fast(text: str) -> tuple[set[str], str]:
    """(``mmr_tokenize(text)``, the token-less key): the same token set, found with one
    regex pass per kind (``[a-z0-9_]+`` runs; each run of CJK/kana/Hangul characters
    gives its characters and its adjacent pairs, as the reference's per-character loop
    does, since a pair never spans a non-CJK character). The key is the trimmed
    lower-cased text when there are no tokens (two token-less texts are similar iff
    their keys are equal), else ``""``."""
    lower = js_trim(text).lower()
    tokens = set(_WORD_RE.findall(lower))
    for run in _CJK_RUN_RE.findall(lower):
        tokens.update(run)
        tokens.update(run[k : k + 2] for k in range(len(run) - 1))
    return tokens, ("" if tokens else lower)


@dataclass
class MmrTokenCache:
    """Token ids of tokenised snippets, by a caller's key (a chunk position): one
    vocabulary (token → int) shared by every entry, so ids of two entries compare.
    Keep one per chunk table (``ChunkTable.derived``); a key must always name the same
    snippet."""

    vocab: dict[str, int] = field(default_factory=dict)
    entries: dict[Hashable, tuple[np.ndarray, str]] = field(default_factory=dict)

    def get(self, key: Hashable, snippet: str) -> tuple[np.ndarray, str]:
        """(sorted unique token ids, token-less key) of ``snippet``, cached under ``key``."""
        hit = self.entries.get(key)
        if hit is None:
            tokens, empty = mmr_tokens_fast(snippet)
            vocab = self.vocab
            ids = np.fromiter(
                (vocab.setdefault(t, len(vocab)) for t in tokens), np.int64, len(tokens)
            )
            ids.sort()
            hit = self.entries[key] = (ids, empty)
        return hit


def mmr_jaccard_matrix(ids: Sequence[np.ndarray], empty_keys: Sequence[str]) -> np.ndarray:
    """[n, n] float64: sim(a, b) = inter / (|a| + |b| − inter) over token-id sets, with
    inter the integer count of shared ids (from the sparse binary incidence matrix
    X·Xᵀ) and the division done once in float64, as the reference's int / int; two
    token-less texts: 1.0 when their keys are equal, else 0.0; one token-less: 0.0.
    The diagonal is unused by the greedy loop."""
    from scipy import sparse  # lazily: importing the ranking module stays light

    n = len(ids)
    sizes = np.fromiter((len(a) for a in ids), np.int64, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    cols = np.concatenate(ids) if n else np.zeros(0, dtype=np.int64)
    width = int(cols.max()) + 1 if cols.size else 1
    x = sparse.csr_matrix((np.ones(cols.size, dtype=np.int32), cols, indptr), shape=(n, width))
    inter = (x @ x.T).toarray().astype(np.int64)
    union = sizes[:, None] + sizes[None, :] - inter
    has = sizes > 0
    both = has[:, None] & has[None, :]
    sim = np.zeros((n, n), dtype=np.float64)
    np.divide(inter, union, out=sim, where=both)
    empty = np.flatnonzero(~has)
    if empty.size > 1:
        groups = {}
        gid = np.array([groups.setdefault(empty_keys[i], len(groups)) for i in empty])
        sim[np.ix_(empty, empty)] = (gid[:, None] == gid[None, :]).astype(np.float64)
    return sim


def _exact_floats(scores: Sequence[float]) -> np.ndarray | None:
    """The scores as float64 when that changes no value and all are finite, else None."""
    arr = np.asarray(scores, dtype=np.float64)
    if not np.isfinite(arr).all():
        return None
    for v in scores:
        if not isinstance(v, float) and not (isinstance(v, int) and abs(v) < _EXACT_INT):
            return None
    return arr


def mmr_rerank_order(
    scores: Sequence[float],
    snippets: Sequence[str],
    lambda_: float = MMR_LAMBDA,
    *,
    cache: MmrTokenCache | None = None,
    keys: Sequence[Hashable] | None = None,
) -> list[int]:
    """The permutation ``mmr_rerank`` gives items ``{score, snippet}`` (indices into the
    inputs), computed in numpy.

    rel = (s − min)/(max − min) (all equal → 1); λ clamped to [0, 1]
    (``max(0, min(1, λ))``, so NaN → 1); λ = 1 → the stable sort by score, descending.
    Otherwise repeatedly pick the remaining item maximising
    λ·rel − (1−λ)·max_sim, max_sim = the largest :func:`mmr_jaccard_matrix` similarity
    to an already picked item; among equal values the higher score wins, then the
    earlier item. NaN or infinite scores (a NaN score: [] for λ < 1, last in input
    order for λ = 1, as ``mmr_rerank`` rules), NaN relevance or scores float64 does not
    hold exactly: the reference computes the order. ``cache``/``keys``: token ids kept across calls under ``keys[i]``
    (a chunk position) for snippet i.
    """
    n = len(scores)
    if len(snippets) != n or (keys is not None and len(keys) != n):
        raise ValueError(f"mmr_rerank_order: {n} scores for {len(snippets)} snippets")
    lam = max(0.0, min(1.0, lambda_))
    arr = _exact_floats(scores) if n > 1 and lam != 1 else None
    rel = None
    if arr is not None:
        lo, hi = float(arr.min()), float(arr.max())
        rng = hi - lo
        rel = np.ones(n) if rng == 0 else (arr - lo) / rng
        if not np.isfinite(rel).all():
            rel = None
    if rel is None or arr is None:
        items = [
            {"i": i, "score": s, "snippet": t}
            for i, (s, t) in enumerate(zip(scores, snippets, strict=True))
        ]
        return [int(it["i"]) for it in mmr_rerank(items, lambda_)]
    if cache is None or keys is None:
        cache, keys = MmrTokenCache(), range(n)
    feats = [cache.get(k, t) for k, t in zip(keys, snippets, strict=True)]
    sim = mmr_jaccard_matrix([f[0] for f in feats], [f[1] for f in feats])
    # Work in the order (score desc, input index asc): the first maximum found by argmax
    # is then the reference's winner among equal values (higher score, then earlier).
    perm = np.argsort(-arr, kind="stable")
    sim = sim[np.ix_(perm, perm)]
    rel_term = lam * rel[perm]
    keep = 1 - lam
    max_sim = np.zeros(n)
    val = np.empty(n)
    order: list[int] = []
    for _ in range(n):
        np.multiply(max_sim, keep, out=val)
        np.subtract(rel_term, val, out=val)
        best = int(val.argmax())
        order.append(int(perm[best]))
        rel_term[best] = -math.inf  # picked: never the maximum again
        np.maximum(max_sim, sim[best], out=max_sim)
    return order
