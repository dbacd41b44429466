"""Weight sweeps sweep the weight they name, ties are reported, and the tuned system
is the one that was scored."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab, LabCandidates
from memlab.eval.sweep import SweepResult, SweepWarning, query_means, sweep
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import openclaw, openclaw_latest
from memlab.retrieval.fusion import clamp_weights
from tests.test_cli import run

W = [round(0.1 * i, 1) for i in range(11)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweep13")
    generate(SynthConfig(days=20, seed=3, queries_per_type=6), root / "corpus")
    return root / "corpus"


@pytest.fixture(scope="module")
def lab(corpus: Path) -> Lab:
    from memlab.datasets.base import load_folder

    return Lab(
        load_folder(corpus), embedder=HashingEmbedder(dimensions=64), unit="chunk", progress=False
    )


def quiet_sweep(*args, **kwargs) -> SweepResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SweepWarning)
        return sweep(*args, **kwargs)


# ------------------------------------------------------------------ item 1: coupling


def test_sweeping_vector_weight_moves_text_weight(lab: Lab) -> None:
    base = openclaw(min_score=0.0, keyword_mode="or")
    sw = quiet_sweep(lab, base, {"vector_weight": W}, ["recall@6"], train=0.5)
    c = sw.curve()
    assert list(c.columns[:4]) == [
        "vector_weight",
        "text_weight",
        "vector_weight_eff",
        "text_weight_eff",
    ]
    assert c["text_weight"].tolist() == [round(1 - w, 12) for w in W]
    # The pair sums to 1, so what the fusion applies is what was swept.
    np.testing.assert_array_equal(c["vector_weight_eff"], c["vector_weight"])
    assert sw.coupled == {"text_weight": "1 - vector_weight"} == sw.info["coupled"]
    assert sw.params == ["vector_weight"]
    best = sw.best()
    assert set(best["setting"]) == {"vector_weight", "text_weight"}
    assert best["setting"]["vector_weight"] + best["setting"]["text_weight"] == pytest.approx(1)
    assert sw.info["path"] == "fast"


def test_text_weight_alone_is_coupled_symmetrically_and_2d_is_kept(lab: Lab) -> None:
    base = openclaw(min_score=0.0, keyword_mode="or")
    sw = quiet_sweep(lab, base, {"text_weight": [0.2, 0.9]}, ["recall@6"])
    assert sw.curve()["vector_weight"].tolist() == [0.8, 0.1]
    assert sw.coupled == {"vector_weight": "1 - text_weight"}
    two = quiet_sweep(lab, base, {"vector_weight": [0.05, 0.7], "text_weight": [0.3]}, ["recall@6"])
    t = two.curve()
    assert two.coupled == {} and t["text_weight"].tolist() == [0.3, 0.3]
    # An explicit pair is renormalised by OpenClaw's clamp: 0.05/0.3 mixes as 1/7 : 6/7.
    assert (t["vector_weight_eff"].iloc[0], t["text_weight_eff"].iloc[0]) == clamp_weights(
        0.05, 0.3
    )
    assert t["vector_weight_eff"].iloc[0] == pytest.approx(1 / 7)
    # couple=False keeps the old meaning (the other weight fixed), visible in *_eff.
    old = quiet_sweep(lab, base, {"vector_weight": [0.05]}, ["recall@6"], couple=False)
    assert old.coupled == {} and old.curve()["text_weight_eff"].iloc[0] == pytest.approx(6 / 7)
    with pytest.raises(ValueError, match=r"text_weight = 1 - vector_weight"):
        sweep(lab, base, {"vector_weight": [0.5, 1.5]}, ["recall@6"])


@pytest.mark.slow
@pytest.mark.parametrize("path", ["fast", "stages"])
def test_tuned_pipeline_scores_exactly_the_held_out_value(lab: Lab, path: str) -> None:
    if path == "fast":
        base = openclaw(min_score=0.0, keyword_mode="or")
    else:  # MMR: one setting at a time, the score stages once
        base = openclaw_latest(min_score=0.0, keyword_mode="or")
    metrics = ["ndcg@10", "recall@6"]
    sw = quiet_sweep(lab, base, {"vector_weight": W}, metrics, train=0.5, seed=2)
    assert sw.info["path"] == path
    for m in metrics:
        best = sw.best(m)
        tuned = sw.pipeline(m)
        assert tuned.name == f"{base.name}-tuned"
        assert tuned == base.replace(**best["setting"], name=f"{base.name}-tuned")
        assert tuned.text_weight == best["setting"]["text_weight"]
        held = run_experiment([tuned], lab, metrics, queries=sw.test)
        # Its per-query held-out values are the sweep's, bit for bit, so their mean is too.
        again = held.wide(m)[tuned.name].reindex(sw.test).to_numpy()
        test_cols = [sw.qids.index(q) for q in sw.test]
        np.testing.assert_array_equal(again, sw.per_query[m][best["index"], test_cols])
        assert query_means(again[None, :], np.ones(len(again), bool))[0] == best["test_mean"]
        # The experiment table uses the same exact mean: the numbers are equal, not close.
        assert held.table.loc[tuned.name, m] == best["test_mean"]
        # The object scored (raised to the deepest metric's k, as run_experiment does).
        lc = lab.candidates_for([tuned.at_k(10)])[tuned.name]
        values = lc.score(sw.pipeline(m, as_scored=True), [m])[m]
        np.testing.assert_array_equal(values, sw.per_query[m][best["index"]])
        mask = np.isin(np.asarray(lc.qids, dtype=object), sw.test)
        assert query_means(values[None, :], mask)[0] == best["test_mean"]


def test_train_means_are_exact_means_of_the_systems_values(lab: Lab) -> None:
    base = openclaw(min_score=0.0, keyword_mode="or")
    sw = quiet_sweep(lab, base, {"vector_weight": [0.0, 0.35, 1.0]}, ["ndcg@10"], train=0.5)
    for _, row in sw.curve().iterrows():
        p = base.replace(vector_weight=row["vector_weight"], text_weight=row["text_weight"])
        res = run_experiment([p], lab, ["ndcg@10"], queries=sw.train)
        v = res.wide("ndcg@10")[p.name].to_numpy()
        assert math.fsum(v) / len(v) == row["mean"]
    # fsum / n does not depend on the order of the values (a pairwise sum does).
    rng = np.random.default_rng(0)
    x = rng.random((1, 257))
    assert query_means(x, np.ones(257, bool)) == query_means(x[:, ::-1], np.ones(257, bool))


# ------------------------------------------------------------------ item 2: ties


def test_flat_sweep_warns_and_keeps_the_base_setting(lab: Lab) -> None:
    base = openclaw(min_score=0.0)
    with pytest.warns(SweepWarning, match=r"mmr_lambda has no effect.*MMR is off"):
        sw = sweep(lab, base, {"mmr_lambda": [0.1, 0.4, 0.7, 1.0]}, ["recall@6"])
    best = sw.best()
    assert best["setting"] == {"mmr_lambda": 0.7}  # the base's own value, not the first
    assert len(best["tied"]) == 4 and best["spread"] == 0.0
    assert best["plateau"] == {"param": "mmr_lambda", "low": 0.1, "high": 1.0, "n": 4}
    assert "base's own setting" in best["rule"]
    assert sw.warnings and sw.info["warnings"] == sw.warnings
    # Without the base's value in the grid: the nearest in grid steps (0.7 lies between
    # 0.3 and 0.8, at 0.8 of the step), never silently the first.
    with pytest.warns(SweepWarning):
        sw2 = sweep(lab, base, {"mmr_lambda": [0.1, 0.2, 0.3, 0.8, 0.9]}, ["recall@6"])
    b2 = sw2.best()
    assert b2["setting"] == {"mmr_lambda": 0.8} and "nearest" in b2["rule"]


def test_weight_sweep_with_an_empty_and_keyword_leg_names_the_cause(lab: Lab) -> None:
    lc = lab.candidates(24)
    cs = lc.cs
    empty = replace(
        lc,
        cs=replace(
            cs,
            text_raw=np.full_like(cs.text_raw, np.nan),
            text_rank=np.full_like(cs.text_rank, -1),
        ),
    )
    assert isinstance(empty, LabCandidates)
    # Weights above 0 only scale the vector leg, so the ranking cannot change; at 0 every
    # score is 0 and the order is the tie rule's, which on some corpora changes recall.
    with pytest.warns(SweepWarning, match="vector_weight has no effect") as rec:
        sw = sweep(empty, openclaw(min_score=0.0), {"vector_weight": W[1:]}, ["recall@6"])
    text = str(rec[0].message)
    assert "the keyword leg found nothing" in text and "keyword_mode='or'" in text
    assert sw.warnings == [text]


def _result(values: list[float], grid: list[float], base: Pipeline) -> SweepResult:
    table = pd.DataFrame(
        {
            "vector_weight": grid,
            "text_weight": [round(1 - v, 12) for v in grid],
            "metric": "recall@6",
            "mean": values,
            "low": values,
            "high": values,
            "test_mean": np.nan,
        }
    )
    return SweepResult(
        table=table,
        params=["vector_weight"],
        metrics=["recall@6"],
        base=base,
        train=None,
        test=None,
        seconds=0.0,
        coupled={"text_weight": "1 - vector_weight"},
    )


def test_plateau_is_the_contiguous_tied_run_around_the_choice() -> None:
    grid = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    # 0.2-0.6 tie (up to summation noise), 1.0 ties too but is not contiguous.
    sw = _result([0.5, 0.6, 0.6 + 1e-13, 0.6, 0.55, 0.6], grid, openclaw())
    b = sw.best()
    # 0.7 is not in the grid: 0.6 and 0.8 are half a step away, 0.8 is not tied.
    assert b["setting"] == {"vector_weight": 0.6, "text_weight": 0.4}
    assert b["plateau"] == {"param": "vector_weight", "low": 0.2, "high": 0.6, "n": 3}
    assert [t["vector_weight"] for t in b["tied"]] == [0.2, 0.4, 0.6, 1.0]
    assert b["spread"] == pytest.approx(0.1) and "nearest" in b["rule"]
    assert b["mean"] == 0.6 and b["test_mean"] is None
    unique = _result([0.1, 0.3, 0.2], [0.0, 0.5, 1.0], openclaw()).best()
    assert unique["rule"] == "unique best" and unique["tied"] == [
        {"vector_weight": 0.5, "text_weight": 0.5}
    ]


def test_multi_parameter_sweep_has_no_plateau(lab: Lab) -> None:
    sw = quiet_sweep(
        lab,
        openclaw(keyword_mode="or"),
        {"vector_weight": [0.3, 0.7], "min_score": [0.0, 0.2]},
        ["recall@6"],
    )
    b = sw.best()
    assert b["plateau"] is None and set(b["setting"]) == {
        "vector_weight",
        "min_score",
        "text_weight",
    }


# ------------------------------------------------------------------ item 1: repr


def test_effective_weights_and_repr() -> None:
    p = openclaw(vector_weight=0.05, keyword_mode="or")
    assert p.effective_weights() == clamp_weights(0.05, 0.3)
    r = repr(p)
    assert r.startswith("Pipeline('openclaw', keyword_mode='or'")
    assert "vector_weight=0.05 (eff 0.143)" in r and "text_weight=0.3 (eff 0.857)" in r
    assert "max_results" not in r  # only what differs from the openclaw preset
    assert repr(openclaw()) == "Pipeline('openclaw', vector_weight=0.7, text_weight=0.3)"
    # RRF weights are not renormalised: no "eff" to show.
    assert "eff" not in repr(Pipeline(fusion="rrf", vector_weight=1.0, text_weight=1.0))
    c = Pipeline(name="context", neighbor_prev=0.25, vector_weight=0.5, text_weight=0.5)
    rc = repr(c)
    assert rc.startswith("Pipeline('context'") and "neighbor_prev=0.25" in rc
    assert "neighbor_next" not in rc and "(eff" not in rc
    assert math.isclose(sum(c.effective_weights()), 1.0)


# ------------------------------------------------------------------ the command line


def test_cli_sweep_prints_coupled_weights_ties_and_warnings(corpus: Path) -> None:
    args = ["sweep", "synthetic", "--path", str(corpus), "--embedder", "hashing"]
    p = run(*args, "--param", "vector_weight=0:1:0.25", "--set", "min_score=0", "--train", "0.5")
    out = p.stdout
    assert "coupled: text_weight = 1 - vector_weight" in out
    assert "text_weight_eff" in out and "ties:" in out and "spread over the grid" in out
    assert "chosen by:" in out and "held-out" in out
    flat = run(*args, "--param", "mmr_lambda=0.1,0.7,1", "--set", "min_score=0", "--json")
    js = json.loads(flat.stdout)
    assert js["best"]["setting"] == {"mmr_lambda": 0.7}
    assert js["best"]["plateau"]["n"] == 3 and len(js["best"]["tied"]) == 3
    assert js["warnings"] and "MMR is off" in js["warnings"][0]
    assert "warning: mmr_lambda has no effect" in flat.stderr
    bad = run(*args, "--param", "vector_weight=0:2:1", check=False)
    assert bad.returncode == 2 and "text_weight = 1 - vector_weight" in bad.stderr


def test_sweep_plot_marks_the_chosen_setting_and_reads_coupled_tables(lab: Lab) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from memlab import viz

    base = openclaw(min_score=0.0)
    sw = quiet_sweep(lab, base, {"mmr_lambda": [0.1, 0.4, 0.7, 1.0]}, ["recall@6"])
    stars = [ln for ln in viz.plot_sweep(sw).axes[0].get_lines() if ln.get_marker() == "*"]
    assert [list(s.get_xdata()) for s in stars] == [[0.7]]  # the tie rule's, not the first
    # A coupled table (text_weight and *_eff columns beside vector_weight) is one curve
    # per hue value, whether given as a SweepResult or as a bare (concatenated) table.
    a = quiet_sweep(lab, openclaw(min_score=0.0, keyword_mode="or"), {"vector_weight": W}, ["mrr"])
    both = pd.concat(
        [a.table.assign(min_score=0.0), a.table.assign(min_score=0.35)], ignore_index=True
    )
    fig = viz.plot_sweep(both, "mrr", x="vector_weight", hue="min_score")
    assert len([ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "o"]) == 2
    assert len(viz.plot_sweep(a.table).axes[0].collections) == 1
