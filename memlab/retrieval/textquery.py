"""Keyword-side query text: FTS5 query strings, keyword extraction, keyword-only boost.

Spec section 5. A *token* is a maximal run of Unicode letters, digits and ``_``,
the JavaScript pattern ``/[\\p{L}\\p{N}_]+/gu`` OpenClaw uses. Python's ``\\w``
on ``str`` is exactly that class (letters ``L*``, numbers ``N*`` including
superscripts and Roman numerals, and ``_``; combining marks ``M*`` are *not*
word characters, so a decomposed ``e`` + U+0301 splits the word, as in
OpenClaw). The equivalence is checked over every code point in the tests.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

__all__ = [
    "STOPWORDS",
    "build_fts_query",
    "build_fts_query_or",
    "extract_keywords",
    "fts_tokens",
    "holds_identifier",
    "identifier_pattern",
    "identifier_terms",
    "keyword_leg_note",
    "keyword_only_score",
    "or_query_terms",
    "query_kind",
    "query_tokens",
    "trigram_unmatchable",
    "utf16_len",
]

_TOKEN_RE = re.compile(r"\w+")
# Han ideographs (BMP, extension A, compatibility, supplementary planes).
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
# Han runs, kana runs, hangul runs, and everything else (ASCII/Latin/...) runs.
_SCRIPT_PART_RE = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+"
    r"|[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]+"
    r"|[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+"
    r"|[^\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+"
)
_ASCII_LETTERS_RE = re.compile(r"[A-Za-z]+")
_DIGITS_RE = re.compile(r"[0-9]+")

_STOPWORDS_EN = """
a about above after again against ago all also am an and any anything are aren as at
be because been before being below between both but by can cannot could couldn
did didn do does doesn doing don done down during each either else ever every
everything few find for from further get gets give got had hadn has hasn have haven
having he help her here hers herself him himself his how however i if in into is isn
it its itself just know last later let like many may me might mine more most much must
my myself need never no nor not nothing now of off on once one only or other our ours
ourselves out over own please previous recent recently really said same say see shall
she should show since so some something still stuff such tell than that the their
theirs them themselves then there these they thing things this those through to today
tomorrow too under until up upon us use used very want was wasn we were weren what
whatever when where whether which while who whom whose why will with within without
would wouldn yesterday yet you your yours yourself yourselves
"""
# Function words that would otherwise become single-character Han keywords.
_STOPWORDS_ZH = """
我 我们 你 你们 他 她 它 他们 这 那 这个 那个 这些 那些 的 了 着 过 得 地 吗 呢 吧 啊
是 有 在 被 把 给 和 与 或 但 也 都 就 还 又 再 才 只 什么 怎么 为什么 哪个 之前 以前 之后
以后 现在 昨天 今天 明天 最近 东西 事情 请 帮 告诉
"""

STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_EN.split()) | frozenset(_STOPWORDS_ZH.split())
"""Built-in stop words: ~190 English words (incl. question words and vague time
references) plus common Chinese function words; all lower-case."""


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript ``string.length``).

    A code point above U+FFFF counts 2, every other code point 1: ``"😀"`` → 2.
    """
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def fts_tokens(text: str) -> list[str]:
    """Maximal runs of Unicode letters, digits and ``_`` in ``text``, case and order kept.

    ``"FOO_bar baz-1"`` → ``["FOO_bar", "baz", "1"]``; no tokens → ``[]``.
    """
    return _TOKEN_RE.findall(text)


# FTS5's trigram tokenizer indexes sequences of 3 characters: a shorter term matches nothing.
TRIGRAM_MIN_CHARS = 3


def trigram_unmatchable(query: str, keyword_mode: str = "and") -> list[str]:
    """The terms of ``query``'s keyword search (``keyword_mode`` ``and``: every token,
    ``fts_tokens``; ``or``: ``or_query_terms``, stopwords dropped) shorter than
    ``TRIGRAM_MIN_CHARS`` characters, which an FTS5 trigram index can never match:
    ``"go to Bo"`` → ``["go", "to", "Bo"]`` (AND). ``[]`` when every term can match."""
    terms = fts_tokens(query) if keyword_mode == "and" else or_query_terms(query)
    return [t for t in terms if len(t) < TRIGRAM_MIN_CHARS]


