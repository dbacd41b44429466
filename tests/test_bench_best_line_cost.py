"""benchmarks/best_line_cost.py: both indexes are built and both systems timed, on a tiny
workspace (the speed figures themselves live in the benchmark, not in a timed test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import best_line_cost


@pytest.mark.slow
def test_measure_reports_both_indexes_and_both_systems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMLAB_BENCH_CACHE", str(tmp_path / "bench"))
    row = best_line_cost.measure(20, nq=3)
    # 20 chunks' worth of notes: about 20 chunks, 13 lines each, every line a row
    assert 10 <= row["chunks"] <= 40
    assert row["lines"] == 20 * best_line_cost.NOTES_PER_CHUNK
    assert row["line_view_mb"] > 0 and row["chunk_index_mb"] > 0
    assert row["ms_preset"] > 0 and row["ms_chunk_unit"] > 0 and row["ms_max_order"] > 0
    assert row["ratio"] == pytest.approx(row["ms_preset"] / row["ms_chunk_unit"])
