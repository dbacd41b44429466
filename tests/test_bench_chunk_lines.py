"""studies/chunk_lines.py: chunks scored by their best line (MaxP), the orderings, and the
engine preset's row against the study's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import studies.chunk_lines as cl  # noqa: E402
from benchmarks._common import CHUNK_UNIT_NAME  # noqa: E402
from memlab.retrieval.fusion import normalize  # noqa: E402
from memlab.stages.best_line import (  # noqa: E402
    best_line_scores,
    held_line_codes,
    novel_line_order,
)
from studies.chunk_lines import (  # noqa: E402
    CHOICES_BY_SIMPLICITY,
    PRESET_ROW,
    STUDY_ROW,
    compare_preset,
    line_system,
    mix_scores,
    novel_variant_order,
    order_by,
    ranking_of,
    second_line_scores,
    study,
)
from studies.shared import choose_simplest  # noqa: E402
from tests.test_beam import beam_dir  # noqa: E402, F401  (a fixture)


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


@given(
    st.lists(
        st.tuples(st.integers(1, 12), st.floats(-5, 5, allow_nan=False)), min_size=0, max_size=15
    ),
    st.sampled_from([0.0, 0.25, 1.0]),
)
def test_second_line_pooling_matches_a_brute_force_sum(
    lines: list[tuple[int, float]], b: float
) -> None:
    start = np.array([1, 4, 4, 9])
    end = np.array([5, 8, 4, 12])
    paths = np.array(["m.md"] * 4)
    ln = np.array([x for x, _ in lines], dtype=np.int64)
    sc = np.array([s for _, s in lines], dtype=np.float64)
    got = second_line_scores(paths, start, end, np.array(["m.md"] * len(lines)), ln, sc, b)
    floor = min((s for _, s in lines), default=0.0)
    for c in range(4):
        inside = sorted((s - floor for x, s in lines if start[c] <= x <= end[c]), reverse=True)
        if not inside:
            assert np.isnan(got[c])
            continue
        assert got[c] == pytest.approx(inside[0] + b * (inside[1] if len(inside) > 1 else 0.0))
        assert got[c] >= 0.0
    if b == 0.0:  # ranks as the best line does: the same scores up to one shift
        best = best_line_scores(paths, start, end, np.array(["m.md"] * len(lines)), ln, sc)
        np.testing.assert_allclose(got, best - floor)


def test_second_line_pooling_lifts_a_chunk_with_two_good_lines() -> None:
    # Chunk 0 holds the best line alone; chunk 1 two nearly as good lines.
    paths = np.array(["a.md", "a.md"])
    got = second_line_scores(
        paths,
        np.array([1, 5]),
        np.array([4, 8]),
        np.array(["a.md"] * 4),
        np.array([2, 6, 7, 3]),
        np.array([1.0, 0.9, 0.9, 0.0]),
        0.5,
    )
    assert got[1] > got[0]  # 0.9 + 0.5 * 0.9 beats 1.0 + 0.5 * 0.0
    assert got[0] == pytest.approx(1.0)


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
    assert choose_simplest({simple[0]: 0.60, simple[1]: 0.70, "mix 0.5": 0.65}, simple) == simple[1]
    tied = {"mix 0.25": 0.7, simple[1]: 0.7, simple[0]: 0.7, "mix 4": 0.7}
    assert choose_simplest(tied, simple) == simple[0]
    # Equal to the fourth digit is a tie; among mixes the first listed wins.
    assert choose_simplest({"mix 4": 0.72624, simple[1]: 0.72621}, simple) == simple[1]
    assert choose_simplest({"mix 0.25": 0.5, "mix 4": 0.5}, simple) == "mix 0.25"


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


def test_the_study_uses_the_engine_best_line_scores() -> None:
    # One definition: the study's MaxP is the best_line stage's.
    assert cl.best_line_scores is best_line_scores
    assert CHOICES_BY_SIMPLICITY[0] == CHUNK_UNIT_NAME


def test_compare_preset_counts_short_queries_and_prefix_mismatches() -> None:
    held = [{1, 2, 3}, {5}, {7, 8}]
    study_rows = [np.array([2, 1, 3]), np.array([5, 6, 4]), np.array([7, 9, 8])]
    preset_rows = [
        np.array([2, 1, 3]),  # every chunk holds a line: the same list
        np.array([5]),  # chunks 6 and 4 hold none: dropped, the rest agrees
        np.array([8, 7]),  # not the study's order: a mismatch
    ]
    v = {"recall@6": np.array([1.0, 0.5, np.nan])}
    w = {"recall@6": np.array([1.0, 0.0, np.nan])}
    got = compare_preset(study_rows, held, preset_rows, v, w, k=3)
    assert got == {
        "questions": 3,
        "short": 2,
        "top_k_differ": 2,
        "prefix_mismatch": 1,
        "recall@6 differ": 1,
    }


@pytest.mark.slow
@pytest.mark.parametrize("depth", [100, 1])
def test_the_engine_preset_row_equals_the_studys_best_line_row(
    depth: int,
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memlab.datasets.beam import load_beam
    from memlab.embed import HashingEmbedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = load_beam(beam_dir, tmp_path / "out")
    values, qids, check = study(ds, depth, HashingEmbedder(dimensions=64))
    assert len(qids) == len(ds.queries) == check["questions"]
    names = list(values)
    assert names[:3] == ["bm25 (chunk)", CHUNK_UNIT_NAME, STUDY_ROW]
    assert names[3] == PRESET_ROW  # shown beside the study's row
    # The stage ranks exactly the study's list with the line-less chunks left out.
    assert check["prefix_mismatch"] == 0
    if depth == 1:
        # One line per question: a second chunk holds none, which the study ranks last
        # and the stage drops (the only way the two rows can differ).
        assert check["short"] > 0 and check["top_k_differ"] == check["short"]
        return
    # With 100 lines every returned chunk of this fixture holds one: the same rows.
    assert check["short"] == check["top_k_differ"] == 0
    for m, v in values[STUDY_ROW].items():
        np.testing.assert_array_equal(values[PRESET_ROW][m], v)
        assert check[f"{m} differ"] == 0


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(
        st.tuples(st.sampled_from("ab"), st.integers(1, 20), st.integers(0, 6)), max_size=10
    ),
    lines=st.lists(
        st.tuples(
            st.sampled_from("abc"),
            st.integers(1, 25),
            st.one_of(st.sampled_from([0.5, 1.0]), st.floats(-3, 3), st.just(float("nan"))),
        ),
        max_size=14,
        unique_by=lambda x: (x[0], x[1]),
    ),
    seed=st.integers(0, 1000),
)
def test_the_studys_new_line_order_at_radius_0_and_b_0_is_the_engines(chunks, lines, seed) -> None:
    cp = np.array([c[0] for c in chunks], dtype=object)
    cs = np.array([c[1] for c in chunks], dtype=np.int64)
    ce = cs + np.array([c[2] for c in chunks], dtype=np.int64)
    lp = np.array([x[0] for x in lines], dtype=object)
    ln = np.array([x[1] for x in lines], dtype=np.int64)
    ls = np.array([x[2] for x in lines], dtype=np.float64)
    depth = max(1, len(lines))
    codes = held_line_codes(cp, cs, ce, lp, ln, ls, depth)
    holds = (codes >= 0).any(axis=1)
    # The engine keeps only the chunks that hold a line (valid first in its order).
    perm = np.random.default_rng(seed).permutation(len(chunks))
    order = np.concatenate([perm[holds[perm]], perm[~holds[perm]]]).astype(np.int64)
    engine = novel_line_order(order[None, :], holds[None, :], codes[None], depth)[0]
    got = novel_variant_order(cp, cs, ce, lp, ln, ls, order, 0, 0.0)
    assert got.tolist() == engine.tolist()


def test_the_new_line_order_compares_raw_scores_not_shifted_ones() -> None:
    # 1e-17 above 0.0 is lost when both are shifted by the lowest score (-3.0).
    cp = np.array(["a", "a", "a"], dtype=object)
    cs, ce = np.array([1, 5, 9]), np.array([1, 5, 9])
    lp, ln = cp.copy(), np.array([1, 5, 9])
    ls = np.array([0.0, 1e-17, -3.0])
    codes = held_line_codes(cp, cs, ce, lp, ln, ls, 3)
    order = np.array([0, 1, 2])
    engine = novel_line_order(order[None, :], np.ones((1, 3), bool), codes[None], 3)[0]
    assert engine.tolist() == [1, 0, 2]
    assert novel_variant_order(cp, cs, ce, lp, ln, ls, order, 0, 0.0).tolist() == [1, 0, 2]


def test_the_new_line_variants_cover_a_radius_and_credit_a_second_line() -> None:
    # Chunk 0 holds lines 1-3 of a; chunk 1 holds line 5 (0.8), chunk 2 lines 9-10.
    cp = np.array(["a", "a", "a"], dtype=object)
    cs, ce = np.array([1, 5, 9]), np.array([3, 5, 10])
    lp = np.array(["a"] * 5, dtype=object)
    ln = np.array([2, 5, 9, 10, 3])
    ls = np.array([1.0, 0.8, 0.7, 0.6, 0.0])  # shifted by the lowest, 0.0
    order = np.array([0, 1, 2])
    assert novel_variant_order(cp, cs, ce, lp, ln, ls, order, 0, 0.0).tolist() == [0, 1, 2]
    # Covering ±2 lines around chunk 0 (1-3 → up to line 5) leaves chunk 1 nothing new.
    assert novel_variant_order(cp, cs, ce, lp, ln, ls, order, 2, 0.0).tolist() == [0, 2, 1]
    # Two new lines 0.7 + 0.5 × 0.6 = 1.0 beat chunk 1's one line 0.8.
    assert novel_variant_order(cp, cs, ce, lp, ln, ls, order, 0, 0.5).tolist() == [0, 2, 1]


def small_dataset(source: str, beam_dir: Path, tmp_path: Path) -> Any:  # noqa: F811
    """A small dataset for the benchmark tests: ``"beam"``, BEAM's fixture (three chats,
    so several indexes), or ``"synthetic"``, a generated 20-day workspace (many lines and
    matches)."""
    from memlab.datasets.beam import load_beam
    from memlab.datasets.synthetic import SynthConfig, generate

    if source == "beam":
        return load_beam(beam_dir, tmp_path / "out")
    return generate(SynthConfig(days=20, seed=5), tmp_path / "synth")


@pytest.mark.slow
@pytest.mark.parametrize(("source", "k"), [("beam", 1), ("synthetic", 6)])
def test_missed_evidence_counts_the_spans_recall_at_k_leaves_out(
    source: str,
    k: int,
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    private_cache: Path,
) -> None:
    from memlab.embed import HashingEmbedder
    from memlab.eval.evidence import evidence_ranks
    from memlab.pipeline.presets import preset

    ds = small_dataset(source, beam_dir, tmp_path)
    turn, chunk = cl.labs(ds, HashingEmbedder(dimensions=64))
    missed = cl.missed_evidence(turn, chunk, k)
    pc = preset("memlab-best-chunk")
    lc = chunk.candidates_for_system(pc)
    recall = lc.score(pc, [f"recall@{k}"])[f"recall@{k}"]
    spans = lc.spans.span_valid.sum(axis=1)
    per_q = missed.groupby("qid").size().reindex(lc.qids, fill_value=0).to_numpy()
    has = spans > 0
    # The lab's recall@k, counted from the other side: missed spans = (1 − recall) · n.
    np.testing.assert_allclose(per_q[has], ((1 - recall) * spans)[has])
    assert (per_q[~has] == 0).all()
    # Both corpora hold spans found and spans missed at their k, so this can fail.
    assert 0 < len(missed) < spans.sum()
    # Each missed span carries its rank in memlab-best's own line ranking (the preset's
    # line system), which ranks it below k lines: the new-line order's first k chunks
    # hold the k best lines.
    pt = preset("memlab-best")
    at_line = evidence_ranks(turn.candidates_for_system(pt), pt)
    assert list(missed.columns) == list(at_line.columns)
    got, want = missed.set_index(["qid", "span"]), at_line.set_index(["qid", "span"])
    np.testing.assert_array_equal(got["rank"], want.loc[got.index, "rank"])
    assert (got["rank"] > k).all()
