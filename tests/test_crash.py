"""SIGKILL at random points of incremental and full syncs (reduced form of
benchmarks/kill_loop.py, which runs hundreds of kills)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import kill_loop


@pytest.mark.slow
def test_kill_loop_reduced(tmp_path: Path) -> None:
    res = kill_loop.kill_loop(10, files=25, mode="both", seed=7, workdir=tmp_path, max_trials=40)
    assert res.failures == [], res.failures[:5]
    assert sum(res.kills.values()) >= 10, res
    assert res.kills["incremental"] >= 3 and res.kills["full"] >= 3, res.kills


def test_consistency_checker_sees_damage(tmp_path: Path) -> None:
    """The checks the kill loop relies on do catch a broken index."""
    import sqlite3

    ws = kill_loop.make_workspace(tmp_path, 3, 0)
    db = tmp_path / "index.sqlite"
    kill_loop.make_index(ws, db).sync()
    assert kill_loop.consistency_problems(db) == []
    assert kill_loop.answer_problems(ws, db) == []
    con = sqlite3.connect(db)
    con.execute("DELETE FROM chunks_fts WHERE rowid = (SELECT min(rowid) FROM chunks)")
    con.execute("UPDATE chunks SET embedding = NULL WHERE rowid = (SELECT max(rowid) FROM chunks)")
    con.commit()
    con.close()
    probs = kill_loop.consistency_problems(db)
    assert any("fts rows differ" in p for p in probs)
    assert any("without a 64-d vector" in p for p in probs)
    fresh = tmp_path / "fresh.sqlite"
    kill_loop.make_index(ws, fresh).sync()
    assert kill_loop.index_digest(db) != kill_loop.index_digest(fresh)
