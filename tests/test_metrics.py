"""Span relevance and metrics: hand-worked values, a naive reference, ranx, and both paths."""

from __future__ import annotations

import math
import timeit

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.eval import (
    METRIC_NAMES,
    SpanHits,
    alpha_ndcg,
    budget_recall,
    candidate_coverage,
    evaluate,
    evaluate_hits,
    hits_from_topk,
    mrr,
    ndcg,
    parse_metric,
    precision,
    recall,
    recall_all,
    recall_any,
    span_coverage,
    span_table,
    subtopic_recall,
    take_topk,
)


def log2(x: float) -> float:
    return math.log2(x)


# --- a hand-worked example -------------------------------------------------------
#
# q1: spans s1 a.md 1-3 (grade 2), s2 a.md 10-12 (grade 1), s3 b.md 5 (grade 1)
#     rank 0 a.md 2-11   covers s1 and s2 (one chunk, two spans)
#     rank 1 a.md 3-4    covers s1 again (redundant)
#     rank 2 x.md 1-5    nothing
#     rank 3 b.md 5-6    covers s3
# q2: span c.md 1-2
#     rank 0 c.md 3-9    touches no line of the span
#     rank 1 C.md 1-2    other path (paths match exactly)
#     rank 2 c.md 2-2    covers (shares line 2 only: inclusive overlap)
# q3: retrieved but has no evidence -> excluded, listed
# q4: evidence, nothing retrieved -> zero everywhere
# q5: only a grade-0 span -> no relevant evidence -> excluded


@pytest.fixture
def evidence() -> pd.DataFrame:
    rows = [
        ("q1", "a.md", 1, 3, 2, "s1", "t1"),
        ("q1", "a.md", 10, 12, 1, "s2", "t1"),
        ("q1", "b.md", 5, 5, 1, "s3", "t2"),
        ("q2", "c.md", 1, 2, 1, "s4", "t1"),
        ("q4", "d.md", 1, 1, 1, "s5", "t1"),
        ("q5", "e.md", 1, 1, 0, "s6", "t1"),
    ]
    cols = ["qid", "path", "start_line", "end_line", "grade", "span_id", "subtopic"]
    return pd.DataFrame(rows, columns=cols)


@pytest.fixture
def run() -> pd.DataFrame:
    rows = [
        ("q1", 0, "a.md", 2, 11, 100),
        ("q1", 1, "a.md", 3, 4, 50),
        ("q1", 2, "x.md", 1, 5, 30),
        ("q1", 3, "b.md", 5, 6, 20),
        ("q2", 0, "c.md", 3, 9, 10),
        ("q2", 1, "C.md", 1, 2, 10),
        ("q2", 2, "c.md", 2, 2, 10),
        ("q3", 0, "a.md", 1, 1, 10),
        ("q5", 0, "e.md", 1, 1, 10),
    ]
    return pd.DataFrame(rows, columns=["qid", "rank", "path", "start_line", "end_line", "tokens"])


def by_qid(h: SpanHits, values: np.ndarray) -> dict[str, float]:
    return dict(zip(h.qids, values.tolist(), strict=True))


def test_span_coverage_arrays(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run, evidence)
    assert h.qids == ["q1", "q2", "q4"]
    assert h.no_evidence_qids == ["q3", "q5"]
    assert h.covers.shape == (3, 4, 3)
    assert h.n_spans.tolist() == [3, 1, 1]
    q1 = h.covers[0]
    assert q1[0].tolist() == [True, True, False]
    assert q1[1].tolist() == [True, False, False]
    assert q1[2].tolist() == [False, False, False]
    assert q1[3].tolist() == [False, False, True]
    assert h.covers[1, :, 0].tolist() == [False, False, True, False]
    assert not h.covers[2].any()
    assert h.pos_valid.tolist() == [[True] * 4, [True] * 3 + [False], [False] * 4]
    assert h.grades[0].tolist() == [2, 1, 1]
    assert h.subtopic[0].tolist() == [0, 0, 1]
    assert h.subtopic[1].tolist() == [0, -1, -1]
    assert h.span_valid[1].tolist() == [True, False, False]
    assert h.first_cover[0].tolist() == [0, 0, 3]
    assert h.tokens is not None and h.tokens[1].tolist() == [10, 10, 10, 0]


def test_default_subtopic_is_one_per_span(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run, evidence.drop(columns="subtopic"))
    assert h.subtopic[0].tolist() == [0, 1, 2]


