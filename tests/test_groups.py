"""Figures per group (``memlab.eval.groups``): each group's figure and the leader's lead in
it, in ``memlab eval`` and ``memlab sweep``; the numbers are the per-query values'
means, recomputed here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from memlab.eval.groups import experiment_groups, group_table, lead_summary, sweep_groups
from tests.conftest import cli


def test_group_table_and_leads_on_hand_made_values() -> None:
    pq = pd.DataFrame(
        [
            ("a", "q1", "m", 1.0), ("a", "q2", "m", 0.0), ("a", "q3", "m", 1.0),
            ("b", "q1", "m", 0.0), ("b", "q2", "m", 1.0), ("b", "q3", "m", 0.5),
            ("b", "q4", "m", math.nan), ("a", "q4", "m", math.nan),
        ],
        columns=["system", "qid", "metric", "value"],
    )  # fmt: skip
    groups = {"q1": "g1", "q2": "g1", "q3": "g2", "q4": "g2"}
    t = group_table(pq, groups, "m", ["a", "b"])
    assert t.loc["g1", "n"] == 2 and t.loc["g2", "n"] == 1  # q4 has no value
    assert t.loc["g1", "a"] == 0.5 and t.loc["g2", "a"] == 1.0 and t.loc["g2", "b"] == 0.5
    leads = t["a"] - t["b"]
    assert lead_summary(leads, "a") == (
        "a leads in 1 of 2 groups; lead from +0.000 (g1) to +0.500 (g2), spread 0.500"
    )


@pytest.fixture(scope="module")
def two_groups(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder dataset of two synthetic workspaces (two groups)."""
    from memlab.datasets.synthetic import SynthConfig, generate

    root = tmp_path_factory.mktemp("groups")
    queries, evidence, spaces = [], [], {}
    for i, seed in enumerate((1, 2)):
        ds = generate(SynthConfig(days=6, seed=seed, queries_per_type=3), root / f"c{i}")
        spaces[f"g{i}"] = f"c{i}/workspace"
        q = ds.queries.assign(group=f"g{i}", qid=lambda d, i=i: f"g{i}-" + d["qid"])
        e = ds.evidence.assign(qid=lambda d, i=i: f"g{i}-" + d["qid"])
        queries += q.to_dict("records")
        evidence += e.to_dict("records")
    (root / "dataset.json").write_text(json.dumps({"name": "two", "workspaces": spaces}))
    for name, rows in (("queries.jsonl", queries), ("evidence.jsonl", evidence)):
        (root / name).write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    return root


def test_experiment_and_sweep_spread_equal_their_per_query_means(two_groups: Path) -> None:
    from memlab.datasets.base import load_folder
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.sweep import sweep
    from memlab.pipeline.presets import preset

    ds = load_folder(two_groups)
    lab = Lab(ds, embedder="hashing", unit="turn", index_dir=two_groups / "idx")
    groups = dict(zip(ds.queries["qid"], ds.queries["group"], strict=True))
    res = run_experiment([preset("bm25"), preset("vector"), preset("wsum")], lab, ["recall@10"])
    table, text = experiment_groups(res, groups, "recall@10")
    leader = str(res.table["recall@10"].idxmax())
    pq = res.per_query
    for g in ("g0", "g1"):
        mine = pq[pq["qid"].map(groups) == g]
        means = mine.groupby("system")["value"].mean()
        assert table.loc[g, leader] == pytest.approx(means[leader])
        others = means.drop(leader).max()
        assert table.loc[g, "lead"] == pytest.approx(means[leader] - others)
    assert "by group (2 groups)" in text and f"{leader} leads in" in text

    sw = sweep(lab, preset("wsum"), {"vector_weight": [0.0, 0.5, 0.7, 1.0]}, ["recall@10"])
    table, text = sweep_groups(sw, groups)
    chosen = sw.best()["index"]
    for g in ("g0", "g1"):
        cols = [i for i, q in enumerate(sw.qids) if groups[q] == g]
        assert table.loc[g, "chosen"] == pytest.approx(
            sw.per_query["recall@10"][chosen, cols].mean()
        )
        assert table.loc[g, "base"] == pytest.approx(sw.per_query["recall@10"][2, cols].mean())
    assert "against the base's vector_weight=0.7" in text


def test_one_group_prints_no_spread(two_groups: Path) -> None:
    from memlab.datasets.base import load_folder
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    ds = load_folder(two_groups / "c0")
    lab = Lab(ds, embedder="hashing", unit="turn", index_dir=two_groups / "idx0")
    res = run_experiment([preset("bm25"), preset("vector")], lab, ["recall@10"])
    assert experiment_groups(res, dict.fromkeys(ds.queries["qid"], "default"), "recall@10") is None


def test_eval_and_sweep_print_the_spread(two_groups: Path) -> None:
    args = ("--path", str(two_groups), "--embedder", "hashing", "--unit", "turn")
    code, out, err = cli(
        "eval", "folder", *args, "--preset", "bm25,vector", "--metrics", "recall@10"
    )
    assert code == 0, err
    assert "recall@10 by group (2 groups)" in out and "leads in" in out
    code, out, err = cli(
        "sweep", "folder", *args, "--preset", "wsum", "--param", "vector_weight=0:1:0.5",
        "--metric", "recall@10",
    )  # fmt: skip
    assert code == 0, err
    assert "recall@10 by group (2 groups, every scored query)" in out and "own best" in out
