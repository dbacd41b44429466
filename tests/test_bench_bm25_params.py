"""studies/bm25_params.py: FTS5's BM25 recomputed with other k1 and b."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from studies.bm25_params import (  # noqa: E402
    FTS5_POINT,
    IDF_FLOOR,
    bm25_scores,
    bm25_term,
    choose,
    keyword_inputs,
    leg_ranks,
    phrase_counts,
    query_terms,
    with_keyword_scores,
)
from tests.test_beam import beam_dir  # noqa: E402, F401  (a fixture)
from tests.test_bench_chunk_lines import small_dataset  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("source", ["beam", "synthetic"])
@pytest.mark.parametrize("system", ["memlab-best", "bm25"])
def test_the_recomputation_is_fts5s_own_bm25_at_its_point(
    system: str,
    source: str,
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    private_cache: Path,
) -> None:
    # Differential: FTS5's bm25() (porter for memlab-best, unicode61 for bm25) against
    # the study's formula over fts5vocab's statistics, on every scored pair: BEAM's
    # fixture has several indexes (table segments), the synthetic corpus many matches.
    from memlab.embed import HashingEmbedder
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    ds = small_dataset(source, beam_dir, tmp_path)
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="turn", progress=None)
    # Every matched row a candidate (the study's condition; bm25's own depth is 40).
    p = preset(system, max_results=10, candidate_multiplier=200.0, max_candidates=1000)
    lc, stats, stems = keyword_inputs(lab, p)
    assert len(stats) == len(set(ds.queries["group"]))
    assert len(stats) > 1 if source == "beam" else np.isfinite(lc.cs.text_raw).sum() > 100
    raw = bm25_scores(lc, stats, stems, *FTS5_POINT)
    assert np.isfinite(raw).any()
    np.testing.assert_allclose(raw, lc.cs.text_raw, rtol=1e-9, atol=1e-12)
    # At FTS5's point the replaced leg is the leg itself: its ranks, and every metric.
    same = with_keyword_scores(lc, raw)
    np.testing.assert_array_equal(same.cs.text_rank, lc.cs.text_rank)
    for m, v in same.score(p, ["recall@5", "ndcg@10"]).items():
        np.testing.assert_array_equal(v, lc.score(p, ["recall@5", "ndcg@10"])[m])
    # Another point re-scores the same pairs, differently, and the system ranks them.
    other = bm25_scores(lc, stats, stems, 2.0, 0.3)
    assert np.array_equal(np.isfinite(other), np.isfinite(raw))
    assert not np.allclose(other[np.isfinite(other)], raw[np.isfinite(raw)])
    v = with_keyword_scores(lc, other).score(p, ["recall@10"])["recall@10"]
    assert v.shape == (len(lc.qids),)
    with pytest.raises(ValueError, match="exactly the rows"):
        with_keyword_scores(lc, np.where(np.isfinite(raw), raw, 0.0))


def test_keyword_inputs_refuse_an_and_query_and_a_cut_leg(
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    private_cache: Path,
) -> None:
    from memlab.datasets.beam import load_beam
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    lab = Lab(load_beam(beam_dir, tmp_path / "out"), embedder=None, unit="turn", progress=None)
    with pytest.raises(ValueError, match="keyword_mode='and'"):
        keyword_inputs(lab, preset("openclaw"))
    # A leg cut at its depth could hide matched rows: refused.
    with pytest.raises(ValueError, match="its depth 1"):
        keyword_inputs(lab, preset("bm25", max_results=1, max_candidates=1))


def test_bm25_term_by_hand() -> None:
    # N = 10 rows, the term in 2: idf = ln(8.5 / 2.5); f = 2, |d| = 6, avgdl = 4.
    got = bm25_term(np.array([2, 0]), np.array([6, 3]), 4.0, 2, 10, 1.2, 0.75)
    idf = math.log(8.5 / 2.5)
    want = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 6 / 4))
    np.testing.assert_allclose(got, [want, 0.0])
    # A term in half the rows or more: FTS5's floor, not a negative idf.
    np.testing.assert_allclose(
        bm25_term(np.array([1]), np.array([4]), 4.0, 6, 10, 1.2, 0.75),
        [IDF_FLOOR * 2.2 / (1 + 1.2)],
    )


@settings(max_examples=100, deadline=None)
@given(
    f=st.integers(1, 9),
    lens=st.tuples(st.integers(1, 50), st.integers(1, 50)),
    k1=st.floats(0.1, 3.0),
    b=st.floats(0.0, 1.0),
)
def test_bm25_term_properties(f: int, lens: tuple[int, int], k1: float, b: float) -> None:
    dl = np.array(lens)
    s = bm25_term(np.array([f, f]), dl, 10.0, 3, 100, k1, b)
    # b = 0: length does not matter; otherwise the longer row scores no higher.
    no_len = bm25_term(np.array([f, f]), dl, 10.0, 3, 100, k1, 0.0)
    assert no_len[0] == pytest.approx(no_len[1])
    longer, shorter = (0, 1) if lens[0] > lens[1] else (1, 0)
    assert s[longer] <= s[shorter] + 1e-12
    # Saturation: never above idf · (k1 + 1), and more occurrences score no lower.
    idf = math.log(97.5 / 3.5)
    assert (s <= idf * (k1 + 1) + 1e-9).all()
    more = bm25_term(np.array([f + 1, f + 1]), dl, 10.0, 3, 100, k1, b)
    assert (more >= s - 1e-12).all()


def test_query_terms_are_fts5s_terms_and_phrases() -> None:
    # "dogs" and "dog" are two OR terms with one stem: FTS5 counts it twice.
    terms = query_terms(["dogs dog DOG running", "the", "OPENCLAW_PLUGIN_HOST set"], "porter")
    assert terms[0] == [("dog",), ("dog",), ("run",)]
    assert terms[1] == [("the",)]  # only stop words: the unfiltered tokens
    # unicode61 splits at "_": one quoted token, a phrase of three stems.
    assert terms[2] == [("openclaw", "plugin", "host"), ("set",)]
    assert query_terms(["Dogs running"], "unicode61") == [[("dogs",), ("running",)]]


def test_phrase_counts_need_consecutive_stems() -> None:
    first = {1: {0, 5}, 2: {3}, 3: {7}}
    second = {1: {1, 9}, 2: {5}, 4: {0}}
    # Row 1: stem 2 right after stem 1 at offset 0 only; row 2 not consecutive.
    assert phrase_counts([first, second]) == {1: 1}
    assert phrase_counts([first]) == {1: 2, 2: 1, 3: 1}
    assert phrase_counts([{1: {0, 2}}, {1: {1, 3}}, {1: {2, 4}}]) == {1: 2}
    assert phrase_counts([]) == {}


def test_leg_ranks_order_by_value_then_the_legs_own_order() -> None:
    raw = np.array([[-1.0, np.nan, -3.0, -1.0 + 1e-12], [np.nan, np.nan, np.nan, np.nan]])
    fallback = np.array([[2, -1, 0, 1], [-1, -1, -1, -1]])
    # -1.0 and -1.0 + 1e-12 tie at 9 decimals: the leg's own order (column 3 first).
    np.testing.assert_array_equal(leg_ranks(raw, fallback), [[2, -1, 0, 1], [-1, -1, -1, -1]])
    # With more decimals they differ, and the lower value comes first.
    np.testing.assert_array_equal(
        leg_ranks(raw, fallback, decimals=15), [[1, -1, 0, 2], [-1, -1, -1, -1]]
    )


def test_choose_gives_a_tie_to_fts5s_point() -> None:
    assert choose({(0.9, 0.5): 275.804, FTS5_POINT: 275.8, (2.0, 1.0): 270.0}) == FTS5_POINT
    assert choose({(0.9, 0.5): 275.81, FTS5_POINT: 275.8}) == (0.9, 0.5)
    assert choose({(0.9, 0.5): 275.8, (0.6, 0.3): 275.8}) == (0.9, 0.5)