def test_hand_worked_metrics(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run, evidence)
    assert by_qid(h, recall(h, 1)) == {"q1": 2 / 3, "q2": 0.0, "q4": 0.0}
    assert by_qid(h, recall(h, 3)) == {"q1": 2 / 3, "q2": 1.0, "q4": 0.0}
    assert by_qid(h, recall(h, 4))["q1"] == 1.0
    assert by_qid(h, recall_any(h, 1)) == {"q1": 1.0, "q2": 0.0, "q4": 0.0}
    assert by_qid(h, recall_any(h, 3))["q2"] == 1.0
    assert by_qid(h, recall_all(h, 3)) == {"q1": 0.0, "q2": 1.0, "q4": 0.0}
    assert by_qid(h, recall_all(h, 4))["q1"] == 1.0
    # Both chunks covering s1 are relevant positions; precision divides by k.
    assert by_qid(h, precision(h, 2)) == {"q1": 1.0, "q2": 0.0, "q4": 0.0}
    assert by_qid(h, precision(h, 4))["q1"] == 3 / 4
    assert by_qid(h, precision(h, 10)) == {"q1": 3 / 10, "q2": 1 / 10, "q4": 0.0}
    assert by_qid(h, mrr(h)) == {"q1": 1.0, "q2": 1 / 3, "q4": 0.0}
    assert by_qid(h, mrr(h, 2))["q2"] == 0.0
    assert by_qid(h, mrr(h, 3))["q2"] == 1 / 3


def test_ndcg_counts_each_span_once(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run, evidence)
    # q1: position 0 first-covers s1 (2) and s2 (1); position 1 repeats s1 (no gain);
    # position 3 first-covers s3. Ideal: grades 2, 1, 1 one per position.
    dcg4 = 3.0 + 1.0 / log2(5)
    idcg4 = 2.0 + 1.0 / log2(3) + 1.0 / log2(4)
    got = by_qid(h, ndcg(h, 4))
    assert dcg4 / idcg4 > 1.0  # one chunk holding two spans beats the ideal...
    assert got["q1"] == 1.0  # ...so the score is clipped (documented)
    # One chunk covering two spans beats the one-span-per-position ideal (3/2): clipped to 1.
    assert by_qid(h, ndcg(h, 1))["q1"] == 1.0
    assert by_qid(h, ndcg(h, 3))["q2"] == pytest.approx((1 / log2(4)) / 1.0, abs=1e-12)
    assert by_qid(h, ndcg(h, 2))["q2"] == 0.0
    assert by_qid(h, ndcg(h, 10))["q4"] == 0.0


def test_alpha_ndcg_and_subtopic_recall(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run, evidence)
    # Subtopics t1 = {s1, s2}, t2 = {s3}. Position 0 covers t1 once (gain 1), position 1
    # covers t1 again (gain 0.5), position 3 covers t2 (gain 1).
    dcg = 1.0 + 0.5 / log2(3) + 1.0 / log2(5)
    # Ideal gains: t1 -> 1, 0.5; t2 -> 1; sorted 1, 1, 0.5.
    idcg = 1.0 + 1.0 / log2(3) + 0.5 / log2(4)
    assert by_qid(h, alpha_ndcg(h, 4))["q1"] == pytest.approx(min(1.0, dcg / idcg), abs=1e-12)
    # alpha = 1: only the first cover of a subtopic earns anything.
    dcg1 = 1.0 + 1.0 / log2(5)
    idcg1 = 1.0 + 1.0 / log2(3)
    assert by_qid(h, alpha_ndcg(h, 4, alpha=1.0))["q1"] == pytest.approx(
        min(1.0, dcg1 / idcg1), abs=1e-12
    )
    assert by_qid(h, alpha_ndcg(h, 4))["q4"] == 0.0
    assert by_qid(h, subtopic_recall(h, 1)) == {"q1": 0.5, "q2": 0.0, "q4": 0.0}
    assert by_qid(h, subtopic_recall(h, 4))["q1"] == 1.0

    # One subtopic per span: position 0 covers two new subtopics (gain 2).
    h2 = span_coverage(run, evidence.drop(columns="subtopic"))
    dcg2 = 2.0 + 0.5 / log2(3) + 1.0 / log2(5)
    idcg2 = 1.0 + 1.0 / log2(3) + 1.0 / log2(4)
    assert by_qid(h2, alpha_ndcg(h2, 4))["q1"] == pytest.approx(min(1.0, dcg2 / idcg2), abs=1e-12)
    np.testing.assert_array_equal(subtopic_recall(h2, 2), recall(h2, 2))


