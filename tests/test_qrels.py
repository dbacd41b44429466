"""A folder's relevance labels: human judgments (judgments.jsonl) and implicit evidence
chosen by --qrels, and every span checked against its workspace at load (Hypothesis: every
span past a file's end, or on a file the workspace does not hold, is refused, naming the
question, the file and the line)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.datasets.base import load_folder
from memlab.datasets.judgments import select_qrels
from memlab.datasets.validate import SpanError
from tests.conftest import cli, write
from tests.example_agent import harvest_example


def _folder(root: Path, evidence: list[dict], text: str = "a\nb\nc\n") -> Path:
    write(root / "workspace", "memory/2026-01-02.md", text)
    write(root / "workspace", "MEMORY.md", "# notes\n- one\n")
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"qid": q, "query": "x"}) + "\n" for q in ("q1", "q2"))
    )
    (root / "evidence.jsonl").write_text("".join(json.dumps(r) + "\n" for r in evidence))
    return root


def test_select_qrels_human_implicit_and_both() -> None:
    ev = pd.DataFrame(
        [
            {"qid": "q1", "path": "a.md", "start_line": 1, "end_line": 2, "judge": "implicit"},
            {"qid": "q1", "path": "b.md", "start_line": 3, "end_line": 3, "judge": "implicit"},
            {"qid": "q2", "path": "c.md", "start_line": 1, "end_line": 1},  # by hand
        ]
    )
    human = pd.DataFrame(
        [
            {
                "qid": "q1",
                "path": "b.md",
                "start_line": 3,
                "end_line": 3,
                "grade": 0,
                "judge": "human",
                "time": 1.0,
            },
            {
                "qid": "q2",
                "path": "d.md",
                "start_line": 2,
                "end_line": 5,
                "grade": 1,
                "judge": "human",
                "time": 2.0,
            },
        ]
    )
    spans = lambda df: sorted(map(tuple, df[["qid", "path"]].values.tolist()))  # noqa: E731
    rel, judged = select_qrels(ev, human, "implicit")
    assert spans(rel) == [("q1", "a.md"), ("q1", "b.md")] and len(judged) == 2
    rel, judged = select_qrels(ev, human, "human")
    assert spans(rel) == [("q2", "c.md"), ("q2", "d.md")]
    assert sorted(judged["grade"]) == [0, 1, 1]  # the not-relevant answer is judged too
    rel, judged = select_qrels(ev, human, "both")
    # the human's "not relevant" replaces the implicit label of the same span
    assert spans(rel) == [("q1", "a.md"), ("q2", "c.md"), ("q2", "d.md")]
    assert len(judged) == 4
    assert rel.loc[rel["path"] == "d.md", "span_id"].tolist() == ["h0"]
    # a folder with no judge at all: its evidence is complete, nothing is "judged"
    plain = ev.drop(columns="judge")
    assert select_qrels(plain, human.iloc[:0], "both")[1] is None
    with pytest.raises(ValueError, match="qrels must be one of"):
        select_qrels(ev, human, "all")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 12),
    newline=st.booleans(),
    start=st.integers(1, 16),
    length=st.integers(0, 6),
    judged=st.booleans(),
)
def test_every_span_past_a_files_end_is_refused(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    newline: bool,
    start: int,
    length: int,
    judged: bool,
) -> None:
    root = tmp_path_factory.mktemp("f")
    text = "\n".join(f"line {i}" for i in range(1, n + 1)) + ("\n" if newline else "")
    end = start + length
    span = {"qid": "q1", "path": "memory/2026-01-02.md", "start_line": start, "end_line": end}
    ok = {"qid": "q2", "path": "MEMORY.md", "start_line": 1, "end_line": 2}
    if judged:  # the same rule for a judgment as for evidence
        _folder(root, [ok], text)
        (root / "judgments.jsonl").write_text(json.dumps({**span, "grade": 1, "time": 0}) + "\n")
    else:
        _folder(root, [span, ok], text)
    # OpenClaw numbers the empty line after a final newline (a chunk may end on it)
    last = n + 1 if newline else n
    if end <= last:
        ds = load_folder(root)
        assert ds.judged is None if not judged else len(ds.judged) == 2
    else:
        bad = start if start > last else end
        with pytest.raises(SpanError) as info:
            load_folder(root)
        msg = str(info.value)
        assert "question q1" in msg and "memory/2026-01-02.md" in msg
        assert f"line {bad} " in msg and f"({n} lines)" in msg


def test_a_span_on_a_file_the_workspace_does_not_hold_is_refused(tmp_path: Path) -> None:
    _folder(tmp_path, [{"qid": "q2", "path": "memory/gone.md", "start_line": 1, "end_line": 1}])
    code, _, err = cli("eval", "folder", "--path", str(tmp_path), "--embedder", "hashing")
    assert code == 2
    assert "question q2: memory/gone.md is not a memory file of the workspace" in err
    _folder(tmp_path, [{"qid": "q1", "path": "../x.md", "start_line": 1, "end_line": 1}])
    with pytest.raises(SpanError, match=r"question q1: \.\./x\.md is not a memory file"):
        load_folder(tmp_path)


def test_a_harvested_folder_loads_after_its_reanchoring(tmp_path: Path) -> None:
    out = harvest_example(tmp_path / "out")
    ds = load_folder(out)
    assert len(ds.evidence) > 0 and set(ds.evidence["judge"]) == {"implicit"}
    assert ds.judged is not None and len(ds.judged) == len(ds.evidence)
    assert (ds.judged["last_line"] > 0).all()
    with pytest.raises(ValueError, match="--qrels human leaves no human judgment"):
        load_folder(out, qrels="human")
    # a judgment of lines the file no longer has (it changed since) is refused at load
    (out / "judgments.jsonl").write_text(
        json.dumps(
            {
                "qid": ds.queries["qid"][0],
                "path": "memory/2026-02-11.md",
                "start_line": 240,
                "end_line": 240,
                "grade": 1,
                "time": 0,
            }
        )
        + "\n"
    )
    with pytest.raises(SpanError, match=r"judgments.jsonl: question .*line 240 .*\(7 lines\)"):
        load_folder(out)
    (out / "judgments.jsonl").unlink()
    # a re-harvest keeps the judgments (the qids are stable)
    (out / "judgments.jsonl").write_text(
        json.dumps(
            {
                "qid": ds.queries["qid"][0],
                "path": "memory/2026-02-11.md",
                "start_line": 1,
                "end_line": 7,
                "grade": 1,
                "time": 0,
            }
        )
        + "\n"
    )
    harvest_example(out)
    assert len(load_folder(out, qrels="human").judged) == 1
    shutil.rmtree(out)


def test_qrels_is_a_folder_option(tmp_path: Path) -> None:
    code, _, err = cli("eval", "synthetic", "--qrels", "human", "--embedder", "hashing")
    assert code == 2 and "--qrels human picks a folder dataset's labels" in err
