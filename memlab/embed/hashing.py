"""A deterministic lexical embedder: hashed n-grams, then a fixed sparse random projection.

This is a *lexical* baseline for tests and large parameter sweeps, NOT a semantic model:
"car" and "automobile" share nothing here. Texts that share words or character n-grams get
similar vectors, which is enough to exercise the vector leg, fusion and caching quickly and
identically on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from .base import check_texts, identity_digest, normalize_vectors

__all__ = ["HashingEmbedder", "char_stream", "char_wb_ngrams"]

# Size of the hashed feature space before projection: large enough that distinct n-grams of a
# memory corpus rarely collide, small enough that the projection matrix stays a few MB.
HASH_FEATURES = 2**18
# Output coordinates each hashed feature is spread over (a sparse Johnson-Lindenstrauss
# sketch); more than one keeps a text with few features from landing on a handful of
# coordinates.
NONZEROS_PER_FEATURE = 8
# Bump when the algorithm changes so that cached vectors of the old algorithm are not reused.
_ALGORITHM_VERSION = 1
# Odd 64-bit multiplier of the polynomial n-gram fingerprint (wraps modulo 2**64).
_POLY = np.uint64(0x100000001B3)


def _check_range(name: str, value: Any) -> tuple[int, int]:
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (min_n, max_n), got {value!r}") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)):
        raise ValueError(f"{name} must hold integers, got {value!r}")
    if not 1 <= lo <= hi:
        raise ValueError(f"{name} must satisfy 1 <= min_n <= max_n, got {value!r}")
    return lo, hi


@lru_cache(maxsize=8)
def _projection(n_features: int, dimensions: int, nnz: int, seed: int) -> sp.csr_matrix:
    import scipy.sparse as sp  # imported on use: `import memlab.embed` stays light

    """Sparse projection (n_features × dimensions): ``nnz`` entries ±1/sqrt(nnz) per row.

    Columns and signs come from a numpy PCG64 generator seeded with ``seed``, so the matrix
    (and every vector) is identical across processes. Columns are drawn with replacement;
    a repeated column simply sums its two entries, as in a count sketch with ``nnz`` hashes.
    """
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, dimensions, size=(n_features, nnz), dtype=np.int64)
    signs = rng.integers(0, 2, size=(n_features, nnz), dtype=np.int8) * 2 - 1
    data = signs.astype(np.float32).ravel() / np.float32(np.sqrt(nnz))
    indptr = np.arange(0, n_features * nnz + 1, nnz, dtype=np.int64)
    mat = sp.csr_matrix((data, cols.ravel(), indptr), shape=(n_features, dimensions))
    mat.sum_duplicates()
    return mat


def char_stream(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate texts as lower-cased, space-padded words → (code points, row start offsets).

    Text ``"Hello  big"`` becomes ``" hello  big "``: every word padded by one space on each
    side, as scikit-learn's ``char_wb`` analyzer does; a blank text contributes nothing.
    """
    parts = []
    starts = np.zeros(len(texts), dtype=np.int64)
    pos = 0
    for i, text in enumerate(texts):
        words = text.lower().split()
        part = " " + "  ".join(words) + " " if words else ""
        starts[i] = pos
        pos += len(part)
        parts.append(part)
    codes = np.frombuffer("".join(parts).encode("utf-32-le"), dtype=np.uint32)
    return codes, starts


