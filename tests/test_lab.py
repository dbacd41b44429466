"""The lab end to end on generated data: experiments, sweeps, splits, saved results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab
from memlab.eval.metrics import evaluate
from memlab.eval.sweep import kfold, parse_range, split_queries, sweep
from memlab.pipeline.presets import preset
from tests.conftest import write

METRICS = ["recall@6", "ndcg@10", "mrr", "recall@10"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Lab:
    root = tmp_path_factory.mktemp("synth")
    ds = generate(SynthConfig(days=20, seed=3, queries_per_type=6), root / "corpus")
    return Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="chunk", progress=False)


def test_array_path_equals_dataframe_path(lab: Lab) -> None:
    p = preset("openclaw", min_score=0.0)
    res = run_experiment([p], lab, METRICS, keep_runs=True)
    per_q = res.wide("recall@6")[p.name]
    frame = evaluate(res.runs, lab.dataset.evidence, METRICS)
    for m in METRICS:
        got = res.wide(m)[p.name].sort_index()
        np.testing.assert_allclose(
            got.to_numpy(), frame[m].reindex(got.index).to_numpy(), atol=1e-12
        )
    assert len(per_q) == len(lab.dataset.queries)


def test_experiment_table_and_tests(lab: Lab) -> None:
    systems = [preset("bm25"), preset("vector"), preset("openclaw"), preset("rrf")]
    res = run_experiment(systems, lab, METRICS, baseline="openclaw")
    t = res.table
    assert list(t.index) == ["bm25", "vector", "openclaw", "rrf"]
    for m in METRICS:
        for s in ("bm25", "vector", "rrf"):
            a = res.wide(m)[s].to_numpy()
            b = res.wide(m)["openclaw"].to_numpy()
            p = 1.0 if np.allclose(a, b) else stats.ttest_rel(a, b).pvalue
            assert t.loc[s, f"{m} p"] == pytest.approx(p, rel=1e-9, abs=1e-12)
        # Holm: adjusted p-values are never below the raw ones
        assert (t[f"{m} p_adj"].dropna() >= t[f"{m} p"].dropna() - 1e-15).all()
    assert "+/-" in res.format()
    cat = res.by_category("recall@6")
    assert set(cat.index) == set(lab.dataset.queries["category"])
    js = res.to_json()
    assert js[0]["name"] == "bm25" and "vs_baseline" in js[0] and "vs_baseline" not in js[2]


def test_scoring_at_k_raises_results_unless_pinned(lab: Lab) -> None:
    p = preset("openclaw", min_score=0.0)
    raised = run_experiment([p], lab, ["recall@10"], keep_runs=True)
    pinned = run_experiment([p], lab, ["recall@10"], keep_runs=True, pinned=True)
    assert raised.runs.groupby("qid").size().max() == 10
    assert pinned.runs.groupby("qid").size().max() == 6
    assert raised.table.loc[p.name, "recall@10"] >= pinned.table.loc[p.name, "recall@10"]


def test_sweep_equals_settings_run_one_by_one(lab: Lab) -> None:
    base = preset("openclaw", min_score=0.0)
    weights = [0.0, 0.3, 0.7, 1.0]
    sw = sweep(lab, base, {"vector_weight": weights}, ["recall@6", "ndcg@10"])
    for w in weights:
        # Sweeping vector_weight alone moves text_weight = 1 - vector_weight with it.
        tuned = base.replace(vector_weight=w, text_weight=round(1 - w, 12))
        one = run_experiment([tuned], lab, ["recall@6", "ndcg@10"])
        row = sw.table[(sw.table["vector_weight"] == w)].set_index("metric")
        for m in ("recall@6", "ndcg@10"):
            assert row.loc[m, "mean"] == pytest.approx(one.table.iloc[0][m], abs=1e-12)
            assert row.loc[m, "low"] <= row.loc[m, "mean"] <= row.loc[m, "high"]
    best = sw.best("recall@6")
    curve = sw.curve("recall@6")
    assert best["train_mean" if sw.train else "mean"] == curve["mean"].max()


def test_sweep_train_test_split_reports_held_out(lab: Lab) -> None:
    base = preset("openclaw", min_score=0.0)
    sw = sweep(lab, base, {"vector_weight": [0.2, 0.8]}, ["recall@6"], train=0.5, seed=1)
    assert sw.train and sw.test and not set(sw.train) & set(sw.test)
    best = sw.best()
    tuned = base.replace(**best["setting"])
    held = run_experiment([tuned], lab, ["recall@6"], queries=sw.test)
    assert best["test_mean"] == pytest.approx(held.table.iloc[0]["recall@6"], abs=1e-12)
    assert "train" in best["tuned_on"]


def test_split_and_kfold_helpers() -> None:
    qids = [f"q{i}" for i in range(20)]
    strata = ["a"] * 10 + ["b"] * 10
    tr, te = split_queries(qids, 0.5, seed=0, strata=strata)
    assert len(tr) == 10 and sorted(tr + te) == sorted(qids)
    assert sum(q in tr for q in qids[:10]) == 5
    assert split_queries(qids, 0.5, seed=0, strata=strata) == (tr, te)
    folds = kfold(qids, 4, seed=0)
    assert sorted(q for _, test in folds for q in test) == sorted(qids)
    assert parse_range("0:1:0.25") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_range("10,60") == [10.0, 60.0]
    with pytest.raises(ValueError, match="bad range"):
        parse_range("1:0:0.1")


def test_multi_group_queries_only_see_their_workspace(tmp_path: Path) -> None:
    # Two workspaces share a relative path; evidence and candidates must not mix.
    for g, fact in (("a", "the vault code is 1234"), ("b", "the vault code is 9876")):
        write(tmp_path / g, "memory/2026-01-01.md", f"- {fact}\n- filler line about cats\n")
    queries = pd.DataFrame(
        [
            {"qid": "qa", "query": "vault code", "group": "a"},
            {"qid": "qb", "query": "vault code", "group": "b"},
        ]
    )
    evidence = pd.DataFrame(
        [
            {"qid": "qa", "path": "memory/2026-01-01.md", "start_line": 1, "end_line": 1},
            {"qid": "qb", "path": "memory/2026-01-01.md", "start_line": 1, "end_line": 1},
        ]
    )
    ds = Dataset("two", tmp_path, {"a": tmp_path / "a", "b": tmp_path / "b"}, queries, evidence)
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=32), unit="turn", progress=False)
    res = run_experiment([preset("bm25")], lab, ["recall@1"], keep_runs=True)
    assert res.table.loc["bm25", "recall@1"] == 1.0
    lc = lab.candidates(6, keyword_mode="or")
    texts = {q: lc.cs.texts(lc.cs.pos[i][lc.cs.pos[i] >= 0]) for i, q in enumerate(lc.qids)}
    assert all("1234" not in t for t in texts["qb"]) and all("9876" not in t for t in texts["qa"])


def test_save_writes_reproducible_record(lab: Lab, tmp_path: Path) -> None:
    res = run_experiment(
        [preset("bm25"), preset("openclaw")], lab, ["recall@6"], baseline="openclaw", keep_runs=True
    )
    out = res.save(tmp_path / "exp")
    meta = json.loads((out / "experiment.json").read_text())
    assert meta["dataset_fingerprint"] == lab.dataset.fingerprint
    assert meta["memlab_version"] and meta["systems"][0]["settings"]["name"] == "bm25"
    lines = (out / "runs.trec").read_text().splitlines()
    _q, q0, _doc, rank, _score, system = lines[0].split()
    assert q0 == "Q0" and int(rank) == 1 and system in ("bm25", "openclaw")
    assert len(pd.read_csv(out / "per_query.csv")) == 2 * res.table.loc["bm25", "n"]


def test_bad_inputs(lab: Lab) -> None:
    with pytest.raises(ValueError, match="baseline"):
        run_experiment([preset("bm25")], lab, ["recall@6"], baseline="nope")
    with pytest.raises(ValueError, match="unique"):
        run_experiment([preset("bm25"), preset("bm25")], lab, ["recall@6"])
    with pytest.raises(ValueError):
        run_experiment([preset("bm25")], lab, ["recall@0"])
    with pytest.raises(ValueError, match="unknown pipeline parameter"):
        sweep(lab, preset("openclaw"), {"vectorweight": [0.1]}, ["recall@6"])


def test_format_shows_candidate_generation_and_effective_weights(lab: Lab) -> None:
    systems = [
        preset("vector"),
        preset("bm25"),
        preset("openclaw"),
        preset("openclaw", vector_weight=1.0, text_weight=1.0).replace(name="wsum-1/1"),
        preset("rrf"),
    ]
    res = run_experiment(systems, lab, ["recall@6"], baseline="openclaw")
    lines = res.format().splitlines()
    assert lines[0].split()[:6] == ["system", "kw", "depth", "fusion", "weights", "min"]
    row = {ln.split()[0]: ln.split() for ln in lines[2:7]}
    # scored at k = 6: depth = 6 × 4 per leg; wsum weights renormalised, RRF's not
    assert row["vector"][1:5] == ["-", "24", "vector", "-"]
    assert row["bm25"][1:5] == ["or", "24", "keyword", "-"]
    assert row["openclaw"][1:6] == ["and", "24", "wsum", "0.70/0.30", "0.35"]
    assert row["wsum-1/1"][4] == "0.50/0.50"
    assert row["rrf"][1:6] == ["or", "24", "rrf", "1.00/1.00", "none"]  # 0 cuts nothing there
    assert "kw" not in res.format(settings=False).splitlines()[0].split()
    js = {s["name"]: s["candidates"] for s in res.to_json()}
    assert js["wsum-1/1"] == {
        "keyword_mode": "and",
        "depth": 24,
        "fusion": "wsum",
        "weights": [0.5, 0.5],
        "min_score": 0.35,
        "best_line": None,
    }
    assert js["vector"]["keyword_mode"] is None and js["vector"]["weights"] is None


def test_identical_rankings_are_judged_as_deep_as_the_metrics_read(lab: Lab) -> None:
    """Two systems that return the same top k (k = the deepest metric) are one system as
    measured, however far each list goes below it; a metric reading deeper tells them apart."""
    short = preset("vector", max_results=6).replace(name="vector-6")
    deep = preset("vector", max_results=40).replace(name="vector-40")
    res = run_experiment([short, deep], lab, ["recall@6", "mrr@6"], baseline="vector-6")
    assert res.info["identical_rankings"] == [["vector-6", "vector-40"]]
    # pinned: vector-6 keeps its 6 results where recall@20 reads 20
    res = run_experiment(
        [short, deep], lab, ["recall@6", "recall@20"], baseline="vector-6", pinned=True
    )
    assert res.info["identical_rankings"] == []


def test_top_files_are_the_first_k_distinct_files_in_rank_order() -> None:
    from memlab.eval.depth import top_files

    units = np.array([["g/a", "g/a", "g/b", "", "g/c"], ["g/b", "", "", "", ""]], dtype=object)
    assert top_files(units, 2).tolist() == [["g/a", "g/b"], ["g/b", ""]]
    assert top_files(units, 4).tolist() == [["g/a", "g/b", "g/c", ""], ["g/b", "", "", ""]]


def test_identical_rankings_are_detected_and_marked(lab: Lab) -> None:
    """One system under two names is flagged, also across candidate sets (the vector leg
    alone ranks the same chunks whatever the keyword query)."""
    systems = [
        preset("vector"),
        preset("bm25"),
        preset("rrf"),
        preset("rrf", rrf_k=60.0).replace(name="rrf-again"),
        preset("vector", keyword_mode="and").replace(name="vector-and"),
    ]
    res = run_experiment(systems, lab, ["recall@6", "mrr"], baseline="bm25")
    assert res.info["identical_rankings"] == [["vector", "vector-and"], ["rrf", "rrf-again"]]
    text = res.format()
    rows = {ln.split()[0]: ln for ln in text.splitlines()[2:7]}
    assert rows["rrf-again"].rstrip().endswith("= rrf: same ranking")
    assert rows["vector-and"].rstrip().endswith("= vector: same ranking")
    assert "same ranking" not in rows["rrf"] and "same ranking" not in rows["bm25"]
    assert "one system under two names" in text
    js = {s["name"]: s["same_ranking_as"] for s in res.to_json()}
    assert js == {
        "vector": None,
        "bm25": None,
        "rrf": None,
        "rrf-again": "rrf",
        "vector-and": "vector",
    }
    # distinct systems: nothing flagged, no note column
    res2 = run_experiment(systems[:3], lab, ["recall@6"])
    assert res2.info["identical_rankings"] == []
    assert "note" not in res2.format().splitlines()[0]


def test_score_of_a_given_ranking_equals_the_pipelines_own(lab: Lab) -> None:
    p = preset("bm25")
    lc = lab.candidates_for_system(p)
    own = lc.score(p, ["recall@6"])
    given = lc.score(None, ["recall@6"], ranking=p.rank(lc.cs))
    np.testing.assert_array_equal(own["recall@6"], given["recall@6"])
    with pytest.raises(ValueError, match="score needs a pipeline or a ranking"):
        lc.score(None, ["recall@6"])
