"""The benchmarks' output rules (benchmarks/_common.py): nothing printed as a result that
is not one — no interval from fewer than 3 samples, no None/NaN, no negative overhead."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import _common as C  # noqa: E402
from benchmarks.index_throughput import TimedEmbedder, throughput  # noqa: E402


def test_interval_only_from_three_samples() -> None:
    assert C.fmt(C.stats([19.4])) == "19.4 (1 run)"
    assert C.fmt(C.stats([1.0, 3.0])) == "2 (2 runs)"
    assert C.fmt(C.stats([1.0, 2.0, 3.0])) == "2 [1–3]"
    assert C.fmt(C.stats([0.1234, 0.2, 0.9876])) == "0.2 [0.123–0.988]"
    assert C.fmt_seconds(C.stats([0.5])) == "0.5 s (1 run)"
    assert C.fmt_seconds(C.stats([0.5, 0.4, 0.6])) == "0.5 s [0.4–0.6]"


@pytest.mark.parametrize("value", [None, math.nan, np.float64("nan"), C.stats([])])
def test_missing_figures_say_not_measured(value: object) -> None:
    assert C.fmt(value) == "not measured"
    assert C.fmt_seconds(value) == "not measured"


def test_print_table_never_prints_none_nan_or_one_sample_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    C.print_table(
        [{"a": C.stats([19.4]), "b": None, "c": float("nan"), "d": 3, "e": C.stats([1, 2, 3])}]
    )
    out = capsys.readouterr().out
    assert "None" not in out and "nan" not in out
    assert "19.4–19.4" not in out and "19.4 (1 run)" in out and "2 [1–3]" in out


def test_quick_help_states_measured_seconds() -> None:
    for name, (first, cached) in C.QUICK_SECONDS.items():
        text = C.parser("x", name).format_help()
        assert f"~{first} s the first time" in " ".join(text.split()), name
        assert cached <= first
    assert "minute" not in C.parser("x").format_help()


class _SlowEmbedder:
    """A toy embedder whose embedding takes a known time, so sync overhead is all SQLite."""

    provider = "toy"
    model = "toy-8"
    dimensions = 8
    identity_key = "toy-8-identity"

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        import time

        time.sleep(0.002 * len(texts))
        v = np.ones((len(texts), 8), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def test_overhead_is_measured_inside_the_sync_and_never_negative() -> None:
    """Overhead = (sync wall time − time in embed_documents) / chunks: a part of one
    measured interval, so ≥ 0 however noisy the separate raw run is (the former
    1/e2e − 1/raw went negative when the raw run was slower)."""
    timed = TimedEmbedder(_SlowEmbedder())
    timed.embed_documents(["a", "b"])
    assert timed.seconds >= 0.004 and timed.model == "toy-8"
    r = throughput(_SlowEmbedder(), 40, 3)
    ov = r["overhead_ms_per_chunk"]
    assert ov["n"] == 3 and ov["min"] >= 0.0
    # the sync is slower than embedding alone by exactly the overhead, per chunk
    per_chunk_sync_ms = 1000 / r["sync_chunks_per_s"]["median"]
    assert ov["median"] < per_chunk_sync_ms


def test_memlab_bench_help_matches_the_scripts_measured_times() -> None:
    from memlab.cli import bench

    assert tuple(C.QUICK_SECONDS) == tuple(bench.BENCHMARKS)
    assert sum(f for f, _ in C.QUICK_SECONDS.values()) == bench.QUICK_SECONDS_FIRST
    assert sum(c for _, c in C.QUICK_SECONDS.values()) == bench.QUICK_SECONDS_CACHED
