"""The lab commands run as a user would (real subprocesses, hashing embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "corpus"
    p = run(
        "synth",
        str(out),
        "--days",
        "15",
        "--seed",
        "5",
        "--queries-per-type",
        "4",
        subprocess_=True,
    )
    assert "queries" in p.stdout
    return out


def test_synth_writes_folder_format(corpus: Path) -> None:
    assert (corpus / "queries.jsonl").exists() and (corpus / "evidence.jsonl").exists()
    assert (corpus / "workspace" / "MEMORY.md").exists()
    again = run(
        "synth", str(corpus), "--days", "15", "--seed", "5", "--queries-per-type", "4", check=False
    )
    # regenerating into a non-empty folder is refused without --overwrite...
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert (
        run(
            "synth",
            str(corpus),
            "--days",
            "15",
            "--seed",
            "5",
            "--queries-per-type",
            "4",
            "--overwrite",
        ).returncode
        == 0
    )
    bad = run("synth", str(corpus.parent / "x"), "--days", "0", check=False)
    assert bad.returncode == 2 and "days" in bad.stderr


def test_eval_table_and_json(corpus: Path) -> None:
    out = run(
        "eval",
        "synthetic",
        "--path",
        str(corpus),
        "--embedder",
        "hashing",
        "--preset",
        "bm25,vector,openclaw",
        "--metrics",
        "recall@6,ndcg@10",
        "--by-category",
    ).stdout
    assert "recall@6" in out and "openclaw" in out and "by category" in out
    # One table per metric; the query-mix categories of the default mix, for every preset.
    for metric in ("recall@6", "ndcg@10"):
        table = out.split(f"{metric} by category:")[1].split("by category:")[0]
        head, *rows = table.strip().splitlines()
        assert head.split()[1:] == ["bm25", "vector", "openclaw"]
        cats = {r.split()[0]: r.split()[1:] for r in rows if len(r.split()) == 4}
        for cat in ("identifier", "keyword", "dated"):
            assert len(cats[cat]) == 3 and all(0 <= float(v) <= 1 for v in cats[cat])
    js = json.loads(
        run(
            "eval",
            "synthetic",
            "--path",
            str(corpus),
            "--embedder",
            "hashing",
            "--preset",
            "bm25",
            "--preset",
            "openclaw",
            "--metrics",
            "recall@6",
            "--json",
        ).stdout
    )
    assert [s["name"] for s in js] == ["bm25", "openclaw"]
    assert 0.0 <= js[0]["metrics"]["recall@6"] <= 1.0 and js[0]["n_queries"] > 0
    assert "vs_baseline" in js[0]


@pytest.mark.parametrize("unit", ["turn", "chunk"])
def test_eval_says_which_rows_ignore_the_unit(corpus: Path, unit: str) -> None:
    # Release 2026.9.6's file rule chunks with its own fixed chunker whatever --unit says:
    # at one line per unit its row is at chunk level, and the table must say so.
    out = run(
        "eval",
        "synthetic",
        "--path",
        str(corpus),
        "--embedder",
        "hashing",
        "--unit",
        unit,
        "--preset",
        "openclaw-current,bm25",
        "--metrics",
        "recall@6",
    ).stdout
    said = [ln for ln in out.splitlines() if "fixed chunker" in ln]
    if unit == "chunk":
        assert said == []
    else:
        assert said == [
            "openclaw-current: memory_files=openclaw-2026.9 chunks with the release's fixed "
            "chunker (1600/320 characters), not 'line:v1': its row is at chunk level"
        ]


def test_sweep_reports_best_on_held_out(corpus: Path) -> None:
    out = run(
        "sweep",
        "synthetic",
        "--path",
        str(corpus),
        "--embedder",
        "hashing",
        "--param",
        "vector_weight=0:1:0.5",
        "--set",
        "min_score=0",
        "--train",
        "0.5",
    ).stdout
    assert "best recall@6" in out and "held-out" in out and "tuned on" in out
    bad = run(
        "sweep",
        "synthetic",
        "--path",
        str(corpus),
        "--embedder",
        "hashing",
        "--param",
        "vector_weight",
        check=False,
    )
    assert bad.returncode == 2 and "--param expects" in bad.stderr


def test_missing_dataset_is_clear(tmp_path: Path) -> None:
    p = run(
        "eval", "folder", "--path", str(tmp_path / "none"), "--embedder", "hashing", check=False
    )
    assert p.returncode == 2 and "not found" in p.stderr


@pytest.mark.slow
def test_eval_reads_another_local_model_folder(corpus: Path, tmp_path: Path) -> None:
    from memlab.embed.local import packaged_model_path

    args = ["eval", "synthetic", "--path", str(corpus), "--unit", "turn", "--preset", "vector"]
    args += ["--metrics", "recall@6,ndcg@10", "--json"]
    default = json.loads(run(*args).stdout)
    # The packaged model's folder given as --model: another model by name (its own index),
    # the same vectors, so the same figures.
    folder = json.loads(run(*args, "--model", str(packaged_model_path())).stdout)
    assert [s["metrics"] for s in folder] == [s["metrics"] for s in default]
    assert default[0]["metrics"]["recall@6"] > 0
    bad = run(*args, "--embedder", "hashing", "--model", str(tmp_path), check=False)
    assert bad.returncode == 2 and "--model" in bad.stderr and "--embedder local" in bad.stderr
    missing = run(*args, "--model", str(tmp_path / "nope"), check=False)
    assert missing.returncode == 2 and "nope" in missing.stderr and "--model" in missing.stderr
    # The model is checked before the data set is read: a bad --model is the error named,
    # though the data set is missing too.
    both = run(
        "eval",
        "folder",
        "--path",
        str(tmp_path / "no-data"),
        "--model",
        str(tmp_path / "nope"),
        check=False,
    )
    assert both.returncode == 2 and "--model" in both.stderr and "no-data" not in both.stderr


def test_cached_synthetic_corpus_of_another_config_is_regenerated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memlab eval synthetic` without --path caches its corpus; one an older memlab wrote
    (here: another mix, as before the query mix joined the default) is regenerated."""
    from memlab.cli.labsetup import load_dataset
    from memlab.datasets.synthetic import SynthConfig, generate, generated_with

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cached = tmp_path / "memlab" / "synthetic-d5-s0"
    generate(SynthConfig(days=5, seed=0, queries_per_type=2, mix=("exact",)), cached)
    assert not generated_with(cached, SynthConfig(days=5, seed=0))
    ds = load_dataset("synthetic", None, seed=0, days=5)
    assert set(ds.queries["category"]) == set(SynthConfig().mix)
    assert generated_with(cached, SynthConfig(days=5, seed=0))
    again = load_dataset("synthetic", None, seed=0, days=5)  # reused as it is
    assert again.fingerprint == ds.fingerprint
    assert not generated_with(tmp_path / "nothing", SynthConfig())
