"""Vector-search engines for the vector leg: exact scans and approximate indexes.

Every engine answers one question — the k chunks whose unit vectors have
the largest inner product (cosine) with each query — behind one interface:

    engine = make_engine("numpy", vectors)          # vectors: float32 [N, d], unit rows
    positions, scores = engine.search(queries, k)   # [Q, k'] int64 / float64, k' = min(k, N)

Rows come best first; a slot an approximate engine could not fill holds
position −1 and score NaN. Exact engines break score ties by the lower
position, so their results are deterministic.

Engines (``ENGINES``):

- ``numpy``: exact, a float32 matrix product per block of queries, then a
  linear-time selection (``np.partition``) — the memory-bandwidth-bound scan.
- ``faiss``: exact, ``faiss.IndexFlatIP``.
- ``fp16`` / ``sq8``: a faiss scalar-quantised scan (2 or 1 byte per
  dimension: half or a quarter of the bytes to read), over-fetching
  ``oversample × k`` and re-scoring those exactly from the float32 matrix
  (so the scores are exact; only a candidate the quantised scan missed can be
  lost).
- ``ivf``: approximate, ``faiss.IndexIVFFlat`` (inverted lists over k-means
  cells; ``nprobe`` cells scanned per query); optional exact re-scoring.
- ``hnsw``: approximate, ``faiss.IndexHNSWFlat`` (graph; ``ef_search``).

``MemoryIndex`` can hold one engine built lazily from ``ChunkTable.vectors``
and call ``engine.search`` in its vector leg.

Size: one module because every engine answers through ``VectorEngine`` with one
tie order and −1 / NaN padding, from shared helpers (``_topk_row``, ``_rescore``,
``_as_queries``, ``_empty``); ``make_engine`` picks one by name, and faiss is
imported only when a faiss engine is built.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from memlab.config.vocab import VECTOR_BACKENDS

__all__ = [
    "ENGINES",
    "ExactNumpy",
    "FaissExact",
    "FaissHNSW",
    "FaissIVF",
    "QuantizedScan",
    "VectorEngine",
    "exact_topk",
    "make_engine",
    "recall_at_k",
]

# The engine names are owned by memlab.config.vocab (VECTOR_BACKENDS, the vector_backend choices).
ENGINES = VECTOR_BACKENDS
# Query-block size of the numpy scan: [block, N] float32 scores held at once.
SCORE_BLOCK_BYTES = 256 * 2**20
# Below this many rows one thread scans faster than two (thread hand-off costs more).
PARALLEL_MIN_ROWS = 50_000


class VectorEngine(Protocol):
    """What the vector leg needs from a search engine."""

    name: str
    exact: bool
    build_seconds: float

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k positions [Q, k'] (int64, −1 = none) and scores [Q, k'] (float64, NaN = none)."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes this engine holds beyond the caller's float32 matrix."""
        ...


def _as_queries(queries: np.ndarray, d: int) -> np.ndarray:
    q = np.ascontiguousarray(np.atleast_2d(np.asarray(queries, dtype=np.float32)))
    if q.shape[1] != d:
        raise ValueError(f"queries have {q.shape[1]} dimensions, the vectors {d}")
    return q


def _as_matrix(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors)
    if v.ndim != 2:
        raise ValueError(f"vectors must be [N, d], got shape {v.shape}")
    return np.ascontiguousarray(v, dtype=np.float32)