def test_budget_recall_stops_before_the_crossing_result(
    run: pd.DataFrame, evidence: pd.DataFrame
) -> None:
    h = span_coverage(run, evidence)
    # q1 tokens 100, 50, 30, 20 -> cumulative 100, 150, 180, 200.
    assert by_qid(h, budget_recall(h, None, 99))["q1"] == 0.0
    assert by_qid(h, budget_recall(h, None, 100))["q1"] == 2 / 3
    assert by_qid(h, budget_recall(h, None, 199))["q1"] == 2 / 3
    assert by_qid(h, budget_recall(h, None, 200))["q1"] == 1.0
    # q2 tokens 10 each; the covering result is third (cumulative 30).
    assert by_qid(h, budget_recall(h, None, 29))["q2"] == 0.0
    assert by_qid(h, budget_recall(h, None, 30))["q2"] == 1.0
    # Reading stops at the first result that does not fit, even if a later one would.
    tokens = np.array([[100, 500, 10, 10], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=float)
    assert by_qid(h, budget_recall(h, tokens, 150))["q1"] == 2 / 3
    assert by_qid(h, budget_recall(h, tokens, 620))["q1"] == 1.0


def test_evaluate_dataframe(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    names = ["recall@1", "success@1", "hit@3", "mrr", "ndcg@4", "budget_recall@150"]
    df = evaluate(run, evidence, names)
    assert list(df.columns) == names
    assert df.index.name == "qid"
    assert list(df.index) == ["q1", "q2", "q4"]
    assert df.attrs["no_evidence_qids"] == ["q3", "q5"]
    assert df.loc["q2", "hit@3"] == 1.0
    assert df.loc["q1", "budget_recall@150"] == 2 / 3
    # The excluded query does not drag the mean down; the retrieved-nothing one does.
    assert df["recall@1"].mean() == pytest.approx((2 / 3 + 0 + 0) / 3)
    kept = evaluate(run, evidence, ["recall@1"], include_no_evidence=True)
    assert list(kept.index) == ["q1", "q2", "q3", "q4", "q5"]
    assert kept.loc["q3", "recall@1"] == 0.0 and kept.attrs["no_evidence_qids"] == []


def test_run_ranks_by_score_and_closes_gaps(evidence: pd.DataFrame) -> None:
    by_rank = pd.DataFrame(
        {
            "qid": ["q2", "q2"],
            "rank": [7, 3],
            "path": ["c.md", "c.md"],
            "start_line": [1, 5],
            "end_line": [1, 6],
        }
    )
    h = span_coverage(by_rank, evidence, qids=["q2"])
    assert h.covers[0, :, 0].tolist() == [False, True]
    by_score = by_rank.drop(columns="rank").assign(score=[0.2, 0.9])
    h2 = span_coverage(by_score, evidence, qids=["q2"])
    np.testing.assert_array_equal(h.covers, h2.covers)
    with pytest.raises(ValueError, match="repeats"):
        span_coverage(by_rank.assign(rank=[0, 0]), evidence)
    with pytest.raises(ValueError, match="missing"):
        span_coverage(by_rank.drop(columns="path"), evidence)


def test_metric_names() -> None:
    spec = parse_metric("recall@6")
    assert (spec.kind, spec.k, spec.name) == ("recall", 6, "recall@6")
    assert parse_metric("success@3").kind == "recall_any"
    assert parse_metric("HIT@3").kind == "recall_any"
    assert parse_metric("mrr").k is None
    assert parse_metric("mrr@10").k == 10
    assert parse_metric("budget_recall@2000").k == 2000
    for name in METRIC_NAMES:
        parse_metric(name.replace("@k", "@5").replace("@T", "@100"))
    with pytest.raises(ValueError, match=r"unknown metric 'map@5'; valid: recall@k"):
        parse_metric("map@5")
    with pytest.raises(ValueError, match="must be >= 1, got 0"):
        parse_metric("ndcg@0")
    with pytest.raises(ValueError, match="must be >= 1, got -2"):
        parse_metric("recall@-2")
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_metric("recall")
    with pytest.raises(ValueError, match="integer"):
        parse_metric("precision@1.5")
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall(_random_hits(np.random.default_rng(0), 2, 3, 2), 0)


def test_budget_needs_tokens_and_valid_alpha(run: pd.DataFrame, evidence: pd.DataFrame) -> None:
    h = span_coverage(run.drop(columns="tokens"), evidence)
    with pytest.raises(ValueError, match="token counts"):
        evaluate_hits(h, ["budget_recall@100"])
    with pytest.raises(ValueError, match="shape"):
        budget_recall(h, np.ones((2, 2)), 10)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got 1.5"):
        alpha_ndcg(h, 3, alpha=1.5)


# --- a naive reference: loops over positions and spans ------------------------------


def _random_hits(rng: np.random.Generator, n_q: int, n_k: int, n_s: int) -> SpanHits:
    n_spans = rng.integers(0, n_s + 1, n_q)
    span_valid = np.arange(n_s)[None, :] < n_spans[:, None]
    n_pos = rng.integers(0, n_k + 1, n_q)
    pos_valid = np.arange(n_k)[None, :] < n_pos[:, None]
    covers = rng.random((n_q, n_k, n_s)) < rng.uniform(0.05, 0.6)
    grades = rng.integers(1, 4, (n_q, n_s))
    # Subtopic ids 0..T-1 in order of first appearance, as span_table numbers them.
    subtopic = np.full((n_q, n_s), -1)
    for q in range(n_q):
        raw = rng.integers(0, max(int(n_spans[q]), 1), int(n_spans[q]))
        subtopic[q, : n_spans[q]] = pd.factorize(raw)[0]
    tokens = rng.integers(0, 50, (n_q, n_k)).astype(float)
    return SpanHits(
        covers, span_valid, grades, subtopic, pos_valid, [f"q{i}" for i in range(n_q)],
        n_spans, tokens=tokens,
    )  # fmt: skip


def _reference(h: SpanHits, kind: str, k: int, alpha: float = 0.5) -> list[float]:
    out = []
    for q in range(h.n_queries):
        spans = [s for s in range(h.span_valid.shape[1]) if h.span_valid[q, s]]
        positions = [i for i in range(min(k, h.depth)) if h.pos_valid[q, i]]
        cov = {i: {s for s in spans if h.covers[q, i, s]} for i in positions}
        seen: set[int] = set()
        if not spans:
            out.append(0.0)
            continue
        if kind == "recall":
            out.append(len(set().union(*cov.values())) / len(spans))
        elif kind == "precision":
            out.append(sum(1 for i in positions if cov[i]) / k)
        elif kind == "mrr":
            firsts = [i for i in positions if cov[i]]
            out.append(1 / (firsts[0] + 1) if firsts else 0.0)
        elif kind == "ndcg":
            dcg = 0.0
            for i in positions:
                new = cov[i] - seen
                seen |= cov[i]
                dcg += sum(h.grades[q, s] for s in new) / math.log2(i + 2)
            ideal = sorted((h.grades[q, s] for s in spans), reverse=True)[:k]
            out.append(min(1.0, dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))))
        elif kind == "alpha_ndcg":
            times: dict[int, int] = {}
            dcg = 0.0
            for i in positions:
                topics = {int(h.subtopic[q, s]) for s in cov[i]}
                dcg += sum((1 - alpha) ** times.get(t, 0) for t in topics) / math.log2(i + 2)
                for t in topics:
                    times[t] = times.get(t, 0) + 1
            # Greedy ideal over virtual one-span results.
            left = {}
            for s in spans:
                left[int(h.subtopic[q, s])] = left.get(int(h.subtopic[q, s]), 0) + 1
            used: dict[int, int] = {}
            idcg = 0.0
            for i in range(min(k, len(spans))):
                t = max((t for t in left if left[t] > 0), key=lambda t: -used.get(t, 0))
                idcg += (1 - alpha) ** used.get(t, 0) / math.log2(i + 2)
                used[t] = used.get(t, 0) + 1
                left[t] -= 1
            out.append(min(1.0, dcg / idcg))
        elif kind == "subtopic_recall":
            topics = {int(h.subtopic[q, s]) for s in set().union(*cov.values())}
            out.append(len(topics) / len({int(h.subtopic[q, s]) for s in spans}))
        elif kind == "budget_recall":
            total, read = 0.0, set()
            for i in range(h.depth):
                if not h.pos_valid[q, i]:
                    continue
                total += h.tokens[q, i]
                if total > k:
                    break
                read |= {s for s in spans if h.covers[q, i, s]}
            out.append(len(read) / len(spans))
        else:
            raise AssertionError(kind)
    return out


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.tuples(st.integers(1, 6), st.integers(1, 7), st.integers(1, 5)),
    k=st.integers(1, 9),
    alpha=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
)
def test_vectorised_metrics_match_a_loop_reference(
    seed: int, shape: tuple[int, int, int], k: int, alpha: float
) -> None:
    h = _random_hits(np.random.default_rng(seed), *shape)
    np.testing.assert_allclose(recall(h, k), _reference(h, "recall", k), atol=1e-12)
    np.testing.assert_allclose(precision(h, k), _reference(h, "precision", k), atol=1e-12)
    np.testing.assert_allclose(mrr(h, k), _reference(h, "mrr", k), atol=1e-12)
    np.testing.assert_allclose(ndcg(h, k), _reference(h, "ndcg", k), atol=1e-12)
    np.testing.assert_allclose(
        alpha_ndcg(h, k, alpha), _reference(h, "alpha_ndcg", k, alpha), atol=1e-12
    )
    np.testing.assert_allclose(
        subtopic_recall(h, k), _reference(h, "subtopic_recall", k), atol=1e-12
    )
    np.testing.assert_allclose(
        budget_recall(h, None, 10 * k), _reference(h, "budget_recall", 10 * k), atol=1e-12
    )
    r = recall(h, k)
    np.testing.assert_array_equal(recall_any(h, k), (r > 0).astype(float))
    np.testing.assert_array_equal(recall_all(h, k), ((r == 1) & (h.n_spans > 0)).astype(float))
    np.testing.assert_array_equal(mrr(h), mrr(h, h.depth))