def keyword_leg_note(query: str, fts_tokenizer: str | None, keyword_mode: str) -> str | None:
    """Why the keyword leg cannot find what ``query`` asks, when the index's tokenizer is
    the cause, in words for the user; None when it is not. Under ``trigram`` with the
    ``and``/``or`` query (the release's mode searches short tokens as substrings), terms of
    fewer than 3 characters (``trigram_unmatchable``) match nothing: an AND query then finds
    nothing at all, an OR query ignores them."""
    if fts_tokenizer != "trigram" or keyword_mode not in ("and", "or"):
        return None
    short = trigram_unmatchable(query, keyword_mode)
    if not short:
        return None
    shown = ", ".join(repr(t) for t in short[:5]) + (" …" if len(short) > 5 else "")
    effect = (
        "so the keyword leg (every word must match) finds nothing"
        if keyword_mode == "and"
        else "so the keyword leg ignores them"
    )
    return (
        f"the trigram index matches words of {TRIGRAM_MIN_CHARS} or more characters: {shown}"
        f" cannot match, {effect} (use a longer word, or an index with --fts-tokenizer"
        " unicode61)"
    )


def _quote(token: str) -> str:
    # FTS5 string literal: embedded quotes are doubled (tokens never hold one,
    # but the quoting must stay correct if the token rule ever changes).
    return '"' + token.replace('"', '""') + '"'


def build_fts_query(query: str) -> str | None:
    """OpenClaw's FTS5 MATCH string: every token quoted, joined with `` AND ``.

    ``hello world`` → ``"hello" AND "world"``; ``FOO_bar baz-1`` →
    ``"FOO_bar" AND "baz" AND "1"``. Tokens keep their case and duplicates (FTS5
    folds case itself). No token (empty, whitespace, punctuation only) → ``None``:
    no keyword search is run.
    """
    tokens = fts_tokens(query)
    if not tokens:
        return None
    return " AND ".join(_quote(t) for t in tokens)


def or_query_terms(
    query: str,
    *,
    stopwords: Collection[str] | None = STOPWORDS,
    max_terms: int | None = None,
) -> list[str]:
    """The terms of the OR-mode FTS5 query (:func:`build_fts_query_or`), unquoted.

    Tokens as in :func:`build_fts_query`, de-duplicated case-insensitively (first
    spelling kept), tokens whose lower-cased form is in ``stopwords`` dropped,
    the first ``max_terms`` kept: ``"what is the FTS index"`` → ``["FTS", "index"]``.

    If every token is a stop word the unfiltered tokens are used, so a query made
    only of stop words still searches. ``stopwords=None`` or ``()`` disables
    filtering. No token → ``[]``. ``max_terms`` must be a positive integer.
    """
    if max_terms is not None and (
        isinstance(max_terms, bool) or not isinstance(max_terms, int) or max_terms < 1
    ):
        raise ValueError(f"max_terms must be a positive integer or None, got {max_terms!r}")
    seen: set[str] = set()
    unique: list[str] = []
    for token in fts_tokens(query):
        key = token.lower()
        if key not in seen:
            seen.add(key)
            unique.append(token)
    kept = [t for t in unique if t.lower() not in stopwords] if stopwords else unique
    terms = kept or unique
    return terms[:max_terms] if max_terms is not None else terms


def build_fts_query_or(
    query: str,
    *,
    stopwords: Collection[str] | None = STOPWORDS,
    max_terms: int | None = None,
) -> str | None:
    """An OR-mode FTS5 MATCH string (spec section 12 option): the terms of
    :func:`or_query_terms` (same arguments), each quoted, joined with `` OR ``:
    ``"what is the FTS index"`` → ``"FTS" OR "index"``. No term → ``None``.
    """
    terms = or_query_terms(query, stopwords=stopwords, max_terms=max_terms)
    return " OR ".join(_quote(t) for t in terms) if terms else None


# --------------------------------------------------------------------- identifiers
# Characters a query word loses at its ends before the identifier test (quotes, brackets,
# sentence punctuation: "gw-prod-7?" → gw-prod-7, "(10.0.3.17)." → 10.0.3.17).
_ID_LEAD = "\"'“”‘’«»([{<"
_ID_TRAIL = "\"'“”‘’«»)]}>,;!?.:"
# A separator joining two word characters inside the word.
_ID_SEP_DIGIT = re.compile(r"\w[.\-_:/@#\\]\w")
_ID_SEP_LETTER = re.compile(r"\w(?:[_@#\\]|::)\w")
_ID_DOTTED_NAME = re.compile(r"^\w{2,}(?:\.\w{2,})+$")
_ID_UNIT_SUFFIX = re.compile(r"^\d+[a-z]{1,3}$", re.IGNORECASE)
_ID_ISSUE_NUMBER = re.compile(r"^#\d{2,}$")
# An all-digit word that names one thing: 6 or more digits (a short commit hash written in
# digits, an order or invoice number), or 5 or more with a leading zero (0031877). Shorter
# runs are counts, years (2026) and times (0830), never looked up verbatim.
_ID_ALL_DIGITS = re.compile(r"^(?:\d{6,}|0\d{4,})$")
# A commit hash: 7 to 40 hex digits, some digits and some letters. Checked before the unit
# suffix rule, which would read ``226501f`` as a number with a unit.
_ID_HEX_HASH = re.compile(r"^[0-9a-f]{7,40}$", re.IGNORECASE)
_HAS_DIGIT = re.compile(r"\d")
_HAS_LETTER = re.compile(r"[^\W\d_]")


