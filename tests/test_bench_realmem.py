"""studies/realmem_quality.py: one command, on the hand-made RealMem fixture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "studies" / "realmem_quality.py"
FIXTURE = REPO / "tests" / "data" / "realmem"


@pytest.mark.slow
def test_quick_run_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--path", str(FIXTURE), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for name in ("recency", "random", "bm25", "memlab-best-chunk", "Graph Mem (published)"):
        assert name in text
    assert "not like-for-like" in text and "sessions_time_backwards 1" in text
    doc = json.loads(out.read_text())
    turn = doc["results"]["turn"]
    assert [r["system"] for r in turn["table"]][:7] == [
        "recency",
        "random",
        "bm25",
        "vector",
        "wsum",
        "memlab-best",
        "memlab-best-chunk",
    ]
    assert turn["systems"][2]["name"] == "bm25" and "vs_baseline" in turn["systems"][0]
    assert doc["inputs"]["published"]["Mem0 (published)"] == {
        "recall_any@10": 0.6055,
        "ndcg_jk@10": 0.5251,
    }


@pytest.mark.slow
def test_missing_data_says_where_it_looked(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMLAB_REALMEM": str(tmp_path / "none")}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2
    assert "none (no such file or folder)" in proc.stderr
