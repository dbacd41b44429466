"""The CI guard of memlab eval: --fail-below and --against --fail-on-regression exit 3
(EXIT_REGRESSION) naming each system and metric; a saved run on another dataset is exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from memlab.errors import EXIT_CODES, EXIT_REGRESSION
from tests.conftest import cli
from tests.example_agent import harvest_example


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # a snapshot folder: what a CI job runs on
    return harvest_example(tmp_path_factory.mktemp("guard") / "bench", snapshot=True)


def _eval(folder: Path, *extra: str) -> tuple[int, str, str]:
    return cli(
        *("eval", "folder", "--path", str(folder), "--embedder", "hashing"),
        *("--preset", "wsum,openclaw", "--metrics", "recall@6,mrr", "--no-settings"),
        *extra,
    )


def test_exit_3_is_a_documented_code() -> None:
    assert EXIT_REGRESSION == 3 and EXIT_REGRESSION in EXIT_CODES
    assert "| 3 |" in (Path(__file__).parents[1] / "docs" / "cli.md").read_text()


def test_fail_below_names_each_system_and_metric(frozen: Path) -> None:
    code, out, err = _eval(frozen, "--fail-below", "recall@6=0.5", "--fail-below", "mrr=0.1")
    assert code == EXIT_REGRESSION
    assert "memlab: guard: below the floor: openclaw recall@6" in err
    assert "wsum recall@6" not in err and "mrr" not in err
    assert "system" in out  # the table is printed as usual
    assert _eval(frozen, "--fail-below", "mrr=0.1")[0] == 0
    code, _, err = _eval(frozen, "--fail-below", "ndcg@10=0.5")
    assert code == 2 and "ndcg@10 is not among the run's metrics" in err
    code, _, err = _eval(frozen, "--fail-below", "recall@6")
    assert code == 2 and "write METRIC=VALUE" in err


def test_against_a_saved_run(frozen: Path, tmp_path: Path) -> None:
    saved = tmp_path / "baseline"
    assert _eval(frozen, "--save", str(saved))[0] == 0
    # the same system again: no change, no regression
    code, _, err = _eval(frozen, "--against", str(saved), "--fail-on-regression")
    assert code == 0 and "against" in err
    # a saved run that was much better than today: a significant drop past the margin
    better = tmp_path / "better"
    shutil.copytree(saved, better)
    pq = pd.read_csv(better / "per_query.csv")
    sel = (pq["system"] == "openclaw") & (pq["metric"] == "recall@6")
    pq.loc[sel, "value"] = 1.0
    pq.to_csv(better / "per_query.csv", index=False)
    code, _, err = _eval(frozen, "--against", str(better), "--fail-on-regression")
    assert code == EXIT_REGRESSION
    assert "memlab: guard: regression: openclaw recall@6 1.000 ->" in err
    assert "wsum" not in err.split("memlab: guard:")[1]
    # a margin larger than the drop lets it pass; without --fail-on-regression it only prints
    assert (
        _eval(frozen, "--against", str(better), "--fail-on-regression", "--margin", "0.9")[0] == 0
    )
    assert _eval(frozen, "--against", str(better))[0] == 0


def test_a_run_saved_on_another_dataset_is_a_usage_error(frozen: Path, tmp_path: Path) -> None:
    saved = tmp_path / "baseline"
    assert _eval(frozen, "--save", str(saved))[0] == 0
    other = tmp_path / "other"
    shutil.copytree(frozen, other)
    (other / "evidence.jsonl").write_text(
        "".join((frozen / "evidence.jsonl").read_text().splitlines(keepends=True)[:-1])
    )
    code, _, err = _eval(other, "--against", str(saved), "--fail-on-regression")
    assert code == 2 and "saved on another dataset (fingerprint" in err
    code, _, err = _eval(frozen, "--against", str(tmp_path / "nothing"))
    assert code == 2 and "no experiment.json" in err
    code, _, err = _eval(frozen, "--fail-on-regression")
    assert code == 2 and "--fail-on-regression needs --against" in err
