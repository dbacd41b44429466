"""Session-level evaluation: units reduced to their files (``file_ranking``,
``file_hits``), RealMem's metrics (``recall_any``, ``recall_all``, ``ndcg_jk``) checked by
hand and against the benchmark's own scorer functions, re-typed here as the reference
(zhiyuan5986/RealMemBench, ``eval/compute_auto_metrics_for_realmem.py``), and the
query-blind baselines (``memlab.stages.prior``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from memlab.eval.metrics import evaluate_hits, ndcg, ndcg_jk
from memlab.eval.relevance import SpanHits, file_hits, file_ranking, span_table

# ---------------------------------------------------------------- the scorer, re-typed
# Verbatim logic of RealMem's scorer (np.asfarray is np.asarray(..., float) in numpy 2).


def ref_dcg(relevances, k):
    relevances = np.asarray(relevances, dtype=float)[:k]
    if relevances.size:
        return relevances[0] + np.sum(relevances[1:] / np.log2(np.arange(2, relevances.size + 1)))
    return 0.0


def ref_ndcg(rankings, correct_docs, corpus_ids, k=10):
    relevances = [1 if doc_id in correct_docs else 0 for doc_id in corpus_ids]
    sorted_relevances = []
    for idx in rankings[:k]:
        if idx < len(relevances):
            sorted_relevances.append(relevances[idx])
        else:
            sorted_relevances.append(0)
    ideal_relevance = sorted(relevances, reverse=True)
    ideal_dcg = ref_dcg(ideal_relevance, k)
    actual_dcg = ref_dcg(sorted_relevances, k)
    if ideal_dcg == 0:
        return 0.0
    return actual_dcg / ideal_dcg


def ref_evaluate_retrieval(rankings, correct_docs, corpus_ids, k=10):
    recalled_docs = set()
    for idx in rankings[:k]:
        if idx < len(corpus_ids):
            recalled_docs.add(corpus_ids[idx])
    recall_any = float(any(doc in recalled_docs for doc in correct_docs))
    recall_all = float(all(doc in recalled_docs for doc in correct_docs))
    ndcg_score = ref_ndcg(rankings, correct_docs, corpus_ids, k)
    return recall_any, recall_all, ndcg_score


# ----------------------------------------------------------------------------- helpers


def hits(ranked: list[list[int]], gold: list[list[int]]) -> SpanHits:
    """SpanHits of rankings of documents (ints, no repeats) against gold documents: one
    span per gold document, a result covers its own document's span."""
    k = max(len(r) for r in ranked)
    s = max(len(g) for g in gold)
    docs = np.full((len(ranked), k), -1)
    for i, r in enumerate(ranked):
        docs[i, : len(r)] = r
    g = np.full((len(gold), s), -2)
    for i, gg in enumerate(gold):
        g[i, : len(gg)] = gg
    valid = g >= 0
    return SpanHits(
        covers=(docs[:, :, None] == g[:, None, :]) & valid[:, None, :],
        span_valid=valid,
        grades=valid.astype(int),
        subtopic=np.where(valid, np.arange(s), -1),
        pos_valid=docs >= 0,
        qids=[str(i) for i in range(len(ranked))],
        n_spans=valid.sum(axis=1),
    )


def test_ndcg_jk_by_hand() -> None:
    # Gold {a, b}; ranking (x, a, y, b): DCG = 0 + 1/log2(2) + 0 + 1/log2(4) = 1.5;
    # IDCG = 1 + 1/log2(2) = 2 (ranks 1 and 2 both undiscounted) → 0.75.
    h = hits([[9, 1, 8, 2]], [[1, 2]])
    assert ndcg_jk(h, 10)[0] == pytest.approx(0.75)
    # The standard discount gives (1/log2 3 + 1/log2 5) / (1 + 1/log2 3).
    std = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg(h, 10)[0] == pytest.approx(std)
    # Ranks 1 and 2 are worth the same: gold at rank 2 alone is a perfect one-gold query.
    assert ndcg_jk(hits([[9, 1]], [[1]]), 10)[0] == pytest.approx(1.0)
    # k cuts both: at k=1 gold at rank 2 earns nothing; IDCG over min(|gold|, k) ones.
    assert ndcg_jk(h, 1)[0] == 0.0
    assert ndcg_jk(hits([[1, 9, 9 + 1]], [[1, 2, 3]]), 2)[0] == pytest.approx(0.5)
    # Third rank: 1/log2(3).
    assert ndcg_jk(hits([[7, 8, 1]], [[1]]), 10)[0] == pytest.approx(1 / math.log2(3))
    v = evaluate_hits(h, ["recall_any@1", "recall_any@2", "recall_all@3", "recall_all@4"])
    assert [float(v[m][0]) for m in v] == [0.0, 1.0, 0.0, 1.0]