def _empty(nq: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full((nq, 0), -1, dtype=np.int64), np.full((nq, 0), np.nan)


def _topk_row(scores: np.ndarray, k: int, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Exact top k of one score row: descending score, ties by lower position (+ ``offset``)."""
    n = scores.shape[0]
    if k >= n:
        cand = np.arange(n)
    else:
        kth = np.partition(scores, n - k)[n - k]
        cand = np.flatnonzero(scores >= kth)
    # lexsort: last key is primary → by -score, then by position.
    order = np.lexsort((cand, -scores[cand]))[:k]
    pos = cand[order]
    return pos.astype(np.int64) + offset, scores[pos].astype(np.float64)


def _scan_block(v: np.ndarray, q: np.ndarray, k: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    # einsum streams the rows once at memory speed (measured faster than BLAS gemv
    # for one query on this hardware) and releases the GIL, so blocks run in parallel.
    return _topk_row(np.einsum("ij,j->i", v, q), k, offset)


def _scan_one(
    v: np.ndarray, q: np.ndarray, k: int, pool: ThreadPoolExecutor | None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top k of one query; with a pool, row blocks are scanned on its threads and merged."""
    n = v.shape[0]
    if pool is None or n < PARALLEL_MIN_ROWS:
        return _scan_block(v, q, k, 0)
    bounds = np.linspace(0, n, pool._max_workers + 1, dtype=np.int64)
    parts = list(
        pool.map(
            lambda lo_hi: _scan_block(v[lo_hi[0] : lo_hi[1]], q, k, int(lo_hi[0])),
            itertools.pairwise(bounds),
        )
    )
    pos = np.concatenate([p for p, _ in parts])
    sc = np.concatenate([s for _, s in parts])
    order = np.lexsort((pos, -sc))[:k]
    return pos[order], sc[order]


def exact_topk(
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    *,
    pool: ThreadPoolExecutor | None = None,
    block_bytes: int = SCORE_BLOCK_BYTES,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact inner-product top-k of each query over ``vectors`` (float32 [N, d]).

    ``score[q, i] = Σ_j queries[q, j] · vectors[i, j]`` in float32 (summation
    order may differ between one query and a batch, so scores can differ in
    the last bit), reported as float64; per query the k largest, best first,
    ties by lower position. k' = min(k, N) columns; N = 0 or k ≤ 0 gives
    [Q, 0]. One query is a single streaming pass (split over ``pool``'s
    threads when given); a batch is a matrix product in blocks of at most
    ``block_bytes`` of scores, so it never holds a [Q, N] matrix at once.
    """
    v = _as_matrix(vectors)
    q = _as_queries(queries, v.shape[1])
    n, nq = v.shape[0], q.shape[0]
    kk = min(int(k), n)
    if kk <= 0:
        return _empty(nq)
    pos = np.empty((nq, kk), dtype=np.int64)
    sc = np.empty((nq, kk), dtype=np.float64)
    if nq == 1:
        pos[0], sc[0] = _scan_one(v, q[0], kk, pool)
        return pos, sc
    block = max(1, block_bytes // max(1, 4 * n))
    for lo in range(0, nq, block):
        s = q[lo : lo + block] @ v.T
        for i in range(s.shape[0]):
            pos[lo + i], sc[lo + i] = _topk_row(s[i], kk)
    return pos, sc


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |found_q ∩ truth_q| / |truth_q| (−1 entries ignored).

    The usual ANN recall@k with ``found`` and ``truth`` both [Q, k] positions;
    a query whose truth is empty is skipped; no query → NaN.
    """
    vals = []
    for f, t in zip(np.asarray(found), np.asarray(truth), strict=True):
        ts = {int(x) for x in t if x >= 0}
        if ts:
            vals.append(len(ts & {int(x) for x in f if x >= 0}) / len(ts))
    return float(np.mean(vals)) if vals else math.nan


class ExactNumpy:
    """Exact scan with numpy (see ``exact_topk``); holds a reference to the matrix, no copy.

    ``threads`` > 1 splits a single query's scan over that many threads (the
    default uses up to 2: both cores read memory faster than one).
    """

    name = "numpy"
    exact = True

    def __init__(self, vectors: np.ndarray, *, threads: int | None = None) -> None:
        t = time.perf_counter()
        self.vectors = _as_matrix(vectors)
        self.threads = int(threads or min(2, os.cpu_count() or 1))
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self.build_seconds = time.perf_counter() - t

    @property
    def nbytes(self) -> int:
        return 0

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k (ties by lower position)."""
        return exact_topk(self.vectors, queries, k, pool=self._pool)


def _faiss() -> Any:
    import faiss

    return faiss


def _from_faiss(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = labels.astype(np.int64)
    sc = scores.astype(np.float64)
    sc[pos < 0] = np.nan
    return pos, sc


def _rescore(
    vectors: np.ndarray, queries: np.ndarray, cand: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Exact float32 scores of candidate positions [Q, m] (−1 ignored); best k, ties by position."""
    nq = queries.shape[0]
    pos = np.full((nq, k), -1, dtype=np.int64)
    sc = np.full((nq, k), np.nan)
    for i in range(nq):
        c = np.unique(cand[i][cand[i] >= 0])
        if c.size == 0:
            continue
        s = vectors[c] @ queries[i]
        order = np.lexsort((c, -s))[:k]
        pos[i, : order.size] = c[order]
        sc[i, : order.size] = s[order]
    return pos, sc


class FaissExact:
    """Exact scan with ``faiss.IndexFlatIP`` (a copy of the matrix inside faiss)."""

    name = "faiss"
    exact = True

    def __init__(self, vectors: np.ndarray) -> None:
        faiss = _faiss()
        v = _as_matrix(vectors)
        t = time.perf_counter()
        self.index = faiss.IndexFlatIP(v.shape[1])
        if len(v):
            self.index.add(v)
        self.build_seconds = time.perf_counter() - t
        self.n, self.d = v.shape

    @property
    def nbytes(self) -> int:
        return self.n * self.d * 4

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k (faiss orders ties as it finds them)."""
        q = _as_queries(queries, self.d)
        kk = min(int(k), self.n)
        if kk <= 0:
            return _empty(q.shape[0])
        return _from_faiss(*self.index.search(q, kk))


class QuantizedScan:
    """A scalar-quantised full scan (``"fp16"``: 2 bytes per dimension, ``"sq8"``: 1 byte),
    over-fetching ``oversample × k`` and re-scoring them exactly from the float32 matrix."""

    exact = False

    def __init__(
        self, vectors: np.ndarray, kind: str = "sq8", *, oversample: int = 4, rerank: bool = True
    ) -> None:
        faiss = _faiss()
        if kind not in ("fp16", "sq8"):
            raise ValueError(f"kind must be 'fp16' or 'sq8', got {kind!r}")
        if oversample < 1:
            raise ValueError(f"oversample must be >= 1, got {oversample}")
        v = _as_matrix(vectors)
        self.name = kind
        self.vectors = v
        self.oversample = int(oversample)
        self.rerank = bool(rerank)
        self.n, self.d = v.shape
        qt = faiss.ScalarQuantizer.QT_fp16 if kind == "fp16" else faiss.ScalarQuantizer.QT_8bit
        t = time.perf_counter()
        self.index = faiss.IndexScalarQuantizer(self.d, qt, faiss.METRIC_INNER_PRODUCT)
        if self.n:
            self.index.train(v[: min(self.n, 100_000)])
            self.index.add(v)
        self.build_seconds = time.perf_counter() - t

    @property
    def nbytes(self) -> int:
        return self.n * self.d * (2 if self.name == "fp16" else 1)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate top-k; scores exact when ``rerank``."""
        q = _as_queries(queries, self.d)
        kk = min(int(k), self.n)
        if kk <= 0:
            return _empty(q.shape[0])
        fetch = min(self.n, kk * (self.oversample if self.rerank else 1))
        scores, labels = self.index.search(q, fetch)
        if not self.rerank:
            return _from_faiss(scores[:, :kk], labels[:, :kk])
        return _rescore(self.vectors, q, labels.astype(np.int64), kk)


class FaissIVF:
    """Inverted-file index (``faiss.IndexIVFFlat``, inner product): ``nlist`` k-means cells
    (default ≈ 4·√N), ``nprobe`` cells scanned per query; with ``rerank`` the
    over-fetched ``oversample × k`` hits are re-scored from the float32 matrix."""

    name = "ivf"
    exact = False

    def __init__(
        self,
        vectors: np.ndarray,
        *,
        nlist: int | None = None,
        nprobe: int = 16,
        train_size: int | None = None,
        rerank: bool = False,
        oversample: int = 2,
        seed: int = 0,
    ) -> None:
        faiss = _faiss()
        v = _as_matrix(vectors)
        self.vectors = v
        self.n, self.d = v.shape
        self.nlist = int(nlist or max(1, min(self.n // 39 or 1, round(4 * math.sqrt(self.n)))))
        self.rerank = bool(rerank)
        self.oversample = int(oversample)
        t = time.perf_counter()
        quantizer = faiss.IndexFlatIP(self.d)
        self.index = faiss.IndexIVFFlat(quantizer, self.d, self.nlist, faiss.METRIC_INNER_PRODUCT)
        self.index.cp.seed = seed
        if self.n:
            # k-means needs ~39 points per cell; more buys little and costs time.
            m = min(self.n, train_size or 64 * self.nlist)
            sample = (
                v
                if m == self.n
                else v[np.random.default_rng(seed).choice(self.n, m, replace=False)]
            )
            self.index.train(sample)
            self.index.add(v)
        self._quantizer = quantizer  # faiss does not own it from Python: keep it alive
        self.nprobe = nprobe
        self.build_seconds = time.perf_counter() - t

    @property
    def nprobe(self) -> int:
        return int(self.index.nprobe)

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"nprobe must be >= 1, got {value}")
        self.index.nprobe = int(min(value, self.nlist))

    @property
    def nbytes(self) -> int:
        return self.n * (self.d * 4 + 8) + self.nlist * self.d * 4

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate top-k over the ``nprobe`` nearest cells."""
        q = _as_queries(queries, self.d)
        kk = min(int(k), self.n)
        if kk <= 0:
            return _empty(q.shape[0])
        if not self.rerank:
            return _from_faiss(*self.index.search(q, kk))
        _scores, labels = self.index.search(q, min(self.n, kk * self.oversample))
        return _rescore(self.vectors, q, labels.astype(np.int64), kk)


class FaissHNSW:
    """Graph index (``faiss.IndexHNSWFlat``, inner product): ``m`` links per node,
    ``ef_construction`` at build, ``ef_search`` candidates kept while searching."""

    name = "hnsw"
    exact = False

    def __init__(
        self,
        vectors: np.ndarray,
        *,
        m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
    ) -> None:
        faiss = _faiss()
        v = _as_matrix(vectors)
        self.n, self.d = v.shape
        self.m = int(m)
        t = time.perf_counter()
        self.index = faiss.IndexHNSWFlat(self.d, self.m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = int(ef_construction)
        if self.n:
            self.index.add(v)
        self.ef_search = ef_search
        self.build_seconds = time.perf_counter() - t

    @property
    def ef_search(self) -> int:
        return int(self.index.hnsw.efSearch)

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"ef_search must be >= 1, got {value}")
        self.index.hnsw.efSearch = int(value)

    @property
    def nbytes(self) -> int:
        # vectors + about 1.5 × m neighbour ids (int32) per node over the layers
        return self.n * (self.d * 4 + int(1.5 * self.m) * 4 * 2)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate top-k (ask ``ef_search >= k``)."""
        q = _as_queries(queries, self.d)
        kk = min(int(k), self.n)
        if kk <= 0:
            return _empty(q.shape[0])
        if self.ef_search < kk:
            self.ef_search = kk
        return _from_faiss(*self.index.search(q, kk))


def make_engine(kind: str, vectors: np.ndarray, **params: Any) -> VectorEngine:
    """Build the engine named ``kind`` (one of ``ENGINES``) over float32 unit ``vectors``.

    ``params`` go to the engine: ``fp16``/``sq8``: oversample, rerank; ``ivf``:
    nlist, nprobe, train_size, rerank, oversample, seed; ``hnsw``: m,
    ef_construction, ef_search. Unknown kinds raise ValueError.
    """
    if kind == "numpy":
        return ExactNumpy(vectors, **params)
    if kind == "faiss":
        return FaissExact(vectors, **params)
    if kind in ("fp16", "sq8"):
        return QuantizedScan(vectors, kind, **params)
    if kind == "ivf":
        return FaissIVF(vectors, **params)
    if kind == "hnsw":
        return FaissHNSW(vectors, **params)
    raise ValueError(f"unknown vector engine {kind!r}; choose from {', '.join(ENGINES)}")
