"""memlab.datasets.base: a data set's smaller configurations (select_groups, first_sessions)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.datasets.base import Dataset
from memlab.store.asof import unit_time
from tests.conftest import write


def two_groups(root: Path) -> Dataset:
    for g in ("a", "b"):
        write(root / g, "MEMORY.md", f"# {g}\n- fact of {g}\n")
        write(root / g, "memory/2026-01-01.md", "x\n")
    q = pd.DataFrame(
        {"qid": ["a1", "b1", "a2"], "query": ["x", "y", "z"], "group": ["a", "b", "a"]}
    )
    e = pd.DataFrame(
        {"qid": ["a1", "b1"], "path": ["MEMORY.md"] * 2, "start_line": [2, 2], "end_line": [2, 2]}
    )
    return Dataset("two", root, {"a": root / "a", "b": root / "b"}, q, e)


def test_select_groups_keeps_their_questions_and_evidence(tmp_path: Path) -> None:
    ds = two_groups(tmp_path)
    a = ds.select_groups(["a"])
    assert list(a.workspaces) == ["a"] and a.root == ds.root and a.name == "two"
    assert a.queries["qid"].tolist() == ["a1", "a2"]
    assert a.evidence["qid"].tolist() == ["a1"]
    assert ds.select_groups(["b", "a"]).queries["qid"].tolist() == ["a1", "b1", "a2"]
    with pytest.raises(ValueError, match=r"no workspace group 'c'; it has a, b"):
        ds.select_groups(["c"])
    with pytest.raises(ValueError, match=r"\(none given\)"):
        ds.select_groups([])


def sessions(root: Path, days: list[int], cutoffs: list[float]) -> Dataset:
    """One workspace of dated session files (day d of January 2026, `-HHMM` for a second
    session of a day) and an undated MEMORY.md; a question per cut-off, its evidence the
    latest session before it."""
    ws = root / "ws"
    write(ws, "MEMORY.md", "- evergreen\n")
    names = []
    for i, d in enumerate(days):
        name = f"memory/2026-01-{d:02d}.md"
        if name in names:
            name = f"memory/2026-01-{d:02d}-{i:02d}00.md"
        names.append(name)
        write(ws, name, f"session {i}\n")
    times = sorted((unit_time(n), n) for n in names)
    qs, ev = [], []
    for j, c in enumerate(cutoffs):
        qs.append({"qid": f"q{j}", "query": "s", "group": "g", "time": c, "cutoff": c})
        before = [n for t, n in times if t < c]
        if before:
            ev.append({"qid": f"q{j}", "path": before[-1], "start_line": 1, "end_line": 1})
    return Dataset("s", root, {"g": ws}, pd.DataFrame(qs), pd.DataFrame(ev))


JAN = 1767225600.0  # 2026-01-01T00:00Z


def test_first_sessions_keeps_the_memory_each_kept_question_had(tmp_path: Path) -> None:
    ds = sessions(tmp_path / "src", [1, 2, 3, 5], [JAN + 86400 * k + 1 for k in (0, 1, 3, 4)])
    small = ds.first_sessions(2, tmp_path / "small")
    ws = small.workspaces["g"]
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md")) == [
        "MEMORY.md",
        "memory/2026-01-01.md",
        "memory/2026-01-02.md",
    ]
    # cut-off <= 2026-01-03 (the first file left out): q0 (Jan 1), q1 (Jan 2)
    assert small.queries["qid"].tolist() == ["q0", "q1"]
    assert small.evidence["qid"].tolist() == ["q0", "q1"]
    assert (ws / "memory/2026-01-02.md").read_text() == "session 1\n"
    assert ds.first_sessions(9, tmp_path / "all").queries["qid"].tolist() == [
        "q0",
        "q1",
        "q2",
        "q3",
    ]
    with pytest.raises(ValueError, match="n >= 1"):
        ds.first_sessions(0, tmp_path / "none")
    ds.queries = ds.queries.drop(columns=["cutoff"])
    with pytest.raises(KeyError, match="cutoff"):
        ds.first_sessions(1, tmp_path / "nocut")


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 28), min_size=1, max_size=8),
    st.lists(st.floats(0, 30), min_size=1, max_size=8),
    st.integers(1, 9),
)
def test_a_kept_question_sees_the_same_past(days: list[int], cut_days: list[float], n: int) -> None:
    """Every kept question's visible files (dated before its cut-off) are the same in the
    smaller data set as in the whole one."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ds = sessions(root / "src", days, [JAN + 86400 * c for c in cut_days])
        small = ds.first_sessions(n, root / "small")

        def visible(d: Dataset, cutoff: float) -> list[str]:
            ws = d.workspaces["g"]
            rel = [p.relative_to(ws).as_posix() for p in ws.rglob("memory/*.md")]
            return sorted(r for r in rel if not math.isnan(unit_time(r)) and unit_time(r) < cutoff)

        for c in small.queries["cutoff"]:
            assert visible(small, c) == visible(ds, c)
        assert len(small.queries) <= len(ds.queries)