def _is_identifier(word: str) -> bool:
    if _ID_HEX_HASH.match(word) and _HAS_DIGIT.search(word) and _HAS_LETTER.search(word):
        return True
    if len(word) < 3 or _ID_UNIT_SUFFIX.match(word):
        return False
    if _ID_ISSUE_NUMBER.match(word) or (word.isascii() and _ID_ALL_DIGITS.match(word)):
        return True
    digit, letter = bool(_HAS_DIGIT.search(word)), bool(_HAS_LETTER.search(word))
    if digit:
        return letter or bool(_ID_SEP_DIGIT.search(word))
    if not letter:
        return False
    if "/" in word:  # a path, not "and/or": a dot, a leading / or ~, or two slashes
        return "." in word or word[0] in "/~" or word.count("/") >= 2
    return bool(_ID_SEP_LETTER.search(word) or _ID_DOTTED_NAME.match(word))


def identifier_terms(query: str) -> list[str]:
    """The identifiers a query names: words an agent looks up verbatim (a commit, a
    ticket, a host and port, an IP, a version, a path, a snake_case name).

    The query is split on whitespace; each word loses leading quotes/brackets and trailing
    quotes/brackets/sentence punctuation (``,;!?.:``). A word of 3 or more characters is an
    identifier when it holds

    - a digit and a letter (``a828e60``, ``INC-3317``, ``E1102``, ``gw-prod-7``), but not a
      number with a unit or ordinal suffix of 1–3 letters (``1st``, ``3pm``, ``20km``)
      unless it is a commit hash (7–40 hex digits with digits and letters: ``226501f``);
    - only ASCII digits, 6 or more (``4410923``, an order number ``20417731``), or 5 or more
      with a leading zero (``0031877``): never a year (``2026``), a count (``42``,
      ``12000``) or a time (``0830``);
    - a digit and a separator ``. - _ : / @ # \\`` between two word characters
      (``10.0.3.17``, ``2026-03-03``, ``3.11``, ``9:30``), or is ``#`` and 2+ digits;
    - a letter and ``_``, ``@``, ``#``, ``\\`` or ``::`` between two word characters
      (``user_id``, ``bob@host``), a dotted name of parts of 2+ word characters
      (``config.yaml``, ``Node.js``; not ``e.g``), or a path: a ``/`` with a dot, a
      leading ``/`` or ``~``, or two slashes (``memory/projects/net.md``, ``/etc/hosts``;
      not ``and/or``).

    Plain words, short plain numbers and hyphenated words (``second-hand``) are not
    identifiers.
    Returned in query order, de-duplicated case-insensitively; ``[]`` when none.
    """
    out: dict[str, str] = {}
    for raw in query.split():
        word = raw.lstrip(_ID_LEAD).rstrip(_ID_TRAIL)
        if _is_identifier(word):
            out.setdefault(word.lower(), word)
    return list(out.values())


# Words that open a question (lower case): interrogatives, the auxiliaries of a yes/no
# question, and the verbs of a request put as an order ("list the open tickets"). English
# only; a question in another language is known by its question mark.
QUESTION_WORDS: frozenset[str] = frozenset(
    """what when where who whom whose which why how
    is are was were am do does did can could should would will shall may might must
    has have had tell list name give describe explain""".split()
)
# Question marks at a query's end: ASCII, fullwidth (CJK), Arabic, the Greek question mark.
_QUESTION_MARKS = "?\uff1f\u061f\u037e"


def query_kind(query: str) -> str:
    """The kind of a query an agent sent (one of ``memlab.config.vocab.QUERY_KINDS``):

    - ``identifier``: it names an identifier (:func:`identifier_terms` finds one: a commit,
      ticket, host, IP, version, path …), whatever its form, since an agent looking one up
      needs it verbatim (``a828e60``, ``which host runs gw-prod-7?``);
    - ``question``: else, when it ends with a question mark (``?``; fullwidth ``？``, Arabic ``؟``,
      Greek U+037E), starts with ``¿`` or its first word (lower-cased, of :func:`fts_tokens`) is a
      question word of ``QUESTION_WORDS`` (``what did Ana decide about the backups``);
    - ``keywords``: everything else (``backup retention policy``), the empty query too.

    Leading and trailing whitespace does not change the kind.
    """
    text = query.strip()
    if identifier_terms(text):
        return "identifier"
    if text and (text[-1] in _QUESTION_MARKS or text[0] == "\u00bf"):
        return "question"
    words = fts_tokens(text)
    if words and words[0].lower() in QUESTION_WORDS:
        return "question"
    return "keywords"