# --- the two paths give identical numbers ---------------------------------------------

SWEEP_METRICS = [
    "recall@1", "recall@3", "recall_any@2", "recall_all@4", "precision@3", "mrr", "mrr@2",
    "ndcg@3", "ndcg@10", "alpha_ndcg@5", "subtopic_recall@3", "budget_recall@40",
]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_run_frame_equals_candidate_arrays(seed: int) -> None:
    rng = np.random.default_rng(seed)
    paths = ["MEMORY.md", "memory/2024-01-02.md", "memory/2024-01-03.md"]
    qids = [f"q{i}" for i in range(int(rng.integers(1, 6)))]
    ev_rows = []
    for q in qids:
        for s in range(int(rng.integers(0, 4))):
            start = int(rng.integers(1, 30))
            ev_rows.append(
                (q, paths[rng.integers(0, 3)], start, start + int(rng.integers(0, 4)),
                 int(rng.integers(0, 3)), f"{q}-{s}", str(rng.integers(0, 2)))
            )  # fmt: skip
    evidence = pd.DataFrame(
        ev_rows,
        columns=["qid", "path", "start_line", "end_line", "grade", "span_id", "subtopic"],
    )
    n_c = int(rng.integers(1, 12))
    cand_path = rng.integers(0, 3, (len(qids), n_c))
    cand_start = rng.integers(1, 30, (len(qids), n_c))
    cand_end = cand_start + rng.integers(0, 8, (len(qids), n_c))
    cand_tokens = rng.integers(1, 30, (len(qids), n_c)).astype(float)
    n_k = int(rng.integers(1, n_c + 1))
    order = np.full((len(qids), n_k), -1)
    run_rows = []
    for qi, q in enumerate(qids):
        picked = rng.permutation(n_c)[: int(rng.integers(0, n_k + 1))]
        order[qi, : len(picked)] = picked
        for rank, c in enumerate(picked):
            run_rows.append(
                (q, rank, paths[cand_path[qi, c]], int(cand_start[qi, c]),
                 int(cand_end[qi, c]), cand_tokens[qi, c])
            )  # fmt: skip
    run = pd.DataFrame(
        run_rows, columns=["qid", "rank", "path", "start_line", "end_line", "tokens"]
    )
    frame = evaluate(run, evidence, SWEEP_METRICS, qids=qids)

    covers_c = candidate_coverage(cand_path, cand_start, cand_end, evidence, qids, paths)
    table = span_table(evidence, qids, paths)
    np.testing.assert_array_equal(
        covers_c, candidate_coverage(cand_path, cand_start, cand_end, table)
    )
    tokens = np.where(order >= 0, np.take_along_axis(cand_tokens, np.maximum(order, 0), 1), 0)
    h = hits_from_topk(covers_c, order, table, tokens=tokens)
    fast = evaluate_hits(h, SWEEP_METRICS)
    assert h.qids == list(frame.index)
    for name in SWEEP_METRICS:
        np.testing.assert_array_equal(fast[name], frame[name].to_numpy(), err_msg=name)
    # take_topk is the per-position gather of candidate coverage.
    topk = take_topk(covers_c, order)
    for qi in range(len(qids)):
        for pos in range(n_k):
            expect = covers_c[qi, order[qi, pos]] if order[qi, pos] >= 0 else False
            np.testing.assert_array_equal(topk[qi, pos], expect)


