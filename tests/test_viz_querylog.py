"""memlab.viz.plot_query_log on a harvested report (Agg backend, no display)."""

from __future__ import annotations

from pathlib import Path

from memlab import viz
from memlab.datasets.harvest import harvest
from tests.conftest import REPO

EXAMPLE = REPO / "datasets" / "example-agent"


def test_plot_query_log_draws_days_and_scores(tmp_path: Path) -> None:
    out = tmp_path / "harvest"
    result = harvest(EXAMPLE / "workspace", out, sessions=EXAMPLE / "sessions")
    fig = viz.plot_query_log(out, tmp_path / "log.png")  # the folder: its report.json
    days, scores = fig.axes
    assert len(days.patches) == result.health["days"] == 10
    assert sum(p.get_height() for p in days.patches) == result.health["calls"]
    assert sum(p.get_height() for p in scores.patches) == result.health["shown_scores"]["n"]
    labels = [t.get_text() for t in scores.get_legend().get_texts()]
    assert labels[0].startswith("median 0.6") and "errored 3%" in labels[1]
    assert (tmp_path / "log.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = viz.plot_query_log(result.to_json())  # the report itself
    assert len(again.axes[0].patches) == 10


def test_plot_query_log_of_an_empty_log() -> None:
    from memlab.datasets.harvest.report import query_log_report

    fig = viz.plot_query_log(query_log_report([]))
    assert len(fig.axes[0].patches) == 0 and len(fig.axes[1].patches) == 10
