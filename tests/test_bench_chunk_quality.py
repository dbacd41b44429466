"""studies/chunk_quality.py: the MaxSim rescoring of a lab's cached candidates and the
joint grid's points."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memlab.pipeline.presets import CHUNK_AS_UNIT, memlab_best_chunk  # noqa: E402
from studies.chunk_quality import JOINT_GRID, at_point, joint_points, maxsim_scores  # noqa: E402

# Unit vectors in 3-d, one per window text; the query vector is e1.
VECS = {
    "a": np.array([0.2, 0.98, 0.0]),
    "b": np.array([0.9, 0.0, 0.436]),
    "c": np.array([0.5, 0.866, 0.0]),
    "d": np.array([-1.0, 0.0, 0.0]),
}
QUERY = np.array([1.0, 0.0, 0.0])


class Inner:
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.vstack([VECS[t] for t in texts]).astype(np.float32)


class Windows:
    """Windows of a chunk text are its '|'-separated parts (one part: the text itself)."""

    def windows(self, text: str) -> list[str]:
        return text.split("|")


class Queries:
    def embed_query(self, text: str) -> np.ndarray:
        return QUERY.astype(np.float32)


def fake_candidates() -> SimpleNamespace:
    texts = ["a|b", "c", "d", "a"]
    pos = np.array([[0, 1, 2, -1], [3, 0, 2, 1]])
    # Row 0: chunk 2 not found by the vector leg (NaN); padding at the end.
    score = np.array([[0.2, 0.5, np.nan, np.nan], [0.2, 0.2, -1.0, 0.5]])
    has_vec = ~np.isnan(score)
    rank = np.array([[1, 0, -1, -1], [2, 3, 1, 0]])
    cs = SimpleNamespace(
        pos=pos,
        vec_score=score,
        vec_rank=rank,
        has_vec=has_vec,
        queries=["q0", "q1"],
        table=[None] * len(texts),
        texts=lambda positions: [texts[int(p)] for p in positions],
    )
    return SimpleNamespace(cs=cs)


def test_maxsim_scores_takes_the_best_window_and_reranks() -> None:
    lc = fake_candidates()
    maxsim_scores(lc, Inner(), Windows(), Queries())
    cs = lc.cs
    # Chunk 0 ("a|b"): max(0.2, 0.9) = 0.9, not the mean 0.55; one-window chunks keep q·v.
    np.testing.assert_allclose(cs.vec_score[0, :2], [0.9, 0.5], atol=1e-6)
    np.testing.assert_allclose(cs.vec_score[1], [0.2, 0.9, -1.0, 0.5], atol=1e-6)
    # What the leg did not find stays absent.
    assert np.isnan(cs.vec_score[0, 2:]).all()
    # Ranks follow the new scores (0 = best); -1 where absent.
    assert cs.vec_rank.tolist() == [[0, 1, -1, -1], [2, 0, 3, 1]]


def test_joint_grid_points_are_distinct_memlab_best_chunk_settings() -> None:
    pts = joint_points()
    n = int(np.prod([len(v) for v in JOINT_GRID.values()]))
    assert len(pts) == n == len({p.name for p in pts})
    p = at_point("x", "zscore/zscore", 0.4, neighbor_prev=0.1, neighbor_next=0.7)
    assert (p.vector_norm, p.text_norm, p.vector_weight, p.text_weight) == (
        "zscore",
        "zscore",
        0.4,
        0.6,
    )
    assert (p.neighbor_prev, p.neighbor_next, p.fts_tokenizer) == (0.1, 0.7, "porter")
    # Points of the chunk-as-unit system (the grid's documented figures), each with its
    # legs' own floor: no best-line step, and min_score set once (no duplicate keyword).
    assert (p.best_line, p.min_score) == ("", -1e6)
    q = at_point("y", "minmax/max", 0.3, neighbor_prev=0.3, neighbor_next=0.3)
    assert (q.best_line, q.min_score) == ("", 0.0)
    assert q.replace(name="memlab-best-chunk") == memlab_best_chunk(**CHUNK_AS_UNIT)
    assert {pt.best_line for pt in pts} == {""}