def test_take_topk_validates() -> None:
    with pytest.raises(ValueError, match="candidate index 5"):
        take_topk(np.zeros((1, 3, 2), bool), np.array([[0, 5]]))
    with pytest.raises(ValueError, match="same Q"):
        take_topk(np.zeros((2, 3, 2), bool), np.array([[0, 1]]))


def test_evaluate_hits_is_fast() -> None:
    h = _random_hits(np.random.default_rng(1), 1000, 10, 6)
    names = [
        "recall@5", "recall@10", "recall_any@5", "recall_all@10", "precision@5", "mrr",
        "ndcg@10", "alpha_ndcg@10", "subtopic_recall@10", "budget_recall@100",
    ]  # fmt: skip
    # A fresh SpanHits each time so cached arrays are rebuilt, as in a sweep.
    fields = {f: getattr(h, f) for f in ("covers", "span_valid", "grades", "subtopic",
                                          "pos_valid", "qids", "n_spans", "tokens")}  # fmt: skip
    best = min(timeit.repeat(lambda: evaluate_hits(SpanHits(**fields), names), number=5, repeat=3))
    # Generous bound for a shared 2-core machine; a Python loop over queries takes far longer.
    assert best / 5 < 0.05


# --- ranx differential (documents mapped one-to-one onto spans) ------------------------


