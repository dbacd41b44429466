"""Temporal decay (spec section 7, QMD boost) and MMR (spec section 6)."""

from __future__ import annotations

import calendar
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memlab.retrieval.rerank import (
    apply_decay,
    decay_multiplier,
    decay_multiplier_array,
    file_timestamp,
    jaccard,
    mmr_rerank,
    mmr_rerank_embeddings,
    mmr_score,
    mmr_tokenize,
    qmd_boost_multiplier,
    snippet,
)

DAY = 86400.0
NAN = np.nan

# ------------------------------------------------------------------------ snippet


def test_snippet_cuts_at_700_utf16_units() -> None:
    assert snippet("a" * 800) == "a" * 700
    assert snippet("short") == "short"
    assert snippet("a" * 698 + "😀" + "b") == "a" * 698 + "😀"  # pair ends at unit 700
    assert snippet("a" * 699 + "😀") == "a" * 699  # the pair would straddle the cut
    assert snippet("😀" * 400) == "😀" * 350
    assert snippet("ab😀", 3) == "ab"
    assert snippet("ab😀", 0) == ""
    assert snippet("a\ud800b", 2) == "a"  # a lone high surrogate at the cut is dropped too


@given(st.text(max_size=900), st.integers(0, 800))
def test_snippet_is_a_prefix_within_budget(text: str, n: int) -> None:
    got = snippet(text, n)
    assert text.startswith(got)
    units = len(got.encode("utf-16-le", "surrogatepass")) // 2
    assert units <= n
    # Never more than one character short of the budget.
    assert got == text or units >= n - 1


# -------------------------------------------------------------------------- decay


@pytest.mark.parametrize(
    ("age", "expected"),
    [(10, 0.79370), (30, 0.5), (60, 0.25), (365, 2.1750e-4), (0, 1.0), (-5, 1.0)],
)
def test_decay_table(age: float, expected: float) -> None:
    got = decay_multiplier(age, 30)
    assert float(f"{got:.5g}") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("half_life", "age", "expected"),
    [
        (30.9, 30, 0.5),  # floored to 30
        (0.5, 1, 0.5),  # floored to 0, raised to the minimum of 1
        (1, 2, 0.25),
        (0, 100, 1.0),  # non-positive: no decay
        (-3, 100, 1.0),
        (math.nan, 100, 1.0),
        (math.inf, 100, 1.0),
        (30, math.nan, 1.0),
        (30, math.inf, 1.0),
    ],
)
def test_decay_half_life_rules(half_life: float, age: float, expected: float) -> None:
    assert decay_multiplier(age, half_life) == pytest.approx(expected, rel=1e-12)


@given(
    st.floats(allow_nan=True, allow_infinity=True),
    st.one_of(st.floats(-5, 400), st.just(math.nan)),
)
def test_decay_array_matches_scalar(age: float, half_life: float) -> None:
    arr = decay_multiplier_array(np.array([age, age]), half_life)
    assert arr[0] == decay_multiplier(age, half_life) == arr[1]


def test_qmd_boost() -> None:
    assert qmd_boost_multiplier(0) == pytest.approx(1.0)
    assert qmd_boost_multiplier(30) == pytest.approx(0.925)
    assert qmd_boost_multiplier(1e9) == pytest.approx(0.85)
    assert qmd_boost_multiplier(-10) == pytest.approx(1.0)
    assert qmd_boost_multiplier(10, 10, weight=1.0) == pytest.approx(0.5)
    np.testing.assert_allclose(qmd_boost_multiplier(np.array([0.0, 30.0, NAN])), [1, 0.925, 1])
    with pytest.raises(ValueError, match="half_life_days must be finite and > 0"):
        qmd_boost_multiplier(1, 0)
    with pytest.raises(ValueError, match=r"weight must be in \[0, 1\], got 1.5"):
        qmd_boost_multiplier(1, 30, 1.5)


# ---------------------------------------------------------------------- timestamps

T_0102 = float(calendar.timegm((2026, 1, 2, 0, 0, 0)))
MTIME = 1_700_000_000.0


