"""The exact ranking functions of OpenClaw release 2026.9.6 (spec §5–§9).

Each function reproduces one rule of the release bit for bit where Python can:
JavaScript semantics that matter are spelled out (``String.prototype.trim``,
UTF-16 lengths, ``\\p{L}\\p{N}`` token runs, the order of float operations).
``rank_hits`` (the test oracle, tests/release_oracle.py) composes them into the
release's whole hybrid ranking.

Size: the release's rules in spec order, each a small pure function: the
keyword leg (§5, ``build_fts_query`` … ``path_specificity``, ~230 lines),
multipliers and decay (§7–§9), MMR (§6). §5 could stand alone; kept together,
their callers find every rule in one place.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memlab.chunking.annotations import INVALID_PROJECT_KEY, JS_SPACE, js_trim
from memlab.config.vocab import OPENCLAW_CURRENT_TOKENIZERS
from memlab.openclaw_current.stopwords import ALL_STOP_WORDS, KO_TRAILING_PARTICLES, STOP_WORDS
from memlab.retrieval.textquery import utf16_len

HALF_LIFE_DAYS = 30.0
MMR_LAMBDA = 0.7
DAY_MS = 86_400_000
EXPANSION_TERM_LIMIT = 6
TOKENIZERS = OPENCLAW_CURRENT_TOKENIZERS

# JavaScript's \s (and what String.prototype.trim removes): WhiteSpace + LineTerminator,
# owned by the annotations module with js_trim and the invalid-project marker.
_JS_SPACE_RE = re.compile(f"[{JS_SPACE}]")


def _is_word(ch: str) -> bool:
    return ch == "_" or unicodedata.category(ch)[0] in "LN"


_ASCII_WORD_RE = re.compile("[A-Za-z0-9_]+")  # the word class restricted to ASCII


@functools.cache
def _word_run_re() -> re.Pattern[str]:
    # One regex class holding every code point _is_word accepts (built once, on the
    # first non-ASCII text: ~0.2 s), so a run search is one C-level scan.
    ranges: list[str] = []
    start = -1
    for cp in range(0x110001):
        ok = cp < 0x110000 and _is_word(chr(cp))
        if ok and start < 0:
            start = cp
        elif not ok and start >= 0:
            ranges.append(f"\\U{start:08x}-\\U{cp - 1:08x}")
            start = -1
    return re.compile("[" + "".join(ranges) + "]+")


def word_runs(text: str) -> list[str]:
    """Runs of ``[\\p{L}\\p{N}_]`` (the release's FTS token pattern), in order: the
    maximal runs of characters that are ``_`` or of a Unicode general category L* or
    N* (``unicodedata.category``); an ASCII text needs only ``[A-Za-z0-9_]+``."""
    if text.isascii():
        return _ASCII_WORD_RE.findall(text)
    return _word_run_re().findall(text)


def _check_tokenizer(tokenizer: str) -> None:
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")


# ------------------------------------------------------------------ §5.2 keyword query
def build_fts_query(q: str, tokenizer: str = "unicode61") -> str | None:
    """The body leg's FTS5 MATCH string: every ``[\\p{L}\\p{N}_]+`` run quoted, joined by AND.

    ``"OC-4412 PR"`` → ``'"OC" AND "4412" AND "PR"'``; case and duplicates are kept.
    Under ``trigram`` only tokens of 3 or more code points enter the MATCH (shorter
    ones are substring filters, :func:`fts_substring_terms`). None when no token
    is left (the leg then matches nothing, or only by substring under trigram).
    """
    _check_tokenizer(tokenizer)
    tokens = word_runs(q)
    if tokenizer == "trigram":
        tokens = [t for t in tokens if len(t) >= 3]
    if not tokens:
        return None
    return " AND ".join(f'"{t}"' for t in tokens)


def fts_substring_terms(q: str, tokenizer: str = "unicode61") -> list[str]:
    """Tokens the body leg checks as case-insensitive substrings: under ``trigram``
    those shorter than 3 code points (``"OC-4412 PR"`` → ``["OC", "PR"]``); none
    under ``unicode61``."""
    _check_tokenizer(tokenizer)
    return [t for t in word_runs(q) if len(t) < 3] if tokenizer == "trigram" else []


# ------------------------------------------------------------------ §5.3 lexical boost
def search_tokens(text: str) -> list[str]:
    """The boost's tokens: word runs of the NFC text, lower-cased (duplicates kept)."""
    return [t.lower() for t in word_runs(unicodedata.normalize("NFC", text))]


def _icase_equal(a: str, b: str) -> bool:
    return a == b or (
        not (a.isascii() and b.isascii()) and bool(re.fullmatch(re.escape(a), b, re.I))
    )


# A query, a chunk text and a path recur across the many keyword hits of a run (every
# search of a query boosts the same chunks): their parts of the boost are memoised.
@functools.lru_cache(maxsize=1 << 12)
def _boost_query_tokens(query: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(search_tokens(query)))


@functools.lru_cache(maxsize=1 << 13)
def _boost_text_tokens(text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    t_set = frozenset(search_tokens(text))
    return t_set, tuple(t for t in t_set if not t.isascii())


@functools.lru_cache(maxsize=1 << 14)
def _boost_path(q_tokens: tuple[str, ...], path: str) -> float:
    npath = unicodedata.normalize("NFC", path)
    path_boost = 0.0
    for q in q_tokens:  # a left-to-right sum, as the release's reduce
        path_boost = path_boost + (0.18 if re.search(re.escape(q), npath, re.I) else 0.0)
    return path_boost


def keyword_boost(query: str, path: str, text: str, fts_score: float) -> float:
    """The score of a body hit: min(1, fts_score + lexical boost), case-insensitive.

    boost = 0.45·m/Q + 0.2·m/max(D, 1) + 0.18·(query tokens found in the NFC path
    as substrings) + min(utf16_len(text)/160, 0.18), where Q = distinct query
    tokens, m = how many of them equal some token of the chunk, D = distinct chunk
    tokens. A query with no token returns ``fts_score`` unchanged. Examples (spec):
    "router vlan" on ``memory/router.md``, 26 unrelated chars, 0.1 → 0.4425.
    """
    q_tokens = _boost_query_tokens(query)
    if not q_tokens:
        return fts_score
    t_set, non_ascii = _boost_text_tokens(text)
    # _icase_equal(q, t) needs len(q) == len(t) (an escaped literal under re.I matches
    # char for char) and, for two ASCII tokens, q == t: only those pairs are tried.
    overlap = sum(
        1
        for q in q_tokens
        if q in t_set
        or any(
            len(t) == len(q) and _icase_equal(q, t) for t in (non_ascii if q.isascii() else t_set)
        )
    )
    unique_overlap = overlap / len(q_tokens)
    density = overlap / max(len(t_set), 1)
    path_boost = _boost_path(q_tokens, path)
    # utf16_len(text) >= len(text), and 29/160 > 0.18: long texts skip the count
    length_boost = 0.18 if len(text) >= 29 else min(utf16_len(text) / 160, 0.18)
    lexical = unique_overlap * 0.45 + density * 0.2 + path_boost + length_boost
    return min(1.0, fts_score + lexical)


# ------------------------------------------------------------------ §5.4 expansion
_JP_KANA_RE = re.compile("[\u3040-\u30ff]")
_JP_PART_RE = re.compile("[a-z0-9_]+|[\u30a0-\u30ffー]+|[\u4e00-\u9fff]+|[\u3040-\u309f]{2,}")
_HAN_RE = re.compile("[\u4e00-\u9fff]")
_HANGUL_RE = re.compile("[\uac00-\ud7af\u3131-\u3163]")


def _is_split_char(ch: str) -> bool:
    return bool(_JS_SPACE_RE.match(ch)) or unicodedata.category(ch)[0] == "P"


def _segments(text: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    for ch in text:
        if _is_split_char(ch):
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def _korean_stem(token: str) -> str | None:
    for particle in KO_TRAILING_PARTICLES:
        if utf16_len(token) > len(particle) and token.endswith(particle):
            return token[: -len(particle)]
    return None


def _useful_korean_stem(stem: str) -> bool:
    if re.search("[\uac00-\ud7af]", stem):
        return utf16_len(stem) >= 2
    return bool(re.fullmatch("[a-z0-9_]+", stem, re.I))


def expansion_tokens(q: str, tokenizer: str = "unicode61") -> list[str]:
    """Candidate keywords of a query before stop words (duplicates kept).

    Lower-cased, split on JS whitespace/punctuation; a segment with kana yields its
    ASCII, katakana, kanji and ≥2-hiragana runs (kanji runs also their adjacent
    pairs unless trigram); a segment with Chinese ideographs yields each ideograph
    then each adjacent pair (trigram: the ideographs joined); a Hangul segment
    yields itself and its particle-stripped stem (stop words excluded); any other
    segment is one token.
    """
    _check_tokenizer(tokenizer)
    trigram = tokenizer == "trigram"
    tokens: list[str] = []
    for seg in _segments(js_trim(q).lower()):
        if _JP_KANA_RE.search(seg):
            for part in _JP_PART_RE.findall(seg):
                tokens.append(part)
                if not trigram and re.fullmatch("[\u4e00-\u9fff]+", part):
                    tokens.extend(part[i : i + 2] for i in range(len(part) - 1))
        elif _HAN_RE.search(seg):
            chars = [c for c in seg if _HAN_RE.match(c)]
            if trigram:
                tokens.append("".join(chars))
            else:
                tokens.extend(chars)
                tokens.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
        elif _HANGUL_RE.search(seg):
            stem = _korean_stem(seg)
            ko = STOP_WORDS["ko"]
            if seg not in ko and not (stem is not None and stem in ko):
                tokens.append(seg)
            if stem and stem not in ko and _useful_korean_stem(stem):
                tokens.append(stem)
        else:
            tokens.append(seg)
    return tokens


def _valid_keyword(token: str) -> bool:
    if not token:
        return False
    if re.fullmatch("[a-zA-Z]+", token) and len(token) < 3:
        return False
    if re.fullmatch("[0-9]+", token):
        return False
    return not all(unicodedata.category(c)[0] in "PS" for c in token)


def extract_keywords(q: str, tokenizer: str = "unicode61") -> list[str]:
    """All expansion keywords of a query, first-seen order: :func:`expansion_tokens`
    minus stop words of the seven languages, ASCII-letter words under 3 letters,
    ASCII digit runs and punctuation/symbol-only tokens."""
    out: list[str] = []
    for tok in expansion_tokens(q, tokenizer):
        if tok in ALL_STOP_WORDS or not _valid_keyword(tok) or tok in out:
            continue
        out.append(tok)
    return out


def expansion_keywords(q: str, tokenizer: str = "unicode61") -> list[str]:
    """The terms searched alone when keyword results are thin (spec §5.4): the
    :func:`extract_keywords` that differ from the whole lower-cased, trimmed query,
    the first 6. "what did we decide about the API yesterday?" → ["decide", "api"];
    "之前讨论的那个方案" → ["之", "讨", "论", "个", "方", "案"]."""
    whole = js_trim(q).lower()
    terms = [t for t in extract_keywords(q, tokenizer) if t != whole]
    return terms[:EXPANSION_TERM_LIMIT]


# ------------------------------------------------------------------ §5.5 filename leg
def normalize_path_identifier(value: str) -> str:
    """trim, ``\\`` → ``/``, one leading ``./`` dropped, NFC, lower-cased."""
    text = js_trim(value).replace("\\", "/")
    if text.startswith("./"):
        text = text[2:]
    return unicodedata.normalize("NFC", text).lower()


@functools.lru_cache(maxsize=1 << 14)  # every search of a query asks it per chunk path
def path_specificity(query: str, path: str) -> int:
    """How exactly a query names a path: 3 the whole path, 2 its basename, 1 its
    stem (basename before the last ``.``, unless that is its first character), 0
    none; both sides normalised by :func:`normalize_path_identifier`. A query
    containing ``/`` can only score 3; an empty query or ``.`` scores 0.
    "memory" vs ``MEMORY.md`` → 1."""
    nq = normalize_path_identifier(query)
    if not nq or nq == ".":
        return 0
    npath = normalize_path_identifier(path)
    if nq == npath:
        return 3
    if "/" in nq:
        return 0
    base = npath.split("/")[-1]
    if nq == base:
        return 2
    dot = base.rfind(".")
    stem = base[:dot] if dot > 0 else base
    return 1 if nq == stem else 0


# ------------------------------------------------------------------ §8, §9 multipliers
def importance_multiplier(importance: float | None) -> float:
    """None → 1, else 0.75 + 0.05·clamp(floor(n), 1, 10): 1 → 0.80, 5 → 1.00, 8 → 1.15,
    10 → 1.25; 0 and 11 clamp to 1 and 10, 7.5 floors to 7 (1.10). NaN is None
    (``ChunkTable`` stores "no importance" as NaN) → 1."""
    if importance is None or math.isnan(importance):
        return 1.0
    return 0.75 + math.floor(max(1.0, min(10.0, float(importance)))) * 0.05


def project_keys(project_key: str | None) -> list[str]:
    """The keys of a stored ``project_key``: split on ``;``, trimmed, empty ones dropped."""
    return [k for k in (js_trim(p) for p in (project_key or "").split(";")) if k]


def project_excluded(project_key: str | None) -> bool:
    """True when a chunk's project annotation was malformed: it leaves ranking."""
    return INVALID_PROJECT_KEY in [js_trim(p) for p in (project_key or "").split(";")]


def project_multiplier(project_key: str | None, active: Iterable[str] | None) -> float:
    """×1.15 when every key of the chunk is active, ×0.9 when it is tagged otherwise,
    ×1 when untagged (None or empty) or when no key is active. A key of only
    separators (``";"``) has no keys, and "every" of none holds: ×1.15."""
    active_set = set(active or ())
    if not project_key or not active_set:
        return 1.0
    return 1.15 if all(k in active_set for k in project_keys(project_key)) else 0.9


# ------------------------------------------------------------------ §7 decay
_DATED_RE = re.compile(
    r"(?:^|/)memory/(?:[^/]+/)*([0-9]{4})-([0-9]{2})-([0-9]{2})(?:-[^/]+)?\.md\Z"
)


def _normalize_decay_path(path: str) -> str:
    text = path.replace("\\", "/")
    return text[2:] if text.startswith("./") else text


def date_from_path(path: str) -> datetime | None:
    """UTC midnight of a dated memory path, else None.

    Dated = ``memory/`` (at the start or after a ``/``), any folders, ``YYYY-MM-DD``,
    an optional ``-suffix``, ``.md``: ``memory/sub/2026-01-02.md``,
    ``memory/2026-01-02-1430.md``, ``archive/memory/2026-01-02.md``. Invalid dates
    (2026-02-30, month 13) and years below 100 (JavaScript reads them as 19xx) → None.
    """
    m = _DATED_RE.search(_normalize_decay_path(path))
    if not m:
        return None
    year, month, day = (int(g) for g in m.groups())
    if year < 100:
        return None
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def is_evergreen(path: str) -> bool:
    """True for ``MEMORY.md``, ``USER.md`` and files under ``memory/`` whose name does not
    have the dated shape (``memory/notes.md``, ``memory/2026-9-20.md``). A dated shape
    with an invalid date (``memory/2026-13-01.md``) is not evergreen: it uses its mtime."""
    text = _normalize_decay_path(path)
    if text in ("MEMORY.md", "USER.md"):
        return True
    return text.startswith("memory/") and not _DATED_RE.search(text)


def decay_multiplier(age_days: float, half_life_days: float = HALF_LIFE_DAYS) -> float:
    """exp(−ln2/half_life · max(0, age)): 10 → 0.7937, 30 → 0.5, 60 → 0.25, future → 1.
    A non-finite age (NaN, ±inf) or half-life ≤ 0 leaves the score unchanged (1)."""
    if math.isnan(age_days):
        return 1.0
    age = max(0.0, age_days)
    if not math.isfinite(half_life_days) or half_life_days <= 0 or not math.isfinite(age):
        return 1.0
    return math.exp(-(math.log(2) / half_life_days) * age)


def decay_timestamp_ms(
    path: str, source: str = "memory", mtimes: Mapping[str, float] | None = None
) -> float | None:
    """The time a hit decays from, in ms: sessions → their mtime; a dated path → its
    date; evergreen memory → None (no decay); other files → ``mtimes[path]`` (None
    when unknown)."""
    mt = (mtimes or {}).get(path)
    if source == "sessions":
        return mt if mt is not None and math.isfinite(mt) else None
    dated = date_from_path(path)
    if dated is not None:
        return dated.timestamp() * 1000
    if source == "memory" and is_evergreen(path):
        return None
    return mt if mt is not None and math.isfinite(mt) else None


# ------------------------------------------------------------------ §6 MMR
# The characters the MMR tokenizer keeps one by one (kana, CJK, Hangul), as a regex class.
MMR_CJK_CLASS = "[\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff]"
_MMR_CJK_RE = re.compile(MMR_CJK_CLASS)


def mmr_tokenize(text: str) -> set[str]:
    """MMR tokens: ``[a-z0-9_]+`` runs of the trimmed lower-cased text, plus each
    CJK/kana/Hangul character and each pair of such characters adjacent in the text."""
    lower = js_trim(text).lower()
    tokens = set(re.findall("[a-z0-9_]+", lower))
    prev: str | None = None
    for ch in lower:
        if _MMR_CJK_RE.match(ch):
            tokens.add(ch)
            if prev is not None:
                tokens.add(prev + ch)
            prev = ch
        else:
            prev = None
    return tokens


def _similarity(a: set[str], a_text: str, b: set[str], b_text: str) -> float:
    if not a and not b:
        return 1.0 if a_text == b_text else 0.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def mmr_rerank(
    items: Sequence[Mapping[str, Any]], lambda_: float = MMR_LAMBDA
) -> list[Mapping[str, Any]]:
    """Items (mappings with ``score`` and ``snippet``) in MMR order; none dropped.

    Relevance = min-max normalised score (all equal → 1). Repeatedly pick the
    remaining item maximising λ·rel − (1−λ)·max Jaccard(:func:`mmr_tokenize`) to
    the picked ones; a tie goes to the higher score, then to the earlier item.
    Two token-less snippets are similar iff their trimmed lower-cased texts are
    equal. λ is clamped to [0, 1]; λ = 1 sorts by score (stable).

    NaN scores, one rule whatever their position: for λ < 1 any NaN score gives []
    (the release's ``Math.max``/``Math.min`` return NaN, so every relevance and MMR
    value is NaN, none beats −∞ and it selects nothing); for λ = 1 (the release's sort
    comparator meets NaN, an engine-defined order) the NaN-scored items go last in
    input order, none dropped.
    """
    if len(items) <= 1:
        return list(items)
    lam = max(0.0, min(1.0, lambda_))
    if lam == 1:
        return sorted(
            items, key=lambda it: (True, 0.0) if math.isnan(it["score"]) else (False, -it["score"])
        )
    if any(math.isnan(it["score"]) for it in items):
        return []
    toks = [mmr_tokenize(it["snippet"]) for it in items]
    texts = [
        js_trim(it["snippet"]).lower() if not t else "" for it, t in zip(items, toks, strict=True)
    ]
    scores = [it["score"] for it in items]
    hi, lo = max(scores), min(scores)
    rng = hi - lo
    rel = [1.0 if rng == 0 else (s - lo) / rng for s in scores]
    max_sim = [0.0] * len(items)
    remaining = list(range(len(items)))
    order: list[Mapping[str, Any]] = []
    while remaining:
        best, best_val = -1, -math.inf
        for i in remaining:
            val = lam * rel[i] - (1 - lam) * max_sim[i]
            if val > best_val or (
                val == best_val and scores[i] > (scores[best] if best >= 0 else -math.inf)
            ):
                best, best_val = i, val
        if best < 0:  # NaN relevance (an infinite score): the release stops here
            break
        order.append(items[best])
        remaining.remove(best)
        for i in remaining:
            sim = _similarity(toks[i], texts[i], toks[best], texts[best])
            if sim > max_sim[i]:
                max_sim[i] = sim
    return order
