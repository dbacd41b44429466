"""memlab judge: the answers file (append, fsync, undo as a retraction, a torn last line),
resuming after a kill at any answer (Hypothesis), the terminal loop (one answer per line;
one key press at a terminal), the pool of a harvested folder, and the command run as a
user runs it."""

from __future__ import annotations

import io
import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.datasets.judgments import (
    human_judgments,
    read_judgment_rows,
    standing_answers,
)
from memlab.eval.judge import JudgeSession, JudgmentStore, Pool, PoolItem
from memlab.eval.judge.card import mark_terms, query_terms
from memlab.eval.judge.terminal import run_loop
from tests.conftest import REPO, cli, write
from tests.example_agent import answer_key, harvest_example, key_answer


def _pool(n: int, systems: int = 3, seed: int = 0, root: Path | None = None) -> Pool:
    """A pool of ``n`` spans over ``systems`` systems with random top-5 ranks; with
    ``root``, over a small dataset written there (what a card shows), else without one (the
    order and the answers need none)."""
    rng = np.random.default_rng(seed)
    names = [f"s{j}" for j in range(systems)]
    items = []
    for i in range(n):
        ranks = tuple((s, int(rng.integers(0, 5))) for s in names if rng.random() < 0.6)
        items.append(
            PoolItem(f"q{i % 4}", "default", f"memory/f{i}.md", 1, 2, ranks or (("s0", 0),))
        )
    dataset = None
    if root is not None:
        import pandas as pd

        from memlab.datasets.base import Dataset

        for i in range(n):
            write(root / "ws", f"memory/f{i}.md", f"# note {i}\nthe deploy window is {i} pm\n")
        q = pd.DataFrame({"qid": [f"q{j}" for j in range(4)], "query": "deploy window"})
        dataset = Dataset("t", root, {"default": root / "ws"}, q, pd.DataFrame())
    return Pool(items, names, 5, dataset)


# ------------------------------------------------------------------ the answers file
def test_record_undo_and_standing_answers(tmp_path: Path) -> None:
    store = JudgmentStore(tmp_path, clock=lambda: 100.0)
    a, b = ("q1", "MEMORY.md", 1, 4), ("q1", "memory/x.md", 2, 3)
    store.record(a, 1)
    store.record(b, None)  # skipped
    assert store.grade(a) == 1 and store.grade(b) is None and b in store.answers
    assert store.undo() == b  # the latest standing answer
    assert store.undo() == a
    assert store.undo() is None
    store.record(a, 0)
    rows = read_judgment_rows(tmp_path / "judgments.jsonl")
    assert [r.get("retract", False) for r in rows] == [False, False, True, True, False]
    assert rows[0] == {
        "qid": "q1",
        "path": "MEMORY.md",
        "start_line": 1,
        "end_line": 4,
        "grade": 1,
        "time": 100.0,
    }
    assert list(standing_answers(rows)) == [a]
    human = human_judgments(tmp_path)
    assert human[["qid", "path", "start_line", "end_line", "grade"]].values.tolist() == [
        ["q1", "MEMORY.md", 1, 4, 0]
    ]
    # a second store reads what the first wrote
    assert JudgmentStore(tmp_path).answers == store.answers


def test_a_torn_last_line_is_no_answer_and_is_repaired(tmp_path: Path) -> None:
    store = JudgmentStore(tmp_path)
    store.record(("q1", "a.md", 1, 1), 1)
    path = tmp_path / "judgments.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"qid": "q1", "path": "b.md", "sta')  # a write cut short
    assert len(read_judgment_rows(path)) == 1
    again = JudgmentStore(tmp_path)
    assert path.read_bytes() == whole  # the fragment is cut off
    again.record(("q1", "b.md", 1, 1), 0)
    assert [r["path"] for r in read_judgment_rows(path)] == ["a.md", "b.md"]
    # a whole row whose newline was not written stands: only the newline is added
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert len(JudgmentStore(tmp_path).answers) == 2
    assert path.read_bytes().endswith(b"}\n")


def test_a_malformed_line_inside_the_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "judgments.jsonl").write_text('{"qid": "q"}\nnot json\n{"x": 1}\n')
    with pytest.raises(ValueError, match=r"judgments.jsonl:1: a judgment needs"):
        read_judgment_rows(tmp_path / "judgments.jsonl")