@pytest.mark.parametrize(
    ("path", "exact", "latest"),
    [
        ("memory/2026-01-02.md", (T_0102, False), (T_0102, False)),
        ("./memory/2026-01-02.md", (T_0102, False), (T_0102, False)),
        ("memory\\2026-01-02.md", (T_0102, False), (T_0102, False)),
        ("MEMORY.md", (None, True), (None, True)),
        ("memory.md", (None, True), (None, True)),
        ("memory/projects.md", (None, True), (None, True)),
        # The exact-mode defects: dated files in sub-folders or with suffixes.
        ("memory/sub/2026-01-02.md", (None, True), (T_0102, False)),
        ("memory/2026-01-02-1430.md", (None, True), (T_0102, False)),
        ("memory/a/b/2026-01-02_standup.md", (None, True), (T_0102, False)),
        ("memory/2026-01-023.md", (None, True), (None, True)),  # not a date + suffix
        # Invalid dates look dated: not evergreen, they decay by mtime.
        ("memory/2026-02-30.md", (MTIME, False), (MTIME, False)),
        ("memory/2026-13-01.md", (MTIME, False), (MTIME, False)),
        ("memory/2023-02-29.md", (MTIME, False), (MTIME, False)),
        ("memory/0099-01-01.md", (MTIME, False), (MTIME, False)),  # Date.UTC maps to 1999
        ("memory/sub/2026-02-30-x.md", (None, True), (MTIME, False)),
        # Extra paths and other files decay by mtime.
        ("notes/todo.md", (MTIME, False), (MTIME, False)),
        ("../elsewhere/2026-01-02.md", (MTIME, False), (MTIME, False)),
        ("docs/MEMORY.md", (MTIME, False), (MTIME, False)),
    ],
)
def test_file_timestamp_rules(path: str, exact: tuple, latest: tuple) -> None:
    assert file_timestamp(path, MTIME, "exact") == exact
    assert file_timestamp(path, MTIME, "latest") == latest


def test_file_timestamp_leap_day_and_sources() -> None:
    leap = float(calendar.timegm((2024, 2, 29, 0, 0, 0)))
    assert file_timestamp("memory/2024-02-29.md", None) == (leap, False)
    # Sessions are never evergreen; an unknown mtime means no decay.
    assert file_timestamp("memory.md", MTIME, source="sessions") == (MTIME, False)
    assert file_timestamp("sessions/a.jsonl", None, source="sessions") == (None, False)
    assert file_timestamp("notes/a.md", math.nan) == (None, False)
    with pytest.raises(ValueError, match="unknown timestamp rule 'newest'"):
        file_timestamp("MEMORY.md", None, "newest")


def test_apply_decay_vectorised_with_per_query_now() -> None:
    now = np.array([[T_0102 + 30 * DAY], [T_0102 + 60 * DAY]])
    scores = np.array([[0.8, 0.8, 0.8, NAN], [0.4, 0.4, 0.4, 0.4]])
    ts = np.array([[T_0102, T_0102, NAN, T_0102], [T_0102, T_0102 + 90 * DAY, T_0102, T_0102]])
    ever = np.array([[False, True, False, False], [False, False, False, True]])
    new, mult = apply_decay(scores, ts, ever, now, 30)
    np.testing.assert_allclose(mult, [[0.5, 1, 1, 0.5], [0.25, 1, 0.25, 1]], rtol=1e-12)
    np.testing.assert_allclose(new, [[0.4, 0.8, 0.8, NAN], [0.1, 0.4, 0.1, 0.4]], rtol=1e-12)


def test_apply_decay_qmd_kind_and_errors() -> None:
    _, mult = apply_decay([1.0], [0.0], [False], 30 * DAY, 30, kind="qmd", weight=0.2)
    assert mult[0] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="unknown decay kind 'linear'"):
        apply_decay([1.0], [0.0], [False], 0.0, kind="linear")