def test_metrics_equal_the_scorer_on_random_rankings() -> None:
    rng = np.random.default_rng(7)
    corpus = [f"S{i}" for i in range(40)]
    ranked, gold = [], []
    for _ in range(300):
        n = int(rng.integers(1, 25))
        ranked.append(rng.permutation(40)[:n].tolist())
        gold.append(sorted(rng.choice(40, int(rng.integers(1, 8)), replace=False).tolist()))
    h = hits(ranked, gold)
    for k in (1, 2, 5, 10, 20):
        got = evaluate_hits(h, [f"recall_any@{k}", f"recall_all@{k}", f"ndcg_jk@{k}"])
        want = np.array(
            [
                ref_evaluate_retrieval(r, [corpus[x] for x in g], corpus, k)
                for r, g in zip(ranked, gold, strict=True)
            ]
        )
        np.testing.assert_array_equal(got[f"recall_any@{k}"], want[:, 0])
        np.testing.assert_array_equal(got[f"recall_all@{k}"], want[:, 1])
        np.testing.assert_allclose(got[f"ndcg_jk@{k}"], want[:, 2], rtol=0, atol=1e-12)


def test_file_ranking_keeps_each_files_best_rank() -> None:
    # candidates' files: col0→f2, col1→f0, col2→f2, col3→f1, col4→padding
    cand_path = np.array([[2, 0, 2, 1, -1], [1, 1, 1, 0, -1]])
    order = np.array([[2, 0, 1, 3, -1], [0, 1, 2, -1, -1]])
    assert file_ranking(order, cand_path).tolist() == [[2, 0, 1], [1, -1, -1]]
    assert file_ranking(np.full((2, 3), -1), cand_path).tolist() == [[-1], [-1]]


def test_file_hits_score_files_against_evidence_files() -> None:
    ev = pd.DataFrame(
        {
            "qid": ["a", "a", "a", "b"],
            "path": ["f1", "f1", "f3", "f0"],  # two spans in f1: one evidence file
            "start_line": [1, 5, 1, 1],
            "end_line": [2, 6, 9, 3],
        }
    )
    table = span_table(ev, ["a", "b", "c"], ["f0", "f1", "f2", "f3"])
    cand_path = np.array([[2, 1, 1, 3], [0, 2, -1, -1], [0, 1, -1, -1]])
    order = np.array([[0, 1, 2, 3], [1, 0, -1, -1], [0, 1, -1, -1]])
    h = file_hits(order, cand_path, table)
    assert h.qids == ["a", "b"] and h.no_evidence_qids == ["c"]
    assert h.n_spans.tolist() == [2, 1]
    v = evaluate_hits(h, ["recall@2", "recall_any@1", "recall_all@3", "ndcg_jk@3"])
    # a: files (f2, f1, f3): f1 at rank 2, f3 at rank 3.  b: (f2, f0).
    assert v["recall@2"].tolist() == [0.5, 1.0]
    assert v["recall_any@1"].tolist() == [0.0, 0.0]
    assert v["recall_all@3"].tolist() == [1.0, 1.0]
    assert v["ndcg_jk@3"][0] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert v["ndcg_jk@3"][1] == pytest.approx(1.0)


# ---------------------------------------------------------------------- prior stage