def _fingerprints(c64: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """Polynomial hash Σ c_j·P^(n-j) + n of the windows of length ``n`` (modulo 2**64)."""
    fp = np.zeros(starts.size, dtype=np.uint64)
    for j in range(n):
        fp = fp * _POLY + c64[starts + j]
    return fp * _POLY + np.uint64(n)


def char_wb_ngrams(codes: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """All ``char_wb`` n-grams (lo ≤ n ≤ hi) of a padded stream from :func:`char_stream`.

    Returns (starts, lengths, fingerprints), one entry per n-gram occurrence. The multiset
    equals scikit-learn's ``char_wb`` analyzer output for every text:

    - a window of length n is kept when none of its interior positions (1 … n-2) is a space
      and, for n = 2, it is not two spaces; so it lies inside one padded word ``" word "``
      (windows spanning two words or texts always hold the double space between them);
    - a padded word shorter than ``lo`` yields itself once (scikit-learn's rule for words
      shorter than the n-gram size).
    """
    empty = np.zeros(0, dtype=np.int64)
    if codes.size == 0:
        return empty, empty, np.zeros(0, dtype=np.uint64)
    is_space = codes == 32
    csum = np.concatenate(([0], np.cumsum(is_space, dtype=np.int64)))
    c64 = codes.astype(np.uint64)
    all_starts, all_lengths, all_fp = [], [], []
    for n in range(lo, hi + 1):
        starts = np.arange(max(codes.size - n + 1, 0), dtype=np.int64)
        if n > 2:
            starts = starts[csum[starts + n - 1] == csum[starts + 1]]
        elif n == 2:
            starts = starts[~(is_space[starts] & is_space[starts + 1])]
        all_starts.append(starts)
        all_lengths.append(np.full(starts.size, n, dtype=np.int64))
        all_fp.append(_fingerprints(c64, starts, n))
    if lo > 3:
        # Padded words run from the space before a word's first letter to the one after it.
        letter = ~is_space
        first = np.nonzero(letter & np.concatenate(([True], is_space[:-1])))[0]
        last = np.nonzero(letter & np.concatenate((is_space[1:], [True])))[0]
        padded_len = last - first + 3
        for n in np.unique(padded_len[padded_len < lo]):
            starts = first[padded_len == n] - 1
            all_starts.append(starts)
            all_lengths.append(np.full(starts.size, n, dtype=np.int64))
            all_fp.append(_fingerprints(c64, starts, int(n)))
    return np.concatenate(all_starts), np.concatenate(all_lengths), np.concatenate(all_fp)


def _signed_buckets(fp: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """murmurhash3_32 of the folded fingerprints → (bucket = |h| mod 2**18, sign of h)."""
    from sklearn.utils import murmurhash3_32

    folded = ((fp ^ (fp >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    h = np.asarray(murmurhash3_32(folded.view(np.int32), seed=seed), dtype=np.int64)
    return np.abs(h) % HASH_FEATURES, np.where(h >= 0, 1.0, -1.0).astype(np.float32)


class HashingEmbedder:
    """Deterministic lexical embedder (no model, no network, instant).

    Pipeline per text:

    1. lower-cased word n-grams (``ngram_range``, scikit-learn's default token pattern) hashed
       by scikit-learn's ``HashingVectorizer`` (murmurhash3, ``alternate_sign=True``, raw
       counts) into 2**18 buckets;
    2. ``char_wb`` character n-grams (``char_ngrams``; ``None`` disables them): the n-grams of
       each space-padded lower-cased word, the same multiset as scikit-learn's ``char_wb``
       analyzer (:func:`char_wb_ngrams`), hashed into the same 2**18 buckets with signed murmurhash3 (computed
       vectorised in numpy: the pure-Python analyzer was ~5× too slow for 10k texts/s);
    3. each block L2-normalised, so words and characters weigh equally, and summed;
    4. multiplied by a fixed sparse random projection (8 entries ±1/sqrt(8) per bucket,
       drawn from ``seed``) down to ``dimensions``, then :func:`normalize_vectors`.

    Same text and parameters → bit-identical vector in any process. A blank text gives the
    all-zero vector. NOT semantic: a lexical baseline for tests and fast sweeps.
    """

    provider = "hashing"

    def __init__(
        self,
        dimensions: int = 384,
        *,
        ngram_range: tuple[int, int] = (1, 2),
        char_ngrams: tuple[int, int] | None = (3, 5),
        seed: int = 0,
    ) -> None:
        if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1:
            raise ValueError(f"dimensions must be a positive integer, got {dimensions!r}")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
            raise ValueError(f"seed must be an integer in [0, 2**31), got {seed!r}")
        self._dimensions = dimensions
        self.ngram_range = _check_range("ngram_range", ngram_range)
        self.char_ngrams = None if char_ngrams is None else _check_range("char_ngrams", char_ngrams)
        self.seed = seed
        self.model = f"hashing-{dimensions}"
        # Imported here so that importing memlab.embed stays cheap.
        from sklearn.feature_extraction.text import HashingVectorizer

        self._word = HashingVectorizer(
            analyzer="word",
            ngram_range=self.ngram_range,
            n_features=HASH_FEATURES,
            alternate_sign=True,
            norm=None,
            lowercase=True,
            dtype=np.float32,
        )

    @property
    def dimensions(self) -> int:
        """Length of every vector this embedder returns."""
        return self._dimensions

    @property
    def identity_key(self) -> str:
        """sha256 hex of provider, model and every parameter that changes the vectors."""
        return identity_digest(
            {
                "provider": self.provider,
                "model": self.model,
                "dimensions": self._dimensions,
                "ngram_range": list(self.ngram_range),
                "char_ngrams": None if self.char_ngrams is None else list(self.char_ngrams),
                "seed": self.seed,
                "hash_features": HASH_FEATURES,
                "nnz": NONZEROS_PER_FEATURE,
                "version": _ALGORITHM_VERSION,
            }
        )

    def _char_features(self, texts: list[str]) -> sp.csr_matrix:
        import scipy.sparse as sp

        assert self.char_ngrams is not None
        codes, offsets = char_stream(texts)
        starts, _, fp = char_wb_ngrams(codes, *self.char_ngrams)
        bucket, sign = _signed_buckets(fp, seed=0)
        rows = np.searchsorted(offsets, starts, side="right") - 1
        coo = sp.coo_matrix(
            (sign, (rows, bucket)),
            shape=(len(texts), HASH_FEATURES),
            dtype=np.float32,
        )
        return coo.tocsr()

    def hashed_features(self, texts: Sequence[str]) -> sp.csr_matrix:
        """The sparse (len(texts) × 2**18) matrix before projection: steps 1–3 above."""
        import scipy.sparse as sp
        from sklearn.preprocessing import normalize

        items = check_texts(texts, self.provider)
        x = normalize(self._word.transform(items), norm="l2", copy=False)
        if self.char_ngrams is not None:
            x = x + normalize(self._char_features(items), norm="l2", copy=False)
        return sp.csr_matrix(x, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 array (len(texts), dimensions), rows unit-norm or zero."""
        items = check_texts(texts, self.provider)
        if not items:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        proj = _projection(HASH_FEATURES, self._dimensions, NONZEROS_PER_FEATURE, self.seed)
        dense = (self.hashed_features(items) @ proj).toarray()
        return normalize_vectors(dense)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed the trimmed query → float32 (dimensions,); all-zero for a blank query."""
        if not isinstance(text, str):
            raise TypeError(f"hashing: query must be str, got {type(text).__name__}")
        return self.embed_documents([text.strip()])[0]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """Always 0: the hashing embedder has no input length limit."""
        check_texts(texts, self.provider)
        return 0

    def __repr__(self) -> str:
        return (
            f"HashingEmbedder(dimensions={self._dimensions}, ngram_range={self.ngram_range}, "
            f"char_ngrams={self.char_ngrams}, seed={self.seed})"
        )