@given(
    st.integers(1, 20).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.float64, n, elements=st.floats(0, 1e3)),
            # Ages up to 900 half-lives: 2^-900 is still a positive float64.
            hnp.arrays(np.float64, n, elements=st.floats(-100, 900)),
            hnp.arrays(np.bool_, n),
        )
    ),
    st.floats(1e9, 2e9),
    st.floats(1, 400),
    st.sampled_from(["exponential", "qmd"]),
)
def test_decay_never_raises_a_score(data: tuple, now: float, half_life: float, kind: str) -> None:
    scores, age_in_half_lives, evergreen = data
    ts = now - age_in_half_lives * max(1.0, math.floor(half_life)) * DAY
    new, mult = apply_decay(scores, ts, evergreen, now, half_life, kind=kind)
    assert not np.isnan(new).any()
    assert np.all(new <= scores)
    assert np.all(new >= 0)
    assert np.all((mult > 0) & (mult <= 1))
    assert np.all(mult[evergreen] == 1.0)
    assert np.all(mult[age_in_half_lives <= 0] == 1.0)


# --------------------------------------------------------------------- MMR tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Deploy v2, deploy_NOW!", {"deploy", "v2", "deploy_now"}),
        ("你好吗", {"你", "好", "吗", "你好", "好吗"}),
        ("你 好", {"你", "好"}),  # not adjacent: no pair
        ("API接口", {"api", "接", "口", "接口"}),
        ("バグ修正", {"バ", "グ", "修", "正", "バグ", "グ修", "修正"}),
        ("한국", {"한", "국", "한국"}),
        ("你好。世界", {"你", "好", "你好", "世", "界", "世界"}),  # CJK punctuation breaks pairs
        ("café Привет", {"caf"}),  # other scripts give no token
        ("", set()),
    ],
)
def test_mmr_tokenize(text: str, tokens: set[str]) -> None:
    assert mmr_tokenize(text) == tokens


def test_mmr_tokenize_reads_only_the_snippet() -> None:
    assert mmr_tokenize("x " * 350 + "hidden") == {"x"}
    assert "tail" in mmr_tokenize("x " * 340 + "tail")


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (set(), set(), 1.0),
        ({"a"}, set(), 0.0),
        (set(), {"a"}, 0.0),
        ({"a", "b"}, {"a", "b"}, 1.0),
        ({"a", "b"}, {"a", "b", "c", "d"}, 0.5),
        ({"a"}, {"b"}, 0.0),
    ],
)
def test_jaccard(a: set[str], b: set[str], expected: float) -> None:
    assert jaccard(a, b) == expected


def test_mmr_score_spec_example() -> None:
    assert mmr_score(1.0, 0.5, 0.7) == pytest.approx(0.55, abs=1e-12)


# ------------------------------------------------------------------- MMR re-rank


def _reference_mmr(scores: list[float], texts: list[str], lam: float) -> list[int]:
    """Spec section 6 written as plainly as possible (the oracle for the fast path)."""
    if len(scores) <= 1:
        return list(range(len(scores)))
    lam = max(0.0, min(1.0, lam))
    if lam == 1:
        return sorted(range(len(scores)), key=lambda i: -scores[i])
    toks = [mmr_tokenize(t) for t in texts]
    lo, hi = min(scores), max(scores)
    rel = [1.0 if hi == lo else (s - lo) / (hi - lo) for s in scores]
    picked: list[int] = []
    left = list(range(len(scores)))
    while left:
        best, best_mmr = None, -math.inf
        for i in left:
            sim = max((jaccard(toks[i], toks[j]) for j in picked), default=0.0)
            m = lam * rel[i] - (1 - lam) * sim
            if m > best_mmr or (m == best_mmr and scores[i] > scores[best]):
                best, best_mmr = i, m
        picked.append(best)
        left.remove(best)
    return picked


def test_mmr_demotes_a_near_duplicate() -> None:
    texts = ["alpha beta gamma", "alpha beta gamma", "delta epsilon"]
    assert mmr_rerank([1.0, 0.95, 0.5], texts, 0.5) == [0, 2, 1]
    assert mmr_rerank([1.0, 0.95, 0.5], texts, 0.7) == [0, 1, 2]  # relevance still wins