def test_recency_and_random_orders(tmp_path) -> None:
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.pipeline.presets import preset
    from memlab.stages.prior import random_key
    from memlab.store import MemoryIndex
    from tests.conftest import write

    for i, day in enumerate(("2026-01-01", "2026-01-03", "2026-01-02")):
        write(tmp_path, f"memory/{day}.md", f"# s{i}\nUser: hello {i}\nAssistant: ok\n")
    write(tmp_path, "memory/2026-01-03-0100.md", "# late\nUser: late night\n")
    write(tmp_path, "MEMORY.md", "- evergreen\n")
    idx = MemoryIndex(
        tmp_path,
        db_path=tmp_path / "i.sqlite",
        embedder=HashingEmbedder(dimensions=32),
        chunker=ChunkerConfig("line"),
    )
    idx.sync()
    rec = preset("recency", max_results=50)
    out = rec.run(rec.retrieve(idx, ["anything"], qids=["q"]))
    files = list(dict.fromkeys(out["path"]))
    assert files == [
        "memory/2026-01-03-0100.md",
        "memory/2026-01-03.md",
        "memory/2026-01-02.md",
        "memory/2026-01-01.md",
    ]  # newest first; MEMORY.md has no time: not ranked
    # With a cut-off, only the past, still newest first.
    cut = [float(pd.Timestamp("2026-01-03", tz="UTC").timestamp())]
    past = rec.run(rec.retrieve(idx, ["anything"], qids=["q"], cutoffs=cut))
    assert list(dict.fromkeys(past["path"])) == ["memory/2026-01-02.md", "memory/2026-01-01.md"]
    rnd = preset("random", max_results=50)
    a = rnd.run(rnd.retrieve(idx, ["x"], qids=["q"]))
    b = rnd.run(rnd.retrieve(idx, ["y"], qids=["q"]))
    assert a[["path", "score"]].equals(b[["path", "score"]])  # blind to the query text
    by_file = a.groupby("path")["score"].nunique()
    assert (by_file == 1).all() and len(by_file) == 5  # one key per file
    assert a.loc[a["path"] == "MEMORY.md", "score"].iloc[0] == random_key(0, "q", "0:MEMORY.md")
    c = rnd.replace(rank_seed=1).run(rnd.retrieve(idx, ["x"], qids=["q"]))
    assert not a["score"].equals(c["score"])
    # Their every-unit candidate set is their own: shared, its depth would re-order the
    # lab baselines' equal scores (which keep the vector-first insertion order).
    keys = {n: preset(n).retrieval_spec().candidate_key for n in ("recency", "random")}
    for base in ("wsum", "vector", "bm25", "rrf", "openclaw"):
        assert preset(base).retrieval_spec().candidate_key not in keys.values()
    with pytest.raises(ValueError, match="rank_by"):
        preset("bm25", rank_by="oldest")
    with pytest.raises(ValueError, match="rank_by"):
        preset("memlab-best-chunk", rank_by="recency")


def test_file_level_lab_sweep_and_experiment_agree(tmp_path) -> None:
    """A sweep on a file-level lab scores files (the general path), as run_experiment does;
    and file-level scores differ from unit-level ones on the same candidates."""
    from memlab.datasets.realmem import load_realmem
    from memlab.embed import HashingEmbedder
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.sweep import sweep
    from memlab.pipeline.presets import preset
    from tests.conftest import REPO

    ds = load_realmem(REPO / "tests" / "data" / "realmem", tmp_path / "rm")
    emb = HashingEmbedder(dimensions=64)
    lab = Lab(ds, embedder=emb, unit="turn", level="file", index_dir=tmp_path / "i")
    metrics = ["recall_any@1", "ndcg_jk@2"]
    base = preset("wsum")
    res = run_experiment([base], lab, metrics)
    assert res.info["level"] == "file"
    sw = sweep(lab, base, {"vector_weight": [0.7]}, metrics)
    for m in metrics:
        assert sw.table.loc[sw.table["metric"] == m, "mean"].iloc[0] == pytest.approx(
            res.table.loc["wsum", m]
        )
    unit = Lab(ds, embedder=emb, unit="turn", level="unit", index_dir=tmp_path / "i")
    lc_file = lab.candidates_for_system(base.at_k(2))
    lc_unit = unit.candidates_for_system(base.at_k(2))
    assert (lc_file.level, lc_unit.level) == ("file", "unit")
    # At unit level a ranking's top 2 may hold one session twice; at file level it cannot.
    ranking = lc_file.rank(base.at_k(2))
    assert ranking.columns.shape[1] >= lc_unit.rank(base.at_k(2)).columns.shape[1]
