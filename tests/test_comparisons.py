"""Comparisons mean what they say: `memlab eval` shows each system's candidate generation,
flags one system under two names, and `memlab bench --quick` states its measured time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.cli import main
from memlab.datasets.synthetic import SynthConfig, generate


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cmp") / "corpus"
    generate(SynthConfig(days=8, seed=4, queries_per_type=3), root)
    return root


def _eval(corpus: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    args = ["eval", "folder", "--path", str(corpus), "--embedder", "hashing", *extra]
    assert main(args) == 0
    return capsys.readouterr().out


def test_eval_table_shows_keyword_mode_depth_and_weights(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _eval(corpus, capsys, "--metrics", "recall@6")
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("system"))
    assert lines[head].split()[:7] == ["system", "kw", "depth", "fusion", "weights", "min", "n"]
    rows = {ln.split()[0]: ln.split() for ln in lines[head + 2 : head + 8]}
    # default systems: the lab baselines on the OR query, OpenClaw's two systems on AND
    assert list(rows) == ["vector", "bm25", "openclaw", "openclaw-latest", "wsum", "rrf"]
    assert {n: r[1] for n, r in rows.items()} == {
        "vector": "-",
        "bm25": "or",
        "openclaw": "and",
        "openclaw-latest": "and",
        "wsum": "or",
        "rrf": "or",
    }
    assert {r[2] for r in rows.values()} == {"24"}  # one depth: 6 results × 4 per leg
    assert rows["wsum"][4] == rows["openclaw"][4] == "0.70/0.30"
    assert "kw" not in _eval(corpus, capsys, "--metrics", "recall@6", "--no-settings")


def test_eval_flags_one_system_under_two_names(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # wsum fused by RRF with rrf's weights is rrf: one system under two names
    sets = ("--set", "fusion=rrf", "--set", "vector_weight=1.0", "--set", "text_weight=1.0")
    args = ("--preset", "rrf,wsum,bm25", *sets, "--set", "min_score=0", "--metrics", "mrr")
    out = _eval(corpus, capsys, *args)
    row = next(ln for ln in out.splitlines() if ln.startswith("wsum"))
    assert row.rstrip().endswith("= rrf: same ranking")
    assert "one system under two names" in out
    js = json.loads(_eval(corpus, capsys, *args, "--json"))
    assert [s["same_ranking_as"] for s in js] == [None, "rrf", None]
    assert [s["candidates"]["keyword_mode"] for s in js] == ["or", "or", "or"]
    # as shipped they differ, and nothing is flagged
    js = json.loads(_eval(corpus, capsys, "--preset", "rrf,wsum", "--json"))
    assert [s["same_ranking_as"] for s in js] == [None, None]


def test_bench_help_states_measured_time(capsys: pytest.CaptureFixture[str]) -> None:
    from memlab.cli import bench

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "about a minute" not in text
    assert f"~{bench.QUICK_SECONDS_FIRST} s the first time" in text


def test_bench_unknown_name_lists_the_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no benchmark 'nope'" in err and "choose from sweep_speed, search_latency" in err


@pytest.mark.parametrize("child", [1, 2, 130, -9])
def test_bench_reports_a_failed_benchmark_as_a_runtime_failure(
    child: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark that exits non-zero or is killed by a signal (a negative code) makes
    `memlab bench` exit 1 (docs/cli.md), never 0 and never the child's own code."""
    import subprocess

    codes = iter([0, child] + [0] * 20)  # the second benchmark fails, every other passes
    monkeypatch.setattr(subprocess, "call", lambda cmd: next(codes))
    assert main(["bench"]) == 1
    assert "== quality" in capsys.readouterr().out  # the others still ran
