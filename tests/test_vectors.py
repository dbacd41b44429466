"""Vector-search engines: exact ones agree with brute force, approximate ones are close."""

from __future__ import annotations

import numpy as np
import pytest

import memlab.retrieval.vectors as mv
from memlab.retrieval.vectors import ENGINES, exact_topk, make_engine, recall_at_k


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def clustered() -> tuple[np.ndarray, np.ndarray]:
    """Points around 40 centres (like real embeddings), queries near random points."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((40, 32))
    v = unit(centres[rng.integers(0, 40, size=3000)] + 0.35 * rng.standard_normal((3000, 32)))
    q = unit(v[rng.choice(3000, 60, replace=False)] + 0.1 * rng.standard_normal((60, 32)))
    return v, q


def brute(v: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    s = q.astype(np.float64) @ v.astype(np.float64).T
    return np.stack([np.lexsort((np.arange(len(v)), -row))[:k] for row in s])


def test_exact_topk_matches_brute_force_with_ties() -> None:
    rng = np.random.default_rng(1)
    v = unit(rng.standard_normal((500, 16)))
    v[10] = v[20] = v[400] = v[7]  # exact ties: lower position first
    q = np.vstack([v[7], unit(rng.standard_normal((5, 16)))])
    pos, sc = exact_topk(v, q, 12)
    assert pos.shape == (6, 12) and pos.dtype == np.int64 and sc.dtype == np.float64
    assert pos[0, :4].tolist() == [7, 10, 20, 400]
    np.testing.assert_array_equal(pos[1:], brute(v, q[1:], 12))
    assert np.all(np.diff(sc, axis=1) <= 0)
    np.testing.assert_allclose(sc, np.take_along_axis(q @ v.T, pos, axis=1), rtol=1e-5)
    # one query at a time gives the same positions as the batch
    for i in range(len(q)):
        np.testing.assert_array_equal(exact_topk(v, q[i : i + 1], 12)[0][0], pos[i])


def test_exact_topk_edges() -> None:
    v = unit(np.random.default_rng(2).standard_normal((5, 4)))
    pos, _sc = exact_topk(v, v[:2], 50)  # k > N → k' = N
    assert pos.shape == (2, 5) and set(pos[0]) == set(range(5))
    assert exact_topk(v, v[:2], 0)[0].shape == (2, 0)
    assert exact_topk(np.zeros((0, 4), np.float32), v[:1], 3)[0].shape == (1, 0)
    with pytest.raises(ValueError, match="dimensions"):
        exact_topk(v, np.ones((1, 3)), 2)


def test_threaded_scan_merges_blocks_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mv, "PARALLEL_MIN_ROWS", 1)
    rng = np.random.default_rng(3)
    v = unit(rng.standard_normal((1001, 8)))
    v[900] = v[3]  # a tie across the two blocks
    one = make_engine("numpy", v, threads=1)
    two = make_engine("numpy", v, threads=2)
    for q in (v[3:4], unit(rng.standard_normal((1, 8)))):
        np.testing.assert_array_equal(two.search(q, 17)[0], one.search(q, 17)[0])
    assert two.search(v[3:4], 2)[0].tolist() == [[3, 900]]


def test_faiss_exact_agrees(clustered) -> None:
    v, q = clustered
    np.testing.assert_array_equal(make_engine("faiss", v).search(q, 10)[0], brute(v, q, 10))


@pytest.mark.parametrize("kind", ["fp16", "sq8"])
def test_quantised_scan_rescores_exactly(clustered, kind: str) -> None:
    v, q = clustered
    eng = make_engine(kind, v, oversample=4)
    pos, sc = eng.search(q, 10)
    assert recall_at_k(pos, brute(v, q, 10)) >= 0.95
    # re-scored from float32: the scores are the exact inner products
    np.testing.assert_allclose(sc, np.take_along_axis(q @ v.T, pos, axis=1), rtol=1e-5)
    assert eng.nbytes == v.shape[0] * v.shape[1] * (2 if kind == "fp16" else 1)


def test_ivf_recall_grows_with_nprobe_and_is_exact_when_scanning_all(clustered) -> None:
    v, q = clustered
    truth = brute(v, q, 10)
    ivf = make_engine("ivf", v, nlist=32, nprobe=1)
    low = recall_at_k(ivf.search(q, 10)[0], truth)
    ivf.nprobe = 32
    assert recall_at_k(ivf.search(q, 10)[0], truth) == 1.0
    assert low < 1.0
    with pytest.raises(ValueError, match="nprobe"):
        ivf.nprobe = 0


def test_hnsw_recall(clustered) -> None:
    v, q = clustered
    h = make_engine("hnsw", v, m=16, ef_search=64)
    assert recall_at_k(h.search(q, 10)[0], brute(v, q, 10)) >= 0.9


def test_approximate_engines_pad_missing_slots() -> None:
    v = unit(np.random.default_rng(4).standard_normal((200, 8)))
    ivf = make_engine("ivf", v, nlist=8, nprobe=1)
    pos, sc = ivf.search(v[:3], 150)  # one cell holds fewer than 150 points
    assert (pos == -1).any()
    assert np.isnan(sc[pos == -1]).all() and not np.isnan(sc[pos >= 0]).any()


def test_recall_at_k() -> None:
    truth = np.array([[1, 2, 3, 4], [5, 6, -1, -1], [-1, -1, -1, -1]])
    found = np.array([[1, 9, 3, 8], [6, 5, 7, -1], [1, 2, 3, 4]])
    assert recall_at_k(found, truth) == pytest.approx((0.5 + 1.0) / 2)
    assert np.isnan(recall_at_k(np.zeros((0, 3)), np.zeros((0, 3))))


def test_make_engine_names_and_errors() -> None:
    v = unit(np.random.default_rng(5).standard_normal((50, 4)))
    for kind in ENGINES:
        e = make_engine(kind, v)
        assert e.name == kind
        assert e.search(v[:2], 5)[0].shape == (2, 5)
    with pytest.raises(ValueError, match="unknown vector engine"):
        make_engine("annoy", v)
    with pytest.raises(ValueError, match="oversample"):
        make_engine("sq8", v, oversample=0)
