"""benchmarks/harvest_speed.py: the generated agent is harvested whole, on a tiny size (the
speed figure itself lives in the benchmark's results, not in a timed test)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import harvest_speed


def test_measure_harvests_every_generated_call() -> None:
    row = harvest_speed.measure(4, calls=6, repeats=1)
    assert (row["sessions"], row["calls"]) == (4, 24)
    # entries kept per session: per call user, call, result, reply; a read (call + result)
    # every third call; another tool's call every fifth (its model change is skipped)
    assert row["entries"] == 4 * (6 * 4 + 2 * 2 + 1)
    assert row["shown"] == 24 * harvest_speed.HITS
    assert row["evidence"] >= 4 * (2 + 3) - 4  # reads and citations, a few the same span
    assert row["seconds"]["n"] == 1 and row["calls_per_s"] > 0