@pytest.fixture(scope="module")
def ranx_evaluate():
    ranx = pytest.importorskip("ranx")
    # First use compiles ranx's numba kernels; do it once for the module.
    q = ranx.Qrels({"q": {"d": 1}})
    ranx.evaluate(q, ranx.Run({"q": {"d": 1.0}}), ["recall@1", "precision@1", "mrr@1",
                                                    "ndcg@1", "hit_rate@1"])  # fmt: skip
    return ranx


@pytest.mark.slow
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), k=st.sampled_from([1, 2, 3, 5, 10]))
def test_matches_ranx_when_chunks_are_documents(ranx_evaluate, data, k: int) -> None:
    ranx = ranx_evaluate
    n_q = data.draw(st.integers(1, 5))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    ev_rows, run_rows = [], []
    for qi in range(n_q):
        q = f"q{qi}"
        n_docs = data.draw(st.integers(1, 8))
        docs = [f"d{i}" for i in range(n_docs)]
        grades = data.draw(st.lists(st.integers(0, 3), min_size=n_docs, max_size=n_docs))
        if not any(grades):
            grades[0] = 1
        # ranx.Run cannot be built when every query retrieved nothing; keep q0 non-empty.
        n_ret = data.draw(st.integers(1 if qi == 0 else 0, n_docs))
        ranking = data.draw(st.permutations(docs))[:n_ret]
        qrels[q] = {d: g for d, g in zip(docs, grades, strict=True) if g > 0}
        run[q] = {d: float(len(ranking) - r) for r, d in enumerate(ranking)}
        # Each document is one file line; the span and the chunk are that line.
        ev_rows += [(q, f"{d}.md", 1, 1, g, d) for d, g in qrels[q].items()]
        run_rows += [(q, r, f"{d}.md", 1, 1) for r, d in enumerate(ranking)]
    evidence = pd.DataFrame(
        ev_rows, columns=["qid", "path", "start_line", "end_line", "grade", "span_id"]
    )
    run_df = pd.DataFrame(run_rows, columns=["qid", "rank", "path", "start_line", "end_line"])
    pairs = {
        f"recall@{k}": f"recall@{k}",
        f"precision@{k}": f"precision@{k}",
        f"mrr@{k}": f"mrr@{k}",
        f"ndcg@{k}": f"ndcg@{k}",
        f"recall_any@{k}": f"hit_rate@{k}",
    }
    ours = evaluate(run_df, evidence, list(pairs), qids=list(qrels))
    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(pairs.values()), return_mean=False)
    for mine, theirs in pairs.items():
        expect = [ranx_run.scores[theirs][q] for q in ours.index]
        np.testing.assert_allclose(ours[mine].to_numpy(), expect, atol=1e-9, err_msg=mine)
