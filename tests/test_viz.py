"""memlab.viz on small real results (hashing embedder, tiny synthetic corpus)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab import viz
from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab
from memlab.eval.sweep import sweep
from memlab.pipeline.presets import preset
from memlab.viz.style import finish_figure
from tests.conftest import REPO


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("viz")
    ds = generate(SynthConfig(days=8, seed=3, queries_per_type=4), root / "synth")
    return Lab(
        ds, embedder=HashingEmbedder(dimensions=128), index_dir=root / "index", progress=False
    )


@pytest.fixture(scope="module")
def experiment(lab: Lab):
    systems = [preset("vector"), preset("bm25"), preset("openclaw", min_score=0.0), preset("rrf")]
    return run_experiment(systems, lab, ["recall@6", "ndcg@10"], baseline="rrf", keep_runs=True)


def _legend_texts(ax) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def _check_saved(fig, path: Path, magic: bytes) -> None:
    out = finish_figure(fig, path)
    assert out is fig
    data = path.read_bytes()
    assert len(data) > 1000
    assert magic in data[:400]


def test_plot_sweep_curves_bands_and_held_out(lab: Lab, tmp_path: Path) -> None:
    sw = sweep(
        lab,
        preset("openclaw", min_score=0.0),
        {"vector_weight": [0.0, 0.5, 1.0]},
        ["recall@6", "ndcg@10"],
        train=0.5,
        n_resamples=200,
    )
    fig = viz.plot_sweep(sw, reference={"OpenClaw": 0.7}, path=tmp_path / "sweep.png")
    ax = fig.axes[0]
    assert "vector weight" in ax.get_xlabel()
    assert "bootstrap" in ax.get_ylabel()
    assert _legend_texts(ax) == [
        "recall@6 (train)",
        "recall@6 (held-out)",
        "ndcg@10 (train)",
        "ndcg@10 (held-out)",
    ]
    assert len(ax.collections) == 2  # one CI band per metric
    band = ax.collections[0].get_paths()[0].vertices
    curve = sw.curve("recall@6")
    assert band[:, 1].min() == pytest.approx(curve["low"].min())
    assert band[:, 1].max() == pytest.approx(curve["high"].max())
    assert any(list(line.get_xdata()) == [0.7, 0.7] for line in ax.get_lines())
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The tidy table alone draws the same lines.
    fig2 = viz.plot_sweep(sw.table, "recall@6", held_out=False)
    line = fig2.axes[0].get_lines()[0]
    assert np.allclose(line.get_ydata(), curve["mean"])
    with pytest.raises(ValueError, match="not in the sweep"):
        viz.plot_sweep(sw, "mrr")


def test_two_parameter_sweep_as_lines_and_heatmap(lab: Lab, tmp_path: Path) -> None:
    grid = {"vector_weight": [0.0, 0.5, 0.7, 1.0], "min_score": [0.0, 0.2, 0.35]}
    sw = sweep(lab, preset("openclaw"), grid, ["recall@6"], n_resamples=100)
    fig = viz.plot_sweep(sw)
    assert len(_legend_texts(fig.axes[0])) == 3  # one line per min_score
    fig = viz.plot_heatmap(sw, reference={"vector_weight": 0.7, "min_score": 0.35})
    ax = fig.axes[0]
    z = ax.images[0].get_array()
    expected = sw.table.pivot(index="min_score", columns="vector_weight", values="mean")
    assert z.shape == (3, 4)
    assert np.allclose(np.asarray(z), expected.to_numpy())
    assert "minScore" in ax.get_ylabel() and "vector weight" in ax.get_xlabel()
    # The best cell's outline (red) and the reference setting's (dashed white).
    assert [p.get_edgecolor()[:3] for p in ax.patches] == [(1.0, 0.0, 0.0), (1.0, 1.0, 1.0)]
    ref = ax.patches[1].get_xy()
    assert ref == (list(expected.columns).index(0.7) - 0.5, list(expected.index).index(0.35) - 0.5)
    texts = {t.get_text() for t in ax.texts}
    assert f"{expected.to_numpy().max():.2f}" in texts
    _check_saved(fig, tmp_path / "heat.svg", b"<svg")
    with pytest.raises(ValueError, match="two parameters"):
        viz.plot_heatmap(sw.table[sw.table["min_score"] == 0.0].drop(columns="min_score"))


def test_plot_by_category_bars(experiment, tmp_path: Path) -> None:
    fig = viz.plot_by_category(experiment, "recall@6", path=tmp_path / "cat.png")
    ax = fig.axes[0]
    table = experiment.by_category("recall@6")
    assert len(ax.containers) == len(experiment.systems)
    for container, name in zip(ax.containers, table.columns, strict=True):
        heights = [b.get_height() for b in container]
        assert len(heights) == len(table) + 1  # categories + "all"
        assert np.allclose(heights[:-1], table[name].to_numpy())
        overall = experiment.table.loc[name, "recall@6"]
        assert heights[-1] == pytest.approx(overall)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[-1].startswith("all\n(n=")
    assert ax.get_ylim() == (0.0, 1.0)
    assert "recall@6" in ax.get_ylabel()
    assert (tmp_path / "cat.png").stat().st_size > 1000
    fig = viz.plot_by_category(table, systems=["rrf", "bm25"])
    assert [t for t in _legend_texts(fig.axes[0])] == ["rrf", "bm25"]
    with pytest.raises(ValueError, match="systems"):
        viz.plot_by_category(experiment, "recall@6", systems=["nope"])


@pytest.mark.slow
def test_score_frame_and_distributions(lab: Lab, tmp_path: Path) -> None:
    lc = lab.candidates(24)
    p, r = preset("openclaw"), preset("rrf")
    sf = viz.score_frame(lc, p)
    st = p.scores(lc.cs)
    assert len(sf) == int(st["valid"].sum())
    assert np.allclose(np.sort(sf["fused"]), np.sort(st["fused"][st["valid"]]))
    fig = viz.plot_score_distributions(lc, pipelines=[p, r])
    axes = fig.axes
    assert len(axes) == 2
    notes = [t.get_text() for ax in axes for t in ax.texts]
    share = float((sf["fused"] >= 0.35).mean())
    assert f"minScore 0.35: {share:.1%} pass" in notes
    assert "minScore 0: 100.0% pass" in notes  # RRF has no threshold
    assert axes[0].get_position().y0 == pytest.approx(axes[1].get_position().y0)  # side by side
    # Raw legs of the candidates, and results frames.
    fig = viz.plot_score_distributions(lc.cs)
    assert [ax.get_xlabel() for ax in fig.axes] == [
        viz.COLUMN_LABELS["vector_score"],
        viz.COLUMN_LABELS["text_score"],
    ]
    run = p.replace(min_score=0.0).run(lc.cs)
    fig = viz.plot_score_distributions({"a": run, "b": run}, threshold=0.35)
    assert len(fig.axes) == 6
    _check_saved(fig, tmp_path / "dist.png", b"PNG")
    with pytest.raises(ValueError, match="no column"):
        viz.plot_score_distributions(run, columns=["nope"])


def test_mark_relevant_overlap() -> None:
    run = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q1", "q2"],
            "path": ["a.md", "a.md", "b.md", "a.md"],
            "start_line": [1, 5, 1, 1],
            "end_line": [4, 9, 9, 9],
        }
    )
    ev = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q2"],
            "path": ["a.md", "b.md", "a.md"],
            "start_line": [4, 20, 3],
            "end_line": [4, 20, 3],
            "grade": [1, 1, 0],
        }
    )
    assert viz.mark_relevant(run, ev)["relevant"].tolist() == [True, False, False, False]


def test_plot_rank_changes(lab: Lab, experiment, tmp_path: Path) -> None:
    runs = viz.mark_relevant(experiment.runs, lab.dataset.evidence)
    a = runs[runs["system"] == "vector"]
    b = runs[runs["system"] == "bm25"]
    qid = next(q for q in a["qid"] if runs.loc[runs["qid"] == q, "relevant"].any())
    fig = viz.plot_rank_changes(a, b, qid, k=6, path=tmp_path / "bump.svg")
    ax = fig.axes[0]
    ta = a[a["qid"] == qid].nsmallest(6, "rank")
    tb = b[b["qid"] == qid].nsmallest(6, "rank")
    union = set(ta["docno"]) | set(tb["docno"])
    lines = ax.get_lines()
    assert len(lines) == len(union)
    rel = set(ta.loc[ta["relevant"], "docno"]) | set(tb.loc[tb["relevant"], "docno"])
    assert sum(line.get_linewidth() > 2 for line in lines) == len(rel)
    only_one = len(union - (set(ta["docno"]) & set(tb["docno"])))
    assert sum(line.get_linestyle() == "--" for line in lines) == only_one
    assert [t.get_text() for t in ax.get_xticklabels()] == ["vector", "bm25"]
    assert "<svg" in (tmp_path / "bump.svg").read_text()[:400]


def test_plot_recall_at_k(tmp_path: Path) -> None:
    table = pd.DataFrame(
        {"recall@5": [0.5, 0.4], "recall@10": [0.6, 0.55], "recall@25": [0.8, 0.7]},
        index=["vector", "bm25"],
    )
    fig = viz.plot_recall_at_k(table, reference={"DRAGON (paper)": {5: 0.567, 10: 0.662}})
    ax = fig.axes[0]
    assert _legend_texts(ax) == ["vector", "bm25", "DRAGON (paper)"]
    assert list(ax.get_lines()[0].get_xdata()) == [5, 10, 25]
    assert ax.get_ylim() == (0.0, 1.0)
    with pytest.raises(ValueError, match="must end in"):
        viz.plot_recall_at_k(table, path=tmp_path / "x.jpg")


@pytest.mark.slow
def test_agg_backend_without_display(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")
    }
    code = (
        "import pandas as pd, matplotlib\n"
        "from memlab import viz\n"
        "t = pd.DataFrame({'recall@5': [0.5]}, index=['x'])\n"
        f"viz.plot_recall_at_k(t, path={str(tmp_path / 'a.png')!r})\n"
        "print(matplotlib.get_backend().lower())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().endswith("agg")
    assert (tmp_path / "a.png").stat().st_size > 1000
