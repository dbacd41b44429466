"""Each synthetic phenomenon shows up where it should (issue: "Done when").

The vector leg wins paraphrases and the keyword leg exact tokens (semantic:
the packaged model, OpenClaw chunks); decay wins updates and MMR wins
redundancy (not semantic: the hashing embedder, one line per chunk, so the
effect of the stage is isolated from embedding quality).
"""

from __future__ import annotations

import pytest

from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab
from memlab.pipeline.presets import preset

BASE = preset("openclaw", min_score=0.0).replace(name="wsum")


def _means(res, metric: str):
    return res.by_category(metric)


@pytest.mark.model
def test_vector_wins_paraphrase_keyword_wins_exact(tmp_path_factory) -> None:
    from memlab.embed import SentenceTransformerEmbedder

    ds = generate(
        SynthConfig(days=40, seed=11, queries_per_type=12, mix=("paraphrase", "exact")),
        tmp_path_factory.mktemp("sem") / "corpus",
    )
    lab = Lab(ds, embedder=SentenceTransformerEmbedder(), unit="chunk", progress=False)
    res = run_experiment([preset("vector"), preset("bm25")], lab, ["recall@6"])
    t = _means(res, "recall@6")
    assert t.loc["paraphrase", "vector"] > t.loc["paraphrase", "bm25"]
    assert t.loc["exact", "bm25"] > t.loc["exact", "vector"]


@pytest.fixture(scope="module")
def turn_lab(tmp_path_factory) -> Lab:
    ds = generate(
        SynthConfig(days=30, seed=11, queries_per_type=15, mix=("update", "redundancy")),
        tmp_path_factory.mktemp("turn") / "corpus",
    )
    return Lab(ds, embedder=HashingEmbedder(), unit="turn", progress=False)


def test_decay_wins_updates(turn_lab: Lab) -> None:
    systems = [BASE, BASE.replace(name="wsum+decay", decay="latest", half_life_days=14)]
    t = _means(run_experiment(systems, turn_lab, ["recall@1"]), "recall@1")
    # Only the latest statement is evidence: decay ranks it first more often.
    assert t.loc["update", "wsum+decay"] > t.loc["update", "wsum"]


def test_mmr_wins_redundancy(turn_lab: Lab) -> None:
    systems = [BASE, BASE.replace(name="wsum+mmr", mmr="jaccard")]
    t = _means(run_experiment(systems, turn_lab, ["subtopic_recall@6"]), "subtopic_recall@6")
    # Near-duplicate copies crowd out distinct facts; MMR makes room for them.
    assert t.loc["redundancy", "wsum+mmr"] > t.loc["redundancy", "wsum"]
