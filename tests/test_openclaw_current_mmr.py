"""The vectorised MMR (memlab.openclaw_current.mmr) gives exactly the permutation of the
reference ``mmr_rerank``: random texts over a tiny vocabulary (Jaccard ties are common),
repeated, empty, whitespace-only and CJK texts, scores with ties, every λ the release uses."""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.openclaw_current.mmr import (
    MmrTokenCache,
    mmr_jaccard_matrix,
    mmr_rerank_order,
    mmr_tokens_fast,
)
from memlab.openclaw_current.ranking import keyword_boost, mmr_rerank, mmr_tokenize, word_runs
from memlab.retrieval.rerank import snippet
from memlab.retrieval.textquery import utf16_len
from memlab.stages.current import current_mmr_perm

WORDS = ["router", "vlan", "Port", "a_1", "我", "喜欢", "你好", "サーバー", "서버", "Да", "x"]
TEXT = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join),
    st.sampled_from(["", "  ", "\u00a0", "?!", " ?! ", "Привет", "我喜欢hello你好", "ab😀"]),
    st.text(alphabet="ab 我你-", max_size=8),
)
SCORE = st.one_of(
    st.sampled_from([0.0, 0.5, 0.7, 1.0, -0.0, 3]), st.floats(-2, 2), st.just(math.nan)
)
LAMBDA = st.sampled_from([0.0, 0.3, 0.7, 1.0, -1.0, 2.0])


def reference(scores: list[float], texts: list[str], lam: float) -> list[int]:
    items = [{"i": i, "score": s, "snippet": t} for i, (s, t) in enumerate(zip(scores, texts, strict=True))]  # fmt: skip
    return [it["i"] for it in mmr_rerank(items, lam)]


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[float], list[str], float]:
    n = draw(st.integers(0, 14))
    pool = draw(st.lists(TEXT, min_size=1, max_size=6))  # few distinct texts: repeats
    texts = [draw(st.sampled_from(pool)) for _ in range(n)]
    scores = [draw(SCORE) for _ in range(n)]
    return scores, texts, draw(LAMBDA)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fast_permutation_equals_reference(case: tuple[list[float], list[str], float]) -> None:
    scores, texts, lam = case
    assert mmr_rerank_order(scores, texts, lam) == reference(scores, texts, lam)


@settings(max_examples=100, deadline=None)
@given(cases(), st.integers(0, 3))
def test_cached_tokens_across_calls_give_the_same_order(
    case: tuple[list[float], list[str], float], shift: int
) -> None:
    """One cache serves several calls, keyed by 'position' (here: the text itself)."""
    scores, texts, lam = case
    cache = MmrTokenCache()
    for k in range(shift + 1):
        got = mmr_rerank_order(scores, texts, lam, cache=cache, keys=texts)
        assert got == reference(scores, texts, lam), k
        texts, scores = texts[1:] + texts[:1], scores[1:] + scores[:1]


@given(TEXT)
def test_fast_tokens_equal_mmr_tokenize(text: str) -> None:
    tokens, empty = mmr_tokens_fast(text)
    assert tokens == mmr_tokenize(text)
    assert empty == ("" if tokens else text.strip().lower())


def test_fast_tokens_cjk_pairs_stop_at_other_characters() -> None:
    tokens, _ = mmr_tokens_fast("我喜 欢x你好")
    assert tokens == {"我", "喜", "我喜", "欢", "x", "你", "好", "你好"}


def test_jaccard_matrix_values_and_token_less_rule() -> None:
    cache = MmrTokenCache()
    texts = ["a b c", "b c d", "?!", " ?! ", "...", "a b c"]
    feats = [cache.get(i, t) for i, t in enumerate(texts)]
    sim = mmr_jaccard_matrix([f[0] for f in feats], [f[1] for f in feats])
    assert sim[0, 1] == 2 / 4 and sim[1, 0] == 2 / 4
    assert sim[0, 5] == 1.0
    assert sim[2, 3] == 1.0  # both token-less, equal once trimmed
    assert sim[2, 4] == 0.0  # both token-less, different texts
    assert sim[0, 2] == 0.0 and sim[2, 0] == 0.0  # one token-less


def test_nan_and_infinite_scores_follow_the_reference() -> None:
    texts = ["a", "b", "a b", "c"]
    for scores in ([1.0, math.nan, 0.5, 0.2], [math.inf, 0.1, 0.1, -1.0], [math.nan] * 4):
        for lam in (0.0, 0.7):
            assert mmr_rerank_order(scores, texts, lam) == reference(scores, texts, lam)
    # any NaN score: the release's Math.max/min are NaN, every relevance is NaN and it
    # picks nothing, wherever the NaN stands (Python's max/min would depend on that)
    assert mmr_rerank_order([math.nan] * 3, ["a", "b", "c"], 0.7) == []
    for scores in ([0.5, math.nan, 1.0], [math.nan, 0.5, 1.0], [0.5, 1.0, math.nan]):
        assert mmr_rerank_order(scores, ["a", "b", "c"], 0.7) == [], scores
    # λ = 1 sorts: NaN-scored items last, in input order, none dropped
    assert mmr_rerank_order([math.nan, 0.5, math.nan, 1.0], list("abcd"), 1.0) == [3, 1, 0, 2]


def test_ties_go_to_higher_score_then_earlier_item() -> None:
    # λ = 0: every value is −max_sim, all 0 at first → the highest score, the earlier of two.
    assert mmr_rerank_order([0.2, 0.9, 0.9, 0.5], ["w", "x", "y", "z"], 0.0) == [1, 2, 3, 0]
    # near-copy demoted at λ = 0.5: [0, 2, 1] (as the reference)
    texts = ["router vlan config", "router vlan config", "dentist tuesday"]
    assert mmr_rerank_order([1.0, 0.95, 0.5], texts, 0.5) == [0, 2, 1]


