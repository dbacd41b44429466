"""benchmarks/chunk_lines.py: chunks scored by their best line (MaxP) and the orderings."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.chunk_lines import best_line_scores, order_by, ranking_of, zscore  # noqa: E402


def test_best_line_takes_the_max_of_the_lines_inside_each_chunk() -> None:
    # Two files; chunks 0 and 1 overlap on line 3; chunk 2 is a second piece of line 7
    # (one long line split in two chunks); chunk 3 holds no result line.
    paths = np.array(["a.md", "a.md", "a.md", "b.md"])
    start = np.array([1, 3, 7, 1])
    end = np.array([3, 7, 7, 4])
    got = best_line_scores(
        paths,
        start,
        end,
        np.array(["a.md", "a.md", "a.md", "c.md"]),
        np.array([3, 2, 7, 1]),
        np.array([0.5, 0.9, 0.2, 5.0]),
    )
    assert got[0] == 0.9  # lines 2 and 3
    assert got[1] == 0.5  # line 3 (shared) beats line 7
    assert got[2] == 0.2
    assert np.isnan(got[3])  # b.md has no result line; c.md is no chunk's file


@given(
    st.lists(
        st.tuples(st.integers(1, 12), st.floats(-5, 5, allow_nan=False)), min_size=0, max_size=15
    )
)
def test_best_line_matches_a_brute_force_max(lines: list[tuple[int, float]]) -> None:
    start = np.array([1, 4, 4, 9])
    end = np.array([5, 8, 4, 12])
    paths = np.array(["m.md"] * 4)
    ln = np.array([x for x, _ in lines], dtype=np.int64)
    sc = np.array([s for _, s in lines], dtype=np.float64)
    got = best_line_scores(paths, start, end, np.array(["m.md"] * len(lines)), ln, sc)
    for c in range(4):
        inside = [s for x, s in lines if start[c] <= x <= end[c]]
        if inside:
            assert got[c] == max(inside)
        else:
            assert np.isnan(got[c])


def test_order_by_puts_nan_last_and_breaks_ties_by_the_fallback_rank() -> None:
    primary = np.array([0.5, np.nan, 0.5, 0.9, np.nan, 0.1])
    fallback = np.array([3, 0, 1, 5, 2, 4])
    keep = np.array([True, True, True, True, False, True])
    # 0.9, then the 0.5 tie by fallback (col 2 before col 0), then 0.1, then the NaN;
    # column 4 is not kept.
    assert order_by(primary, fallback, keep).tolist() == [3, 2, 0, 5, 1]


def test_zscore_and_its_edge_cases() -> None:
    x = np.array([1.0, 2.0, 3.0, np.nan])
    z = zscore(x)
    assert z[:3] == pytest.approx([-1.224744871, 0.0, 1.224744871])
    assert np.isnan(z[3])
    assert zscore(np.array([2.0, 2.0, np.nan]))[:2].tolist() == [0.0, 0.0]
    assert zscore(np.array([7.0]))[0] == 0.0


def test_ranking_of_pads_and_cuts_to_k() -> None:
    r = ranking_of([np.array([4, 1]), np.arange(12)], k=10)
    assert r.columns[0].tolist() == [4, 1] + [-1] * 8
    assert r.columns[1].tolist() == list(range(10))
