"""CI guards for the serving benchmarks: the --quick modes of cold_search.py, mcp_latency.py
and mcp_load.py, run as scripts (as a user runs them), asserting ratios measured in the
same run and correctness — never an absolute time.

The benchmark cache (corpora, indexes) is a temporary folder shared by this module's
tests, so the 500-note local-model index is built once for the two server tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
# The cold onnx search measured 6.9x faster than the torch one in a quick run (load 8) and
# 6.3-13x per round in the full run (load 7-12); under half the low end leaves room for noise.
MIN_COLD_TORCH_OVER_ONNX = 3.0
# A warm server call's p50 measured 2.1x the query embedding alone at 10k chunks (protocol,
# both legs and the ranking on top); re-syncing or re-loading anything per call would be 10x+.
MAX_CALL_OVER_EMBED = 12.0
# Modules the onnx query path and `import memlab` must not load.
TORCH_STACK = {"torch", "sentence_transformers", "transformers", "sklearn"}
# Characters of a failed script's stderr kept from each end in the assertion message.
STDERR_KEEP = 3000


@pytest.fixture(scope="module")
def bench_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench-cache")


def head_and_tail(text: str, keep: int = STDERR_KEEP) -> str:
    """``text`` whole when it is at most ``2 * keep`` characters long, else its first and
    last ``keep`` characters around a note of how many were cut. The head holds the
    script's own log and an exception group's raising frame, the tail the innermost
    errors; a tail alone lost the frame that raised (the mcp_load 404 flake)."""
    if len(text) <= 2 * keep:
        return text
    cut = len(text) - 2 * keep
    return f"{text[:keep]}\n[... {cut} characters cut ...]\n{text[-keep:]}"


def run_quick(script: str, out: Path, cache: Path, *extra: str) -> dict[str, Any]:
    """``python benchmarks/SCRIPT --quick --json OUT EXTRA…``; the JSON it wrote."""
    cmd = [sys.executable, str(REPO / "benchmarks" / script), "--quick", "--json", str(out)]
    env = {**os.environ, "MEMLAB_BENCH_CACHE": str(cache)}
    r = subprocess.run(
        [*cmd, *extra], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, f"{script} failed ({r.returncode}):\n{head_and_tail(r.stderr)}"
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == script.removesuffix(".py") and doc["quick"] is True
    return doc["results"]


@pytest.mark.slow
def test_import_memlab_and_help_load_no_torch(bench_cache: Path, tmp_path: Path) -> None:
    res = run_quick("cold_search.py", tmp_path / "i.json", bench_cache, "--parts", "import")
    imp = res["import"]
    assert "search" not in res
    assert imp["heavy_after_import"] == [], imp["heavy_after_import"]
    assert not TORCH_STACK & set(imp["help_heavy_modules"]), imp["help_heavy_modules"]
    assert imp["import_memlab_seconds"]["n"] == imp["runs"] == 5


@pytest.mark.model
@pytest.mark.slow
def test_cold_search_onnx_beats_torch_same_results(bench_cache: Path, tmp_path: Path) -> None:
    # One interleaved pair (after a warm-up call each): the torch calls are most of the time.
    extra = ("--parts", "search", "--repeats", "1")
    res = run_quick("cold_search.py", tmp_path / "c.json", bench_cache, *extra)
    s = res["search"]
    assert s["same_results"] == s["rounds"] == 1  # identical hits from both backends
    onnx, torch = s["backends"]["onnx"], s["backends"]["torch"]
    assert not TORCH_STACK & set(onnx["heavy_modules"]), onnx["heavy_modules"]
    assert "onnxruntime" in onnx["heavy_modules"]
    assert "torch" in torch["heavy_modules"]  # the comparison really ran the old path
    assert s["workspace"]["chunks"] >= 20
    ratio = s["ratio_torch_over_onnx"]
    assert ratio >= MIN_COLD_TORCH_OVER_ONNX, f"onnx only {ratio:.1f}x faster than torch"


@pytest.mark.model
@pytest.mark.slow
def test_mcp_server_latency_quick(bench_cache: Path, tmp_path: Path) -> None:
    res = run_quick("mcp_latency.py", tmp_path / "m.json", bench_cache)
    assert res["provider"] == "local" and res["server_chunks"] == 500
    assert res["latency"]["n"] == 60 and res["empty_answers"] == 0
    over = res["p50_over_embed_alone"]
    assert over <= MAX_CALL_OVER_EMBED, f"a server call is {over:.1f}x the query embedding"
    # the same system served from its preset file, measured in the same run
    pf = res["preset_file"]
    assert pf["latency"]["n"] == 60 and pf["empty_answers"] == 0
    assert (pf["identity"], pf["pipeline"]) == (res["identity"], res["pipeline"])


@pytest.mark.model
@pytest.mark.slow
def test_mcp_server_under_load_loses_nothing(bench_cache: Path, tmp_path: Path) -> None:
    res = run_quick("mcp_load.py", tmp_path / "l.json", bench_cache)
    assert res["errors"] == 0, res["error_samples"]
    assert res["calls"] > 0 and res["lines_appended"] >= 5
    assert res["lines_lost"] == 0, res["lost_samples"]
    assert res["final_chunks"] == res["expected_chunks"]