def identifier_pattern(term: str) -> re.Pattern[str]:
    """The case-insensitive pattern of ``term`` held verbatim: not preceded or followed by
    a word character (``a828e60`` is not in ``a828e601``; ``10.0.3.17`` is in
    ``10.0.3.17:8443``)."""
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)", re.IGNORECASE)


def holds_identifier(text: str, term: str) -> bool:
    """Whether ``text`` holds ``term`` verbatim (:func:`identifier_pattern`)."""
    return identifier_pattern(term).search(text) is not None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def query_tokens(text: str) -> list[str]:
    """Lower-cased unique tokens of ``text`` in first-seen order.

    ``"Alpha beta ALPHA"`` → ``["alpha", "beta"]``. Used by the keyword-only boost.
    """
    return _unique(t.lower() for t in fts_tokens(text))


def _split_keyword_token(token: str, stopwords: Collection[str]) -> list[str]:
    # Without a segmenter a Han run is offered as its adjacent character pairs
    # (a lone character as itself); pairs touching a one-character stop word
    # such as 的 are noise. Kana, hangul and other script runs stay whole.
    out: list[str] = []
    for part in _SCRIPT_PART_RE.findall(token):
        if not _HAN_RE.match(part) or len(part) == 1:
            out.append(part)
        else:
            pairs = (part[i : i + 2] for i in range(len(part) - 1))
            out.extend(p for p in pairs if p[0] not in stopwords and p[1] not in stopwords)
    return out


def extract_keywords(
    query: str,
    *,
    stopwords: Collection[str] = STOPWORDS,
    drop_numbers: bool = True,
) -> list[str]:
    """Keywords for the keyword-only per-keyword fallback search (spec section 5).

    Tokens of the lower-cased query (letter/digit/_ runs); a token mixing scripts
    is split at script boundaries (``"api接口"`` → ``"api"``, ``"接口"``); a Han run
    of two or more characters yields its adjacent character pairs, except pairs
    holding a one-character stop word (``"讨论的方案"`` → 讨论, 方案; OpenClaw also
    emits every single character, which matches almost anything); kana and
    hangul runs stay whole. Dropped: stop words, ASCII-letter words shorter than
    3 characters, and (``drop_numbers``, as OpenClaw) digit-only tokens. Unique,
    first-seen order. ``"what was the solution for the bug"`` →
    ``["solution", "bug"]``.
    """
    keywords: list[str] = []
    for token in fts_tokens(query.lower()):
        for kw in _split_keyword_token(token, stopwords):
            if kw in stopwords:
                continue
            if _ASCII_LETTERS_RE.fullmatch(kw) and len(kw) < 3:
                continue
            if drop_numbers and _DIGITS_RE.fullmatch(kw):
                continue
            keywords.append(kw)
    return _unique(keywords)


def keyword_only_score(text_score: float, query: str, chunk_text: str, path: str) -> float:
    """Boosted score of a keyword hit in keyword-only mode (no embedding provider).

    ``min(1, textScore + 0.45·overlap/|q| + 0.2·overlap/|c| + 0.18·p
    + min(len/160, 0.18))`` where ``q`` = unique lower-cased query tokens, ``c`` =
    unique lower-cased tokens of the chunk text, ``overlap`` = |q ∩ c|, ``p`` =
    number of query tokens that are substrings of the lower-cased ``path``, and
    ``len`` = length of the *chunk text* in UTF-16 code units (as OpenClaw's
    ``text.length``), so any chunk of 29 or more units gets the full 0.18.

    Edge cases: a query without tokens returns ``text_score`` unchanged (no
    boost at all, as OpenClaw); a chunk without tokens gives ``overlap`` = 0 and
    no division by zero. The result is never NaN for a finite ``text_score``.
    """
    q = query_tokens(query)
    if not q:
        return float(text_score)
    chunk = set(query_tokens(chunk_text))
    overlap = sum(1 for t in q if t in chunk)
    path_lower = path.lower()
    path_hits = sum(1 for t in q if t in path_lower)
    boost = (
        0.45 * overlap / len(q)
        + 0.2 * overlap / max(len(chunk), 1)
        + 0.18 * path_hits
        + min(utf16_len(chunk_text) / 160, 0.18)
    )
    return min(1.0, float(text_score) + boost)