def test_mmr_ties_go_to_higher_score_then_list_order() -> None:
    # After item 0, item "1" has mmr 0.5·0.5 − 0.5·0.5 = 0 and item "2" 0.5·0 − 0 = 0.
    texts = ["a b", "x y", "a b c d"]
    assert mmr_rerank([1.0, 0.0, 0.5], texts, 0.5) == [0, 2, 1]
    # Full ties (same score, same text) keep list order.
    assert mmr_rerank([0.3, 0.3, 0.3], ["same"] * 3, 0.7) == [0, 1, 2]


def test_mmr_edges() -> None:
    assert mmr_rerank([], [], 0.7) == []
    assert mmr_rerank([0.2], ["x"], 0.7) == [0]
    # λ = 1: plain relevance order, stable; λ clamps.
    assert mmr_rerank([0.1, 0.9, 0.9, 0.5], ["a"] * 4, 1.0) == [1, 2, 3, 0]
    assert mmr_rerank([0.1, 0.9, 0.9, 0.5], ["a"] * 4, 3.0) == [1, 2, 3, 0]
    texts = ["a b", "a b", "c d"]
    assert mmr_rerank([1.0, 0.9, 0.1], texts, -2.0) == mmr_rerank([1.0, 0.9, 0.1], texts, 0.0)
    with pytest.raises(ValueError, match="2 scores but 3 items"):
        mmr_rerank([1.0, 0.5], ["a", "b", "c"])
    with pytest.raises(ValueError, match="finite"):
        mmr_rerank([1.0, math.nan], ["a", "b"])
    with pytest.raises(ValueError, match="lambda_"):
        mmr_rerank([1.0, 0.5], ["a", "b"], math.nan)


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "你", "好", "x"])
mmr_lists = st.integers(0, 9).flatmap(
    lambda n: st.tuples(
        st.lists(
            st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]) | st.floats(-2, 2), min_size=n, max_size=n
        ),
        st.lists(st.lists(words, max_size=5).map(" ".join), min_size=n, max_size=n),
    )
)


@given(mmr_lists, st.floats(-0.5, 1.5))
def test_mmr_matches_reference_and_is_a_permutation(data: tuple, lam: float) -> None:
    scores, texts = data
    got = mmr_rerank(scores, texts, lam)
    assert sorted(got) == list(range(len(scores)))
    assert got == _reference_mmr(scores, texts, lam)
    if scores and lam < 1:
        top = max(scores)
        assert got[0] == scores.index(top)


@given(mmr_lists)
def test_mmr_lambda_one_is_relevance_order(data: tuple) -> None:
    scores, texts = data
    got = mmr_rerank(scores, texts, 1.0)
    assert got == sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def test_mmr_embeddings_demotes_paraphrase() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0]])
    assert mmr_rerank_embeddings([1.0, 0.95, 0.5], vectors, 0.5) == [0, 2, 1]
    assert mmr_rerank_embeddings([1.0, 0.95, 0.5], vectors, 1.0) == [0, 1, 2]


def test_mmr_embeddings_zero_vector_and_errors() -> None:
    # A zero vector is similar to nothing, so it is not penalised.
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    assert mmr_rerank_embeddings([1.0, 0.9, 0.8], vectors, 0.5) == [0, 2, 1]
    with pytest.raises(ValueError, match=r"vectors must be \[n, d\]"):
        mmr_rerank_embeddings([1.0], np.ones(3))
    with pytest.raises(ValueError, match="vectors must be finite"):
        mmr_rerank_embeddings([1.0, 0.5], np.array([[1.0, NAN], [0.0, 1.0]]))


@given(
    st.integers(0, 8).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-1, 1), min_size=n, max_size=n),
            hnp.arrays(np.float64, (n, 3), elements=st.floats(-1, 1)),
        )
    ),
    st.floats(0, 1),
)
def test_mmr_embeddings_is_a_permutation(data: tuple, lam: float) -> None:
    scores, vectors = data
    got = mmr_rerank_embeddings(scores, vectors, lam)
    assert sorted(got) == list(range(len(scores)))
    if lam == 1.0:
        assert got == sorted(range(len(scores)), key=lambda i: (-scores[i], i))