# ------------------------------------------------------------------ resume after a kill
def _drive(session: JudgeSession, keys: list[str]) -> list[tuple]:
    """Answer ``keys`` in turn; the spans asked (one per key, before it is applied)."""
    asked = []
    for k in keys:
        item = session.current()
        if item is None:
            break
        asked.append(item.key)
        session.answer(k)
    return asked


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.lists(st.sampled_from("yyynnsu"), min_size=1, max_size=25),
    data=st.data(),
)
def test_resume_after_a_kill_at_any_answer_loses_nothing_and_asks_nothing_twice(
    tmp_path_factory: pytest.TempPathFactory, keys: list[str], data: st.DataObject
) -> None:
    pool = _pool(14, seed=len(keys))
    whole = tmp_path_factory.mktemp("whole")
    asked_once = _drive(JudgeSession(pool, JudgmentStore(whole)), keys)
    kill = data.draw(st.integers(0, len(keys)), label="kill after answer")
    torn = data.draw(st.booleans(), label="killed while writing the next answer")
    folder = tmp_path_factory.mktemp("killed")
    first = _drive(JudgeSession(pool, JudgmentStore(folder)), keys[:kill])
    path = folder / "judgments.jsonl"
    if torn and kill < len(asked_once):  # the process dies inside the next write
        with path.open("ab") as fh:
            fh.write(b'{"qid": "q0", "path": "memory/f0.md", "start_li')
    second = _drive(JudgeSession(pool, JudgmentStore(folder)), keys[kill:])
    # the two runs ask exactly what one uninterrupted run asks, in the same order
    assert first + second == asked_once
    assert JudgmentStore(folder).answers.keys() == JudgmentStore(whole).answers.keys()
    grades = {k: r["grade"] for k, r in JudgmentStore(folder).answers.items()}
    assert grades == {k: r["grade"] for k, r in JudgmentStore(whole).answers.items()}


# ------------------------------------------------------------------ the terminal loop
def test_one_answer_per_line_and_a_finished_pool_says_so(tmp_path: Path) -> None:
    pool = _pool(6, systems=2, root=tmp_path / "data")
    session = JudgeSession(pool, JudgmentStore(tmp_path))
    out = io.StringIO()
    rc = run_loop(session, io.StringIO("x\n\n" + "n\n" * 40), out, tty=False)
    text = out.getvalue()
    assert rc == 0 and "answer with one of: y relevant" in text
    assert "done: every preset pair is decided on precision@5" in text
    n = len(read_judgment_rows(tmp_path / "judgments.jsonl"))
    again = io.StringIO()
    # a second run asks nothing and exits 0
    assert run_loop(JudgeSession(pool, JudgmentStore(tmp_path)), io.StringIO(""), again) == 0
    assert again.getvalue().startswith("done:")
    assert len(read_judgment_rows(tmp_path / "judgments.jsonl")) == n


def test_q_and_the_end_of_input_stop_with_every_answer_saved(tmp_path: Path) -> None:
    pool = _pool(8, root=tmp_path / "data")
    out = io.StringIO()
    assert run_loop(JudgeSession(pool, JudgmentStore(tmp_path)), io.StringIO("y\nq\ny\n"), out) == 0
    assert "every answer is saved: run again to resume" in out.getvalue()
    assert len(read_judgment_rows(tmp_path / "judgments.jsonl")) == 1
    assert run_loop(JudgeSession(pool, JudgmentStore(tmp_path)), io.StringIO("n\n"), out) == 0
    assert len(read_judgment_rows(tmp_path / "judgments.jsonl")) == 2


@pytest.mark.timeout(60)
def test_at_a_terminal_one_key_press_answers(tmp_path: Path) -> None:
    import threading

    pool = _pool(8, root=tmp_path / "data")
    master, slave = pty.openpty()
    out = io.StringIO()

    def press() -> None:  # each key once its prompt is shown, with no Enter
        for n, key in enumerate((b"y", b"q"), 1):
            while out.getvalue().count("[y relevant") < n:
                time.sleep(0.01)
            os.write(master, key)

    typist = threading.Thread(target=press, daemon=True)
    typist.start()
    try:
        with os.fdopen(slave, "r", buffering=1, closefd=False) as stdin:
            rc = run_loop(JudgeSession(pool, JudgmentStore(tmp_path)), stdin, out, tty=True)
    finally:
        typist.join(5)
        os.close(master)
        os.close(slave)
    assert rc == 0
    rows = read_judgment_rows(tmp_path / "judgments.jsonl")
    assert [r["grade"] for r in rows] == [1]
    assert "stopped:" in out.getvalue()


def test_query_terms_are_marked_in_the_span() -> None:
    terms = query_terms("Postmark migration server token e91b7d0?")
    assert "e91b7d0" in terms and "postmark" in [t.lower() for t in terms]
    text = "Postmark server token; commit e91b7d0 (invoices)"
    assert (
        mark_terms(text, terms)
        == "**Postmark** **server** **token**; commit **e91b7d0** (invoices)"
    )
    assert mark_terms("an invoice", ["invoice"], html_=True) == "an <mark>invoice</mark>"
    assert "\x1b[1;33minvoices\x1b[0m" in mark_terms("the invoices", ["invoice"], ansi=True)


# ------------------------------------------------------------------ a harvested folder
@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return harvest_example(tmp_path_factory.mktemp("judge") / "out")


