"""Reporting a small sample can trust: a 95 % bootstrap CI on every eval row (Hypothesis:
it covers the true mean at about the stated rate), judged@k (ir-measures' Judged@k as the
reference) with its warning, the ceiling warning, the "as deployed" row and the same-day-log
questions left out on a harvested folder, and the tables as Markdown, LaTeX and CSV."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.eval.caveats import ceiling_warnings
from memlab.eval.judged import judged_at_k
from memlab.eval.summary import summary_table
from tests.conftest import cli
from tests.example_agent import harvest_example

HASH = ("--embedder", "hashing")


@settings(max_examples=6, deadline=None)
@given(
    p=st.floats(0.15, 0.85),
    n=st.integers(30, 80),
    kind=st.sampled_from(["bernoulli", "beta"]),
    seed=st.integers(0, 2**16),
)
def test_table_cis_cover_the_true_mean_at_the_stated_rate(
    p: float, n: int, kind: str, seed: int
) -> None:
    # 400 simulated systems, each scored on n questions drawn from a known distribution:
    # about 95 % of their table CIs hold the true mean.
    rng = np.random.default_rng(seed)
    reps = 400
    if kind == "bernoulli":  # a success@k-like 0/1 value
        v = (rng.random((reps, n)) < p).astype(float)
    else:  # a graded value in [0, 1] with mean p
        v = rng.beta(2 * p, 2 * (1 - p), size=(reps, n))
    names = [f"s{i}" for i in range(reps)]
    per_query = pd.DataFrame(
        {
            "system": np.repeat(names, n),
            "qid": np.tile([f"q{j}" for j in range(n)], reps),
            "metric": "m",
            "value": v.ravel(),
        }
    )
    table = summary_table(per_query, names, ["m"], None, "ttest", "holm", 0.01)
    assert (table["m low"] <= table["m"]).all() and (table["m"] <= table["m high"]).all()
    coverage = ((table["m low"] <= p) & (p <= table["m high"])).mean()
    # 400 draws at 0.95: the binomial sd is 0.011; the percentile bootstrap runs a little
    # narrow on 30 questions
    assert 0.90 <= coverage <= 0.99, coverage


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_judged_at_k_is_ir_measures_judged(data: st.DataObject) -> None:
    import ir_measures

    k = data.draw(st.integers(1, 6), label="k")
    results, qrels, run = [], [], []
    for q in range(data.draw(st.integers(1, 5), label="questions")):
        qid = f"q{q}"
        n = data.draw(st.integers(0, 8), label="results")
        for r in range(n):
            results.append((qid, r, "m.md", r + 1, r + 1))  # one line per result
            run.append(ir_measures.ScoredDoc(qid, f"m.md:{r + 1}", float(n - r)))
        for line in data.draw(st.sets(st.integers(1, 10), min_size=1, max_size=6), label="judged"):
            grade = data.draw(st.integers(0, 1), label="grade")
            qrels.append((qid, "m.md", line, line, grade))
    res = pd.DataFrame(results, columns=["qid", "rank", "path", "start_line", "end_line"])
    judged = pd.DataFrame(qrels, columns=["qid", "path", "start_line", "end_line", "grade"])
    qids = sorted(set(judged["qid"]))
    ours = judged_at_k(res, judged, qids, k)
    ref = {
        m.query_id: m.value
        for m in ir_measures.iter_calc(
            [ir_measures.Judged @ k],
            [ir_measures.Qrel(q, f"{p}:{s}", g) for q, p, s, _, g in qrels],
            run,
        )
    }
    answered = set(res["qid"])
    for qid, value in zip(qids, ours, strict=True):
        if qid in answered:
            assert value == pytest.approx(ref[qid])
        else:  # nothing returned, nothing unjudged: left out (ir-measures scores it 0)
            assert np.isnan(value) and ref[qid] == 0


def test_a_result_is_judged_by_an_overlapping_relevant_span_or_inside_a_not_relevant_one() -> None:
    judged = pd.DataFrame(
        [("q", "a.md", 3, 4, 1, 9), ("q", "b.md", 1, 7, 0, 7)],
        columns=["qid", "path", "start_line", "end_line", "grade", "last_line"],
    )
    res = pd.DataFrame(
        [
            ("q", 0, "a.md", 1, 3),  # overlaps the relevant span
            ("q", 1, "b.md", 1, 8),  # inside the not-relevant one (line 8 is the empty last)
            ("q", 2, "a.md", 6, 9),  # neither
            ("q", 3, "b.md", 6, 7),
        ],
        columns=["qid", "rank", "path", "start_line", "end_line"],
    )
    assert judged_at_k(res, judged, ["q"], 4)[0] == 0.75
    assert judged_at_k(res, judged, ["q"], 2)[0] == 1.0


def test_the_ceiling_warning() -> None:
    table = pd.DataFrame(
        {"recall@6": [1.0, 1.0, 0.5], "precision@6": [1.0, 1.0, 1.0], "mrr": [0.9, 0.8, 0.7]},
        index=["a", "b", "c"],
    )
    res = SimpleNamespace(table=table, metrics=list(table.columns))
    out = ceiling_warnings(res, np.array([20, 30, 40]))
    assert len(out) == 1 and out[0].startswith("recall@6 is at its ceiling (1.000) for 2 of 3")
    out = ceiling_warnings(res, np.array([4, 5, 9]))  # k = 6 >= the 5 units a question sees
    assert any("k = 6 is at least the 5 units the median question can see" in w for w in out)
    assert not ceiling_warnings(SimpleNamespace(table=table.iloc[2:], metrics=["recall@6"]), None)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harvest_example(tmp_path_factory.mktemp("report") / "out")


def test_eval_on_a_harvested_folder(example: Path) -> None:
    code, out, _ = cli("eval", "folder", "--path", str(example), *HASH, "--preset", "wsum,openclaw")
    assert code == 0
    table = out[out.index("system ") :]
    rows = [
        line
        for line in table.splitlines()
        if line.split()[:1] in (["wsum"], ["openclaw"], ["deployed"])
    ]
    assert [r.split()[0] for r in rows[:3]] == ["wsum", "openclaw", "deployed"]
    for r in rows:
        assert r.count("[") == 3  # a CI for each of the three metrics
    assert "judged@10" in table and "[low, high]: 95 % bootstrap CI" in out
    assert "A result nobody judged counts as not relevant" in out
    assert "deployed is scored with implicit labels" in out
    assert "recall@6 is at its ceiling" in out or "k = 10 is at least" in out
    assert "without the 4 questions whose own day's log was visible" in out
    # the table without them scores fewer questions
    n_all = int(rows[0].split()[6])
    after = out[out.index("without the 4 questions") :]
    wsum = next(line for line in after.splitlines() if line.startswith("wsum"))
    assert int(wsum.split()[6]) == n_all - 4


def test_the_tables_as_csv_markdown_and_latex(example: Path) -> None:
    from memlab.datasets.base import load_folder
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.tables import experiment_table, pairwise_wins
    from memlab.pipeline.presets import preset

    lab = Lab(load_folder(example), embedder="hashing", cache_vectors=True)
    res = run_experiment(
        [preset("wsum"), preset("openclaw")],
        lab,
        baseline="openclaw",
        external_runs={"deployed": example / "shown.trec"},
    )
    csv = pd.read_csv(io.StringIO(experiment_table(res, "csv")))
    assert list(csv["system"]) == ["wsum", "openclaw", "deployed"]
    for m in res.metrics:
        assert np.allclose(csv[m], res.table[m].to_numpy())
        assert np.allclose(csv[f"{m} low"], res.table[f"{m} low"].to_numpy())
    wins = pairwise_wins(res, "recall@6")
    assert wins["wsum"] == ["openclaw"]  # wsum finds what openclaw's AND query and minScore drop
    assert csv.loc[0, "recall@6 beats"] == "openclaw"
    md = experiment_table(res, "markdown")
    assert md.splitlines()[0].startswith("| # | system | n | recall@6")
    assert "ᵇ [" in md.splitlines()[2]  # a (wsum) beats b (openclaw)
    tex = experiment_table(res, "latex")
    for part in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{clrrrrr}"):
        assert part in tex
    assert "$^{b}$" in tex and r"\hphantom{$^{" in tex and "judged@10" in tex

    code, out, err = cli(
        "eval",
        "folder",
        "--path",
        str(example),
        *HASH,
        "--preset",
        "wsum,openclaw",
        "--format",
        "csv",
    )
    assert code == 0 and out.startswith("system,n,recall@6,")
    assert "judged@10 below 0.9" in err and "Lab(" in err  # notes on stderr: stdout is tables


def test_sweep_tables_in_every_format(example: Path) -> None:
    args = (
        "sweep",
        "folder",
        "--path",
        str(example),
        *HASH,
        "--preset",
        "wsum",
        "--param",
        "vector_weight=0,0.5,1",
    )
    code, out, _ = cli(*args, "--format", "csv")
    assert code == 0
    d = pd.read_csv(io.StringIO(out))
    assert list(d.columns[:2]) == ["vector_weight", "text_weight"] and len(d) == 3
    assert (d["low"] <= d["mean"]).all() and (d["mean"] <= d["high"]).all()
    assert "\\toprule" in cli(*args, "--format", "latex")[1]
    assert cli(*args, "--format", "markdown")[1].startswith("| vector_weight | text_weight |")


def test_json_and_save_carry_the_cis(example: Path, tmp_path: Path) -> None:
    code, out, _ = cli(
        "eval",
        "folder",
        "--path",
        str(example),
        *HASH,
        "--preset",
        "wsum",
        "--json",
        "--save",
        str(tmp_path / "run"),
    )
    assert code == 0 and json.loads(out)[0]["name"] == "wsum"
    saved = json.loads((tmp_path / "run" / "experiment.json").read_text())
    assert saved["dataset_fingerprint"] and (tmp_path / "run" / "per_query.csv").is_file()
