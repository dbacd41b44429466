"""Temporal decay (spec section 7, QMD's proposed boost) and MMR re-ranking (section 6).

Decay multiplies a fused score by a factor in [0, 1] that depends on the age of
the chunk's file; MMR re-orders a merged list to trade relevance for diversity,
with Jaccard similarity over snippet tokens (OpenClaw) or cosine similarity of
embeddings (the alternative users asked for).
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from memlab.config.vocab import DECAY_KINDS

__all__ = [
    "SNIPPET_MAX_CHARS",
    "apply_decay",
    "decay_multiplier",
    "decay_multiplier_array",
    "file_timestamp",
    "jaccard",
    "mmr_rerank",
    "mmr_rerank_embeddings",
    "mmr_score",
    "mmr_tokenize",
    "qmd_boost_multiplier",
    "snippet",
]

SECONDS_PER_DAY = 86400.0
SNIPPET_MAX_CHARS = 700
DEFAULT_HALF_LIFE_DAYS = 30.0
DEFAULT_MMR_LAMBDA = 0.7
TIMESTAMP_RULES = ("exact", "latest")


# ------------------------------------------------------------------------ snippet


def snippet(text: str, max_units: int = SNIPPET_MAX_CHARS) -> str:
    """The first ``max_units`` UTF-16 code units of ``text``, never splitting a pair.

    JavaScript counts a code point above U+FFFF as 2 units; when the cut would
    fall inside such a pair the whole character is dropped (OpenClaw's
    ``truncateUtf16Safe``). ``snippet("ab😀", 3)`` → ``"ab"``.
    """
    if max_units < 0:
        raise ValueError(f"max_units must be >= 0, got {max_units}")
    if 2 * len(text) <= max_units:  # fast path: cannot exceed even if all astral
        return text
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * max_units:
        return text
    cut = units[: 2 * max_units]
    last = int.from_bytes(cut[-2:], "little") if cut else 0
    if 0xD800 <= last <= 0xDBFF:  # a high surrogate whose partner was cut off
        cut = cut[:-2]
    return cut.decode("utf-16-le", "surrogatepass")


# -------------------------------------------------------------------------- decay


def _effective_half_life(half_life_days: float) -> float | None:
    # OpenClaw floors the configured half-life to an integer of at least 1 day;
    # a non-positive or non-finite one disables decay (lambda = 0).
    h = float(half_life_days)
    if not math.isfinite(h) or h <= 0:
        return None
    return float(max(1, math.floor(h)))


def decay_multiplier(age_days: float, half_life_days: float = DEFAULT_HALF_LIFE_DAYS) -> float:
    """OpenClaw's decay factor exp(−ln2/H · max(0, age)), H = max(1, floor(half-life)).

    Half-life ≤ 0 or non-finite → 1.0 (no decay); a non-finite age → 1.0 (as
    OpenClaw); a negative age (future date) → 1.0, never a boost. With H = 30:
    10 days → 0.79370, 30 → 0.5, 60 → 0.25, 365 → 2.175e-4. Range [0, 1]
    (0 only by underflow, beyond ~1000 half-lives).
    """
    h = _effective_half_life(half_life_days)
    age = float(age_days)
    if h is None or not math.isfinite(age):
        return 1.0
    # numpy's exp, not math.exp: the two differ in the last bit for some arguments, and the
    # scalar and array forms (the pipeline's) must agree exactly.
    return float(np.exp(-math.log(2) / h * max(0.0, age)))


def decay_multiplier_array(
    age_days: Any, half_life_days: float = DEFAULT_HALF_LIFE_DAYS
) -> np.ndarray:
    """Vectorised :func:`decay_multiplier` (same rules; NaN/±inf ages → 1.0)."""
    age = np.asarray(age_days, dtype=np.float64)
    h = _effective_half_life(half_life_days)
    if h is None:
        return np.ones(age.shape)
    finite = np.isfinite(age)
    mult = np.exp(-math.log(2) / h * np.maximum(0.0, np.where(finite, age, 0.0)))
    return np.where(finite, mult, 1.0)


def qmd_boost_multiplier(
    age_days: Any, half_life_days: float = DEFAULT_HALF_LIFE_DAYS, weight: float = 0.15
) -> Any:
    """QMD's proposed temporal boost factor 1 − w + w·2^(−max(0, age)/H).

    Range [1 − w, 1]: a fresh file keeps its score, an old one loses at most w.
    H is used as given (no flooring); it must be finite and > 0, w in [0, 1].
    Non-finite ages → 1.0. Scalar in, float out; array in, array out.
    """
    h = float(half_life_days)
    if not math.isfinite(h) or h <= 0:
        raise ValueError(f"half_life_days must be finite and > 0, got {half_life_days}")
    w = float(weight)
    if not 0.0 <= w <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight}")
    age = np.asarray(age_days, dtype=np.float64)
    finite = np.isfinite(age)
    boost = 1.0 - w + w * np.exp2(-np.maximum(0.0, np.where(finite, age, 0.0)) / h)
    out = np.where(finite, boost, 1.0)
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------- timestamps

# JavaScript's \d and $ are ASCII digits and end of input: hence [0-9] and \Z.
_EXACT_DATED_RE = re.compile(r"(?:^|/)memory/([0-9]{4})-([0-9]{2})-([0-9]{2})\.md\Z")
_LATEST_DATED_RE = re.compile(
    r"(?:^|/)memory/(?:[^/]+/)*([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[^/0-9][^/]*)?\.md\Z"
)


def _utc_midnight(year: str, month: str, day: str) -> float | None:
    y, m, d = int(year), int(month), int(day)
    # Date.UTC maps years 0-99 to 1900-1999, so OpenClaw's round-trip check
    # rejects them; do the same.
    if y < 100 or not 1 <= m <= 12 or not 1 <= d <= calendar.monthrange(y, m)[1]:
        return None
    return float(calendar.timegm((y, m, d, 0, 0, 0)))


def file_timestamp(
    path: str, mtime: float | None, rule: str = "exact", *, source: str = "memory"
) -> tuple[float | None, bool]:
    """The time a file's chunks decay from: ``(unix seconds or None, evergreen)``.

    The path is workspace-relative (``\\`` read as ``/``, a leading ``./`` ignored).
    In order:

    1. Dated: ``rule="exact"`` (OpenClaw at the pin): the path ends in
       ``memory/YYYY-MM-DD.md`` (at the start or after a ``/``); ``rule="latest"``
       (OpenClaw later): a file at any depth under a ``memory/`` folder whose name
       is ``YYYY-MM-DD`` optionally followed by a suffix not starting with a digit
       (``memory/log/2026-01-02-1430.md``). A valid calendar date gives its UTC
       midnight, ``(t, False)``.
    2. Evergreen ``(None, True)`` for ``source == "memory"``: ``MEMORY.md``,
       ``memory.md``, and files under ``memory/`` that do not *look* dated. So in
       exact mode ``memory/sub/2026-01-02.md`` and ``memory/2026-01-02-1430.md`` are
       evergreen (the spec's exact-mode defects).
    3. Otherwise the file's ``mtime``: ``(mtime, False)``, or ``(None, False)``
       (no decay) when it is unknown or non-finite. A path that looks dated but
       holds an invalid date (``memory/2026-02-30.md``, or a year below 100) lands
       here: OpenClaw's evergreen test only matches the pattern, so such a file
       decays by mtime rather than being evergreen.
    """
    if rule not in TIMESTAMP_RULES:
        raise ValueError(f"unknown timestamp rule {rule!r}; expected one of {TIMESTAMP_RULES}")
    normalized = path.replace("\\", "/")
    if normalized.startswith("./"):
        normalized = normalized[2:]
    dated = (_EXACT_DATED_RE if rule == "exact" else _LATEST_DATED_RE).search(normalized)
    if dated:
        t = _utc_midnight(*dated.groups())
        if t is not None:
            return t, False
    if source == "memory" and (
        normalized in ("MEMORY.md", "memory.md") or (normalized.startswith("memory/") and not dated)
    ):
        return None, True
    if mtime is None or not math.isfinite(mtime):
        return None, False
    return float(mtime), False


def apply_decay(
    scores: Any,
    timestamps: Any,
    evergreen: Any,
    now: Any,
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    *,
    kind: str = "exponential",
    weight: float = 0.15,
) -> tuple[np.ndarray, np.ndarray]:
    """Multiply scores by their decay factor; returns ``(new_scores, multipliers)``.

    ageDays = max(0, now − t)/86400 with ``t`` and ``now`` in unix seconds (``now``
    a scalar or broadcastable, e.g. ``[Q, 1]`` per-query "as of" times). The factor
    is :func:`decay_multiplier_array` (``kind="exponential"``, OpenClaw) or
    :func:`qmd_boost_multiplier` (``kind="qmd"``, with ``weight``); it is 1 where
    ``evergreen`` is true or ``t`` is NaN (no timestamp). NaN scores stay NaN.
    Multipliers lie in [0, 1], so a non-negative score never rises.
    """
    if kind not in DECAY_KINDS:
        raise ValueError(f"unknown decay kind {kind!r}; expected one of {DECAY_KINDS}")
    s = np.asarray(scores, dtype=np.float64)
    t = np.broadcast_to(np.asarray(timestamps, dtype=np.float64), s.shape)
    ev = np.broadcast_to(np.asarray(evergreen, dtype=bool), s.shape)
    age = np.maximum(0.0, np.asarray(now, dtype=np.float64) - t) / SECONDS_PER_DAY
    age = np.broadcast_to(age, s.shape)
    if kind == "exponential":
        mult = decay_multiplier_array(age, half_life_days)
    else:
        mult = np.asarray(qmd_boost_multiplier(age, half_life_days, weight))
    mult = np.where(ev | np.isnan(t), 1.0, mult)
    return s * mult, mult


# ---------------------------------------------------------------------------- MMR

_MMR_ASCII_RE = re.compile(r"[a-z0-9_]+")
# CJK radicals, kana, bopomofo, hangul jamo/syllables, Han (BMP and supplementary),
# half-width katakana; CJK punctuation (U+3000-303F) is deliberately excluded.
_MMR_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_MMR_CJK_RUN_RE = re.compile(f"[{_MMR_CJK_CLASS}]+")


def mmr_tokenize(text: str) -> set[str]:
    """Token set of the 700-unit snippet of ``text`` for MMR's Jaccard similarity.

    Tokens: lower-cased ASCII ``[a-z0-9_]+`` runs; each CJK, kana or hangul
    character; and each pair of such characters adjacent in the text.
    ``"Deploy v2 你好吗"`` → {deploy, v2, 你, 好, 吗, 你好, 好吗}; ``"你 好"`` has no
    pair. Other scripts (Cyrillic, accented Latin letters) give no token.
    """
    text = snippet(text, SNIPPET_MAX_CHARS)
    tokens = set(_MMR_ASCII_RE.findall(text.lower()))
    for run in _MMR_CJK_RUN_RE.findall(text):
        tokens.update(run)
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; both empty → 1, exactly one empty → 0."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def mmr_score(relevance: float, max_similarity: float, lambda_: float) -> float:
    """λ·relevance − (1 − λ)·max_similarity (no clamping here).

    λ = 0.7, relevance 1, max similarity 0.5 → 0.55.
    """
    return lambda_ * relevance - (1 - lambda_) * max_similarity


def _check_mmr_inputs(scores: Sequence[float], n_items: int, lambda_: float) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {s.shape}")
    if len(s) != n_items:
        raise ValueError(f"{len(s)} scores but {n_items} items")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    if math.isnan(lambda_):
        raise ValueError("lambda_ must be a number in [0, 1], got nan")
    return s


def _mmr_greedy(s: np.ndarray, sim: np.ndarray, lam: float) -> list[int]:
    n = len(s)
    lo, hi = s.min(), s.max()
    rel = np.ones(n) if hi == lo else (s - lo) / (hi - lo)
    remaining = np.ones(n, dtype=bool)
    max_sim = np.full(n, -np.inf)
    order: list[int] = []
    for step in range(n):
        penalty = np.zeros(n) if step == 0 else max_sim
        mmr = lam * rel - (1 - lam) * penalty
        mmr = np.where(remaining, mmr, -np.inf)
        tied = remaining & (mmr == mmr.max())
        top = np.where(tied, s, -np.inf)
        pick = int(np.flatnonzero(top == top.max())[0])  # then list order
        order.append(pick)
        remaining[pick] = False
        max_sim = np.maximum(max_sim, sim[pick])
    return order


def _mmr_dispatch(s: np.ndarray, lambda_: float, sim_fn: Any) -> list[int]:
    n = len(s)
    if n <= 1:
        return list(range(n))
    lam = min(1.0, max(0.0, float(lambda_)))
    if lam == 1.0:
        return sorted(range(n), key=lambda i: -s[i])  # stable: ties keep list order
    return _mmr_greedy(s, sim_fn(), lam)


def mmr_rerank(
    scores: Sequence[float], texts: Sequence[str], lambda_: float = DEFAULT_MMR_LAMBDA
) -> list[int]:
    """OpenClaw's MMR order of a merged list: a permutation of ``range(len(scores))``.

    λ is clamped to [0, 1]; ≤ 1 item → unchanged; λ = 1 → plain relevance order
    (stable sort by score, descending). Otherwise relevance = min-max normalised
    score over the list (all equal → 1) and items are picked greedily by
    λ·rel − (1 − λ)·(max Jaccard of :func:`mmr_tokenize` sets to the already
    picked; 0 for the first pick); ties → higher original score, then list order.
    Scores must be finite; λ NaN → ValueError.
    """
    s = _check_mmr_inputs(scores, len(texts), lambda_)

    def sim() -> np.ndarray:
        toks = [mmr_tokenize(t) for t in texts]
        n = len(toks)
        m = np.ones((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                m[i, j] = m[j, i] = jaccard(toks[i], toks[j])
        return m

    return _mmr_dispatch(s, lambda_, sim)


def mmr_rerank_embeddings(
    scores: Sequence[float], vectors: Any, lambda_: float = DEFAULT_MMR_LAMBDA
) -> list[int]:
    """MMR with cosine similarity of embeddings instead of Jaccard (same greedy, ties).

    ``vectors`` is ``[n, d]``; rows are L2-normalised here, and a zero row has
    similarity 0 to everything. Cosine may be negative: the penalty is the true
    maximum over the picked items (0 before the first pick), so an item unlike
    everything picked is favoured. Non-finite vector components → ValueError.
    """
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"vectors must be [n, d], got shape {v.shape}")
    s = _check_mmr_inputs(scores, v.shape[0], lambda_)
    if not np.all(np.isfinite(v)):
        raise ValueError("vectors must be finite")

    def sim() -> np.ndarray:
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        unit = np.where(norms > 0, v / np.where(norms > 0, norms, 1.0), 0.0)
        return np.clip(unit @ unit.T, -1.0, 1.0)

    return _mmr_dispatch(s, lambda_, sim)