def test_the_pool_holds_each_presets_top_k_and_the_shown_hits_as_of_the_cutoff(
    example: Path,
) -> None:
    from memlab.datasets.base import load_folder
    from memlab.eval.judge import build_pool
    from memlab.eval.judge.pool import shown_results
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset
    from memlab.store.asof import unit_time

    ds = load_folder(example)
    lab = Lab(ds, embedder="hashing", cache_vectors=True)
    pool = build_pool(lab, [preset("wsum"), preset("bm25")], 3, shown=example / "shown.trec")
    assert pool.systems == ["wsum", "bm25", "deployed"]
    keys = [it.key for it in pool.items]
    assert len(keys) == len(set(keys))  # one item per span
    cut = dict(zip(ds.queries["qid"], ds.queries["cutoff"], strict=True))
    for it in pool.items:
        assert all(0 <= r < 3 for _, r in it.ranks)
        t = unit_time(it.path)
        assert np.isnan(t) or t < cut[it.qid]  # nothing from after the question
    shown = shown_results(example / "shown.trec", list(ds.queries["qid"]))
    top = shown[shown["rank"] < 3]
    in_pool = {(k[0], k[1], k[2]) for k in keys}
    assert {
        (q, p, s) for q, p, s in top[["qid", "path", "start_line"]].itertuples(index=False)
    } <= in_pool
    ranks = pool.rank_matrix()
    assert ranks.shape == (len(pool.items), 3) and (ranks.max(axis=1) >= 0).all()


def test_memlab_judge_on_a_harvested_folder_resumes_and_finishes(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    folder = tmp_path / "out"
    shutil.copytree(example, folder)
    key = answer_key(folder)
    args = ["judge", str(folder), "--embedder", "hashing", "--preset", "wsum,openclaw"]
    monkeypatch.setattr("sys.stdin", io.StringIO("y\nn\nq\n"))
    code, out, err = cli(*args)
    assert code == 0 and "pool:" in err and "stopped:" in out
    assert len(read_judgment_rows(folder / "judgments.jsonl")) == 2
    # answer the rest from the answer key, as a reader of each span would, until done
    from memlab.datasets.base import load_folder
    from memlab.eval.judge import build_pool
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    lab = Lab(load_folder(folder), embedder="hashing", cache_vectors=True)
    pool = build_pool(lab, [preset("wsum"), preset("openclaw")], 10, shown=folder / "shown.trec")
    session = JudgeSession(pool, JudgmentStore(folder))
    while (item := session.current()) is not None:
        session.answer(key_answer(key, *item.key))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, _ = cli(*args)
    assert code == 0 and out.startswith("done: every preset pair is decided")
    # the answers are the folder's human labels
    code, out, _ = cli(
        *("eval", "folder", "--path", str(folder), "--embedder", "hashing"),
        *("--preset", "wsum,openclaw", "--qrels", "human"),
    )
    assert code == 0 and "judged@10" in out


def test_a_killed_judge_process_loses_no_answer(example: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "out"
    shutil.copytree(example, folder)
    cmd = [
        sys.executable,
        "-m",
        "memlab.cli",
        "judge",
        str(folder),
        "--embedder",
        "hashing",
        "--preset",
        "wsum,openclaw",
    ]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
    )
    assert proc.stdin is not None
    proc.stdin.write(b"y\nn\ns\n")
    proc.stdin.flush()
    path = folder / "judgments.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = read_judgment_rows(path)
    assert [r["grade"] for r in rows] == [1, 0, None]
    # the next run resumes: it asks a span none of the three answers is about
    run = subprocess.run(cmd, input=b"q\n", capture_output=True, cwd=REPO, timeout=120)
    shown = run.stdout.decode()
    assert run.returncode == 0 and "judged 2 (1 skipped)" in shown
    queries = {
        json.loads(line)["query"]: json.loads(line)["qid"]
        for line in (folder / "queries.jsonl").read_text().splitlines()
    }
    lines = shown.splitlines()
    question = next(x for x in lines if x.startswith("question: "))[len("question: ") :]
    span = next(x for x in lines if x.startswith("span: ")).split()[1]
    qid = queries[question.split("  (asked")[0]]
    path, _, range_ = span.rpartition(":")
    start, end = map(int, range_.split("-"))
    assert (qid, path, start, end) not in {
        (r["qid"], r["path"], r["start_line"], r["end_line"]) for r in rows
    }


def test_memlab_judge_never_writes_into_a_memory_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder with queries but neither dataset.json nor workspace/ is its own workspace:
    judging it would put judgments.jsonl among the user's memory files, so it is refused
    (exit 2) and nothing is written."""
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "- the gateway runs on 10.0.0.5\n")
    write(ws, "memory/2026-03-01.md", "- deployed the gateway\n")
    write(ws, "queries.jsonl", json.dumps({"qid": "q1", "query": "gateway host"}) + "\n")
    row = {"qid": "q1", "path": "MEMORY.md", "start_line": 1, "end_line": 1}
    write(ws, "evidence.jsonl", json.dumps(row) + "\n")
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    code, _, err = cli("judge", str(ws), "--embedder", "hashing", "--preset", "wsum")
    assert code == 2 and "memory workspace" in err, err
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before
