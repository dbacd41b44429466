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

from benchmarks.chunk_lines import (  # noqa: E402
    CHOICES_BY_SIMPLICITY,
    best_line_scores,
    choose,
    line_system,
    mix_scores,
    order_by,
    ranking_of,
)
from memlab.fusion import normalize  # noqa: E402


def zscore(x: np.ndarray) -> np.ndarray:
    """The z-score the study mixes with: the engine's own normalisation."""
    return normalize(x, "zscore")


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


def test_order_by_orders_several_nans_by_the_fallback_rank() -> None:
    primary = np.array([np.nan, 0.2, np.nan, np.nan])
    fallback = np.array([2, 3, 0, 1])
    assert order_by(primary, fallback, np.ones(4, dtype=bool)).tolist() == [1, 2, 3, 0]


def test_mix_fills_missing_line_scores_with_the_floor_and_masks_unkept_columns() -> None:
    base = np.array([1.0, 2.0, 3.0, 100.0])
    line = np.array([0.4, np.nan, 0.8, 9.0])
    keep = np.array([True, True, True, False])
    got = mix_scores(base, line, keep, a=2.0)
    # Kept line scores [0.4, floor 0.4, 0.8]; column 3 (not kept) neither counts nor scores.
    want = zscore(np.array([1.0, 2.0, 3.0])) + 2.0 * zscore(np.array([0.4, 0.4, 0.8]))
    assert got[:3] == pytest.approx(want)
    assert np.isnan(got[3])
    # No kept column has a line score: the line view adds nothing.
    none = mix_scores(base, np.full(4, np.nan), keep, a=2.0)
    assert none[:3] == pytest.approx(zscore(np.array([1.0, 2.0, 3.0])))


def test_choose_takes_the_best_and_gives_ties_to_the_simpler_system() -> None:
    simple = CHOICES_BY_SIMPLICITY
    assert choose({simple[0]: 0.60, simple[1]: 0.70, "mix 0.5": 0.65}, simple) == simple[1]
    tied = {"mix 0.25": 0.7, simple[1]: 0.7, simple[0]: 0.7, "mix 4": 0.7}
    assert choose(tied, simple) == simple[0]
    # Equal to the fourth digit is a tie; among mixes the first listed wins.
    assert choose({"mix 4": 0.72624, simple[1]: 0.72621}, simple) == simple[1]
    assert choose({"mix 0.25": 0.5, "mix 4": 0.5}, simple) == "mix 0.25"


def test_line_systems_are_the_named_variants() -> None:
    assert line_system("memlab-best, shape rule off").neighbor_shape == "off"
    assert line_system("memlab-best, file context off").file_context == 0.0
    assert line_system("memlab-best").file_context > 0
    assert line_system("vector").max_candidates == 1000


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