def test_current_mmr_perm_reads_the_700_unit_snippet_and_caches_by_position() -> None:
    class Table:  # the one method of ChunkTable that the cache needs
        def __init__(self) -> None:
            self.derived_cache: dict = {}

        def derived(self, key, compute):  # type: ignore[no-untyped-def]
            return self.derived_cache.setdefault(key, compute(self))

    long_a = "x " * 350 + "hidden words here"  # the tail lies past 700 units
    texts = [long_a, "x " * 350 + "other words there", "hidden words here"]
    scores = [1.0, 0.9, 0.8]
    want = reference(scores, [snippet(t) for t in texts], 0.5)
    table = Table()
    pos = np.array([7, 3, 5])
    assert current_mmr_perm(scores, texts, 0.5, positions=pos, table=table) == want  # type: ignore[arg-type]
    assert current_mmr_perm(scores, texts, 0.5) == want
    (cache,) = table.derived_cache.values()
    assert set(cache.entries) == {7, 3, 5}
    ids, _ = cache.entries[7]
    assert {t for t, i in cache.vocab.items() if i in set(ids.tolist())} == {"x"}


def test_cli_explain_prints_tier_as_an_integer(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from memlab.cli import main

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- router vlan config notes\n- coffee beans\n")
    (ws / "memory" / "router.md").write_text("# router\n\n- router vlan trunk port\n")
    rc = main(["search", str(ws), "router.md", "--preset", "openclaw-current",
               "--embedder", "hashing", "--db", str(tmp_path / "cli.sqlite"), "--explain",
               "--now", "2026-09-25"])  # fmt: skip
    assert rc in (0, None)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("#  vector_score")).split()
    rows = [line.split() for line in lines if line[:1].isdigit()]
    tiers = [r[header.index("tier")] for r in rows if len(r) >= len(header)]
    assert tiers and set(tiers) <= {"0", "1", "2", "3"}
    assert "3" in tiers or "2" in tiers or "1" in tiers  # memory/router.md is named


# ------------------------------------------------------- the keyword side's fast paths
def word_runs_loop(text: str) -> list[str]:
    """The per-character definition word_runs replaced: maximal runs of ``_`` or L*/N*."""
    runs, cur = [], ""
    for ch in text:
        if ch == "_" or unicodedata.category(ch)[0] in "LN":
            cur += ch
        elif cur:
            runs.append(cur)
            cur = ""
    return [*runs, cur] if cur else runs


def keyword_boost_slow(query: str, path: str, text: str, fts_score: float) -> float:
    """keyword_boost as first written: every query token against every chunk token."""

    def toks(s: str) -> list[str]:
        return [t.lower() for t in word_runs_loop(unicodedata.normalize("NFC", s))]

    def icase(a: str, b: str) -> bool:
        return a == b or (
            not (a.isascii() and b.isascii()) and bool(re.fullmatch(re.escape(a), b, re.I))
        )

    q_tokens = list(dict.fromkeys(toks(query)))
    if not q_tokens:
        return fts_score
    t_set = set(toks(text))
    overlap = sum(1 for q in q_tokens if q in t_set or any(icase(q, t) for t in t_set))
    npath = unicodedata.normalize("NFC", path)
    path_boost = 0.0
    for q in q_tokens:
        path_boost = path_boost + (0.18 if re.search(re.escape(q), npath, re.I) else 0.0)
    length_boost = min(utf16_len(text) / 160, 0.18)
    unique, density = overlap / len(q_tokens), overlap / max(len(t_set), 1)
    return min(1.0, fts_score + (unique * 0.45 + density * 0.2 + path_boost + length_boost))


# letters whose case mappings are irregular (Kelvin sign, long s, dotted/dotless i,
# final sigma, ß, the Greek iota subscript) next to plain ones
CASE_WORDS = ["router", "K", "k", "\u212a", "ſ", "s", "İ", "i", "ı", "I", "Σ", "ς", "σ",
              "ß", "SS", "ᾳ", "Straße", "STRASSE", "café", "cafe\u0301", "_x1", "٣", "Ⅻ", "😀"]  # fmt: skip
CASE_TEXT = st.lists(st.sampled_from([*CASE_WORDS, " ", "-", "/", "."]), max_size=10).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), CASE_TEXT))
def test_word_runs_equal_the_per_character_rule(text: str) -> None:
    assert word_runs(text) == word_runs_loop(text)


@settings(max_examples=300, deadline=None)
@given(CASE_TEXT, CASE_TEXT, st.one_of(CASE_TEXT, st.text(max_size=60)), st.floats(0, 1))
def test_keyword_boost_equals_the_all_pairs_version(
    query: str, path: str, text: str, fts: float
) -> None:
    assert keyword_boost(query, path, text, fts) == keyword_boost_slow(query, path, text, fts)


@pytest.mark.parametrize(
    ("query", "text"), [("ſ", "s a"), ("s", "ſ a"), ("ı", "i a"), ("straße", "STRAßE a")]
)
def test_keyword_boost_case_insensitive_match_across_ascii(query: str, text: str) -> None:
    """A non-ASCII query token equal to an ASCII chunk token under re.I (and back) counts:
    overlap 1 of 1 query token, 2 distinct chunk tokens → 0.45 + 0.1 + length."""
    want = 1.0 * 0.45 + 0.5 * 0.2 + 0.0 + len(text) / 160
    assert keyword_boost(query, "x", text, 0.0) == want
    assert keyword_boost_slow(query, "x", text, 0.0) == want
