"""``memlab synth OUT --like KIND``: the realism knobs fitted to a dataset's statistics, each
fitted statistic within its tolerance (overlap and distractor overlap ±0.05, span length
±20 %, the query-form mix within 0.05, the style), on the shipped persona, on every dev
set (read from ../shared; skipped with a message when absent) and on a notes-style corpus.
The fit reads words only (statistics without embeddings): seconds per set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.datasets.base import load_folder
from memlab.datasets.synthetic.fit import TOLERANCES, fit_like, form_distance
from memlab.eval.stats import corpus_stats
from tests.conftest import REPO, cli


def _stats(ds: object) -> dict:
    s = corpus_stats(ds)
    s.pop("per_query")
    return s


def _assert_fitted(fit: object, target: dict) -> None:
    got = fit.fitted  # type: ignore[attr-defined]
    assert fit.within, fit.format()  # type: ignore[attr-defined]
    # the rows say what the statistics say
    assert abs(got["term_overlap"] - target["term_overlap"]) <= TOLERANCES["term_overlap"]
    assert abs(got["distractor_overlap"] - target["distractor_overlap"]) <= 0.05
    assert abs(got["span_lines"] - target["span_lines"]) <= 0.2 * target["span_lines"]
    assert form_distance(got["forms"], target["forms"]) <= TOLERANCES["forms"]
    assert got["style"] == target["style"] and got["level"] == target["level"]


def _dev(kind: str) -> object:
    from memlab.cli.labsetup import LabError, load_dataset

    try:
        return load_dataset(kind, None)
    except LabError as exc:
        pytest.skip(f"{exc}")


@pytest.mark.slow
def test_like_the_shipped_persona(tmp_path: Path) -> None:
    from memlab.datasets.realmem import load_realmem

    target = _stats(load_realmem(REPO / "datasets" / "realmem", tmp_path / "persona"))
    fit = fit_like(target, seed=1)
    _assert_fitted(fit, target)
    assert fit.config.style == "conversation" and fit.config.level == "file"


@pytest.mark.slow
@pytest.mark.locomo
@pytest.mark.parametrize("kind", ["locomo", "beam", "realmem"])
def test_like_every_dev_set(kind: str) -> None:
    target = _stats(_dev(kind))
    fit = fit_like(target)
    _assert_fitted(fit, target)


def test_like_a_notes_corpus_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "like"
    code, text, err = cli(
        "synth", str(out), "--like", "folder", "--like-path", str(REPO / "datasets" / "synthetic-small"),
    )  # fmt: skip
    assert code == 0, err
    table = text.split("fitted knobs")[0]
    for stat in ("term_overlap", "distractor_overlap", "span_lines", "forms", "style"):
        assert stat in table
    assert "MISSED" not in table and "fitted knobs" in text
    target = _stats(load_folder(REPO / "datasets" / "synthetic-small"))
    got = json.loads((out / "dataset.json").read_text())["info"]["config"]
    assert got.get("style", "notes") == "notes"
    # the printed target is the dataset's own figure
    assert f"{target['term_overlap']:.3f}" in table


def test_like_keeps_what_is_given(tmp_path: Path) -> None:
    persona = ["--like", "folder", "--like-path", str(REPO / "datasets" / "synthetic-small")]
    code, _, err = cli("synth", str(tmp_path / "a"), *persona, "--set", "paraphrase=0")
    assert code == 0, err
    assert (
        json.loads((tmp_path / "a" / "dataset.json").read_text())["info"]["config"]["paraphrase"]
        == 0
    )
    code, _, err = cli("synth", str(tmp_path / "b"), *persona, "--queries-per-type", "5")
    assert code == 0, err
    counts = json.loads((tmp_path / "b" / "dataset.json").read_text())["info"]["counts"]
    assert max(counts.values()) == 5
    code, _, err = cli("synth", str(tmp_path / "c"), "--like", "folder")
    assert code == 2 and "--path is required" in err
