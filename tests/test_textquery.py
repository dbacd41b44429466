"""Keyword-side query text: spec section 5 query strings, keywords and the keyword-only boost."""

from __future__ import annotations

import math
import re
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.retrieval.textquery import (
    STOPWORDS,
    build_fts_query,
    build_fts_query_or,
    extract_keywords,
    fts_tokens,
    keyword_only_score,
    or_query_terms,
    query_tokens,
    utf16_len,
)

# ---------------------------------------------------------------- build_fts_query


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hello world", '"hello" AND "world"'),
        ("FOO_bar baz-1", '"FOO_bar" AND "baz" AND "1"'),
        ("  spaced\tout\nquery  ", '"spaced" AND "out" AND "query"'),
        ("dup dup", '"dup" AND "dup"'),
        ("你好 世界", '"你好" AND "世界"'),
        ("café über", '"café" AND "über"'),
        ('say "hi"!', '"say" AND "hi"'),
        ("x² Ⅻ", '"x²" AND "Ⅻ"'),  # superscript two (No) and Roman twelve (Nl) are \p{N}
        ("cafe\u0301 bar", '"cafe" AND "bar"'),  # a combining mark is not \p{L}: it splits
    ],
)
def test_build_fts_query_exact_strings(query: str, expected: str) -> None:
    assert build_fts_query(query) == expected


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "!!! --- ???", "\u0301"])
def test_build_fts_query_without_tokens_is_none(query: str) -> None:
    assert build_fts_query(query) is None


def test_word_class_equals_js_letter_number_underscore() -> None:
    # The module relies on Python's \w being exactly JS [\p{L}\p{N}_] (u flag).
    word = re.compile(r"\w")
    mismatches = [
        cp
        for cp in range(sys.maxunicode + 1)
        if bool(word.match(chr(cp))) != (unicodedata.category(chr(cp))[0] in "LN" or chr(cp) == "_")
    ]
    assert mismatches == []


@given(st.text())
def test_fts_query_round_trips_tokens(text: str) -> None:
    query = build_fts_query(text)
    tokens = fts_tokens(text)
    if not tokens:
        assert query is None
    else:
        assert query is not None
        assert query.split(" AND ") == [f'"{t}"' for t in tokens]


# ------------------------------------------------------------- build_fts_query_or


def test_or_query_drops_stopwords_and_duplicates() -> None:
    assert build_fts_query_or("what is the FTS index, the fts INDEX") == '"FTS" OR "index"'


def test_or_query_max_terms_keeps_first_terms() -> None:
    q = "alpha beta gamma delta"
    assert build_fts_query_or(q, max_terms=2) == '"alpha" OR "beta"'
    assert build_fts_query_or(q) == '"alpha" OR "beta" OR "gamma" OR "delta"'


def test_or_query_only_stopwords_falls_back_to_all_tokens() -> None:
    assert build_fts_query_or("what is it") == '"what" OR "is" OR "it"'


def test_or_query_without_filtering() -> None:
    assert build_fts_query_or("the cat", stopwords=None) == '"the" OR "cat"'
    assert build_fts_query_or("the cat", stopwords=()) == '"the" OR "cat"'


def test_or_query_none_and_errors() -> None:
    assert build_fts_query_or("  ,, ") is None
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_terms must be a positive integer"):
            build_fts_query_or("a b", max_terms=bad)  # type: ignore[arg-type]


# -------------------------------------------------------------- tokens, keywords


def test_query_tokens_lowercase_unique_ordered() -> None:
    assert query_tokens("Alpha beta ALPHA gamma-Beta") == ["alpha", "beta", "gamma"]
    assert query_tokens("") == []


def test_utf16_len_counts_astral_as_two() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("😀") == 2
    assert utf16_len("你好😀") == 4


def test_stopwords_cover_question_words() -> None:
    assert {"what", "when", "where", "who", "why", "how", "which", "the"} <= STOPWORDS
    assert 150 <= len(STOPWORDS) <= 300


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what was the solution for the bug", ["solution", "bug"]),
        ("that thing we discussed about the API", ["discussed", "api"]),
        ("Go to DB on 2026 at v2 ok", ["v2"]),  # short ASCII words, digits, stop words
        ("讨论的方案", ["讨论", "方案"]),
        ("API接口", ["api", "接口"]),
        ("バグ 한국어 修", ["バグ", "한국어", "修"]),
        ("deploy deploy DEPLOY", ["deploy"]),
        ("", []),
    ],
)
def test_extract_keywords(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


def test_extract_keywords_options() -> None:
    assert extract_keywords("release 2026", drop_numbers=False) == ["release", "2026"]
    assert extract_keywords("the release", stopwords=frozenset()) == ["the", "release"]


# ------------------------------------------------------------ keyword-only score


def test_keyword_only_score_hand_computed() -> None:
    # q = {alpha, beta}; chunk tokens {alpha, gamma, delta}; overlap 1; "beta" in path.
    got = keyword_only_score(0.1, "Alpha beta", "Alpha gamma delta", "memory/Beta.md")
    expected = 0.1 + 0.45 * 1 / 2 + 0.2 * 1 / 3 + 0.18 + 17 / 160
    assert got == pytest.approx(expected, abs=1e-12)


def test_keyword_only_score_length_boost_caps_at_018() -> None:
    long_text = "zeta " * 100
    assert keyword_only_score(0.0, "nomatch", long_text, "x.md") == pytest.approx(0.18)


def test_keyword_only_score_length_is_utf16_units() -> None:
    assert keyword_only_score(0.0, "zzz", "😀" * 10, "x.md") == pytest.approx(20 / 160)


def test_keyword_only_score_each_path_token_adds_018() -> None:
    got = keyword_only_score(0.0, "alpha beta", "", "memory/alpha-beta.md")
    assert got == pytest.approx(0.36)


def test_keyword_only_score_edges() -> None:
    # No query token: the text score unchanged, no length boost.
    assert keyword_only_score(0.42, "  ?! ", "some text here", "memory/a.md") == 0.42
    # No chunk token and empty chunk: no division by zero.
    assert keyword_only_score(0.2, "alpha", "", "x.md") == pytest.approx(0.2)
    assert keyword_only_score(0.2, "alpha", "!!!", "x.md") == pytest.approx(0.2 + 3 / 160)
    # Capped at 1.
    assert keyword_only_score(0.9, "alpha", "alpha", "memory/alpha.md") == 1.0


@given(
    st.floats(0, 1),
    st.text(max_size=40),
    st.text(max_size=200),
    st.text(max_size=40),
)
def test_keyword_only_score_range(score: float, query: str, chunk: str, path: str) -> None:
    got = keyword_only_score(score, query, chunk, path)
    assert not math.isnan(got)
    assert score <= got <= 1.0


@pytest.mark.parametrize(
    "query",
    ["What did the dogs and the Dog eat?", "what is the", "", "Ünïcode café, 2024 _x"],
)
def test_the_or_query_is_its_terms_quoted(query: str) -> None:
    terms = or_query_terms(query)
    assert (" OR ".join(f'"{t}"' for t in terms) or None) == build_fts_query_or(query)
    assert or_query_terms(query, max_terms=1) == terms[:1]


def test_or_query_terms_examples() -> None:
    assert or_query_terms("what is the FTS index, the fts INDEX") == ["FTS", "index"]
    assert or_query_terms("what is it") == ["what", "is", "it"]
    assert or_query_terms("  ...  ") == []
