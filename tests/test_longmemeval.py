"""LongMemEval loader on a small file in the published format, written by the test."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.datasets.longmemeval import load_longmemeval, parse_longmemeval_datetime

WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _t(role: str, content: str, has_answer: bool | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer is not None:
        turn["has_answer"] = has_answer
    return turn


# Dates deliberately out of order (as in longmemeval_oracle.json).
SINGLE = {
    "question_id": "q-user-1",
    "question_type": "single-session-user",
    "question": "What is my cat called?",
    "answer": "Luna",
    "question_date": "2023/05/30 (Tue) 23:40",
    "haystack_session_ids": ["sharegpt_a_0", "answer_x_1", "ultrachat_b"],
    "haystack_dates": [
        "2023/05/20 (Sat) 02:21",
        "2023/05/20 (Sat) 09:05",
        "2023/05/18 (Thu) 23:59",
    ],
    "haystack_sessions": [
        [_t("user", "Write a poem."), _t("assistant", "Roses are red,\nviolets are blue.")],
        [_t("user", "I adopted a cat\nnamed Luna.", True), _t("assistant", "Lovely!", False)],
        [_t("user", "Plan a trip."), _t("assistant", "Sure:\n\n1. Go\n2. Return")],
    ],
    "answer_session_ids": ["answer_x_1"],
}
MULTI = {
    "question_id": "q-multi-2",
    "question_type": "multi-session",
    "question": "How many instruments do I play?",
    "answer": 3,
    "question_date": "2023/06/02 (Fri) 10:00",
    "haystack_session_ids": ["answer_m_1", "filler_9", "answer_m_2"],
    "haystack_dates": [
        "2023/05/01 (Mon) 08:00",
        "2023/05/02 (Tue) 08:00",
        "2023/05/03 (Wed) 08:00",
    ],
    "haystack_sessions": [
        [
            _t("user", "I play guitar.", True),
            _t("assistant", "Cool."),
            _t("user", "And piano too.", True),
        ],
        [_t("user", "Weather?"), _t("assistant", "Sunny.")],
        [_t("user", "Drums are my new hobby.", False), _t("assistant", "Nice!", False)],
    ],
    "answer_session_ids": ["answer_m_1", "answer_m_2", "answer_gone"],
}
ABSTAIN = {
    "question_id": "q-abs-3_abs",
    "question_type": "knowledge-update",
    "question": "What is my dog called?",
    "answer": "You never mentioned a dog.",
    "question_date": "2023/07/01 (Sat) 12:00",
    "haystack_session_ids": ["answer_z_1"],
    "haystack_dates": ["2023/05/21 (Mon) 10:00"],  # 21 May 2023 was a Sunday
    "haystack_sessions": [[_t("user", "My cat is Luna.", True), _t("assistant", "Hi Luna!")]],
    "answer_session_ids": ["answer_z_1"],
}
DATA = [SINGLE, MULTI, ABSTAIN]


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    path = tmp_path / "longmemeval_tiny.json"
    path.write_text(json.dumps(DATA))
    return path


@pytest.fixture
def lme(lme_file: Path, tmp_path: Path):
    return load_longmemeval(lme_file, tmp_path / "out")


def _lines(ws: Path, rel: str) -> list[str]:
    return (ws / rel).read_text().splitlines()


def test_groups_and_queries(lme) -> None:
    assert set(lme.workspaces) == {"q-user-1", "q-multi-2", "q-abs-3_abs"}
    q = lme.queries
    assert list(q["qid"]) == list(q["group"]) == ["q-user-1", "q-multi-2", "q-abs-3_abs"]
    assert list(q["category"]) == ["single-session-user", "multi-session", "knowledge-update"]
    assert list(q["answer"]) == ["Luna", "3", "You never mentioned a dog."]
    assert list(q["abstention"]) == [False, False, True]
    expected = [
        datetime(2023, 5, 30, 23, 40, tzinfo=UTC),
        datetime(2023, 6, 2, 10, 0, tzinfo=UTC),
        datetime(2023, 7, 1, 12, 0, tzinfo=UTC),
    ]
    assert list(q["time"]) == [d.timestamp() for d in expected]
    # The memory as of the question (memlab.store.asof): the lab hides later dates.
    assert list(q["cutoff"]) == list(q["time"])


def test_daily_files_sorted_by_time_one_line_per_turn(lme) -> None:
    ws = lme.workspaces["q-user-1"]
    assert sorted(p.name for p in (ws / "memory").iterdir()) == ["2023-05-18.md", "2023-05-20.md"]
    assert _lines(ws, "memory/2023-05-18.md") == [
        "## Session S1 — 2023/05/18 (Thu) 23:59",
        "[S1:1] User: Plan a trip.",
        "[S1:2] Assistant: Sure: 1. Go 2. Return",
    ]
    assert _lines(ws, "memory/2023-05-20.md") == [
        "## Session S2 — 2023/05/20 (Sat) 02:21",
        "[S2:1] User: Write a poem.",
        "[S2:2] Assistant: Roses are red, violets are blue.",
        "",
        "## Session S3 — 2023/05/20 (Sat) 09:05",
        "[S3:1] User: I adopted a cat named Luna.",
        "[S3:2] Assistant: Lovely!",
    ]
    # Original ids (which contain the word "answer") never reach the memory text.
    for w in lme.workspaces.values():
        for p in w.rglob("*.md"):
            assert "answer" not in p.read_text()


def test_evidence_turn_spans_session_fallback_and_abstention(lme) -> None:
    got = [
        (r.qid, r.path, r.start_line, r.end_line, r.grade, r.span_id, r.session_id)
        for r in lme.evidence.itertuples()
    ]
    assert got == [
        ("q-user-1", "memory/2023-05-20.md", 6, 6, 1, "S3:1", "answer_x_1"),
        ("q-multi-2", "memory/2023-05-01.md", 2, 2, 1, "S1:1", "answer_m_1"),
        ("q-multi-2", "memory/2023-05-01.md", 4, 4, 1, "S1:3", "answer_m_1"),
        ("q-multi-2", "memory/2023-05-03.md", 2, 3, 1, "S3", "answer_m_2"),
    ]
    ws = lme.workspaces["q-multi-2"]
    assert _lines(ws, "memory/2023-05-03.md") == [
        "## Session S3 — 2023/05/03 (Wed) 08:00",
        "[S3:1] User: Drums are my new hobby.",
        "[S3:2] Assistant: Nice!",
    ]
    for r in lme.evidence.itertuples():
        lines = _lines(lme.workspaces[r.qid], r.path)
        prefix = f"[{r.span_id}:" if ":" not in r.span_id else f"[{r.span_id}] "
        assert all(ln.startswith(prefix) for ln in lines[r.start_line - 1 : r.end_line])


def test_info_counts_and_defects(lme) -> None:
    info = lme.info
    assert info["questions"] == 3 and info["abstention_questions"] == 1
    assert (info["sessions"], info["turns"], info["has_answer_turns"]) == (7, 15, 4)
    assert (info["evidence_turn_spans"], info["evidence_session_spans"]) == (3, 1)
    assert info["license"] == "MIT"
    d = info["defects"]
    assert d["turns_multiline_flattened"] == 3
    assert d["answer_sessions_without_marked_turns"] == 1
    assert d["answer_sessions_not_in_haystack"] == 1
    assert d["weekday_mismatch"] == 1
    assert d["questions_without_evidence"] == 0
    assert sum(d.values()) == 6


def test_limit_default_cache_and_reuse(
    lme_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sha = hashlib.sha256(lme_file.read_bytes()).hexdigest()[:12]
    ds = load_longmemeval(lme_file, limit=2)
    assert ds.root == tmp_path / "cache" / "memlab" / f"longmemeval-{sha}-first2"
    assert list(ds.queries["qid"]) == ["q-user-1", "q-multi-2"]
    assert set(ds.workspaces) == {"q-user-1", "q-multi-2"}
    (ds.root / "sentinel").write_text("x")
    assert load_longmemeval(lme_file, limit=2).fingerprint == ds.fingerprint
    assert (ds.root / "sentinel").exists()
    full = load_longmemeval(lme_file)
    assert full.root.name == f"longmemeval-{sha}" and len(full.queries) == 3
    # Same out_dir, different limit: refused without overwrite.
    with pytest.raises(FileExistsError, match="overwrite=True"):
        load_longmemeval(lme_file, full.root, limit=1)
    assert len(load_longmemeval(lme_file, full.root, limit=1, overwrite=True).queries) == 1


def test_deterministic(lme_file: Path, tmp_path: Path) -> None:
    a = load_longmemeval(lme_file, tmp_path / "a")
    b = load_longmemeval(lme_file, tmp_path / "b")
    assert a.fingerprint == b.fingerprint and a.evidence.equals(b.evidence)


def test_missing_question_date_gives_nan(tmp_path: Path) -> None:
    inst = {k: v for k, v in SINGLE.items() if k != "question_date"}
    path = tmp_path / "x.json"
    path.write_text(json.dumps([inst]))
    ds = load_longmemeval(path, tmp_path / "o")
    assert math.isnan(ds.queries["time"].iloc[0])
    assert math.isnan(ds.queries["cutoff"].iloc[0])  # no cut-off: the whole haystack
    assert ds.info["defects"]["question_date_unparsed"] == 1


@pytest.mark.parametrize(
    ("content", "error", "pattern"),
    [
        ("{not json", ValueError, r"not a LongMemEval JSON"),
        (json.dumps({"data": []}), ValueError, r"expected a JSON list of LongMemEval question"),
        (json.dumps([{"question_id": "a"}]), ValueError, r"needs 'question_type'"),
        (
            json.dumps([dict(SINGLE, haystack_dates=SINGLE["haystack_dates"][:2])]),
            ValueError,
            r"differ in length",
        ),
        (
            json.dumps([dict(SINGLE, haystack_dates=["2023-05-20", "x", "y"])]),
            ValueError,
            r"q-user-1: haystack_dates\[0\]",
        ),
        (json.dumps([SINGLE, SINGLE]), ValueError, r"duplicate question_id"),
        (json.dumps([dict(SINGLE, question_id="../x")]), ValueError, r"folder name"),
    ],
)
def test_clear_errors(tmp_path: Path, content: str, error: type, pattern: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(error, match=pattern):
        load_longmemeval(path, tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_missing_file_and_bad_limit(tmp_path: Path, lme_file: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"absent\.json"):
        load_longmemeval(tmp_path / "absent.json", tmp_path / "o")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="limit must be a positive integer"):
            load_longmemeval(lme_file, tmp_path / "o", limit=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21)),
        ("2023/05/30 (Tue) 23:40", datetime(2023, 5, 30, 23, 40)),
        ("2023/1/2 (Mon) 0:05", datetime(2023, 1, 2, 0, 5)),
        ("2023/05/20 02:21", datetime(2023, 5, 20, 2, 21)),
    ],
)
def test_parse_longmemeval_datetime(text: str, expected: datetime) -> None:
    assert parse_longmemeval_datetime(text) == expected.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["2023/02/30 (Thu) 10:00", "2023/05/20 (Sat) 24:00", "2023-05-20 02:21", ""]
)
def test_parse_longmemeval_datetime_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"LongMemEval date|impossible"):
        parse_longmemeval_datetime(text)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)))
def test_parse_longmemeval_datetime_roundtrip(dt: datetime) -> None:
    dt = dt.replace(second=0, microsecond=0)
    text = f"{dt:%Y/%m/%d} ({WEEKDAYS[dt.weekday()]}) {dt:%H:%M}"
    assert parse_longmemeval_datetime(text) == dt.replace(tzinfo=UTC)


def test_memlab_best_reads_its_files_as_user_assistant_conversations(lme) -> None:
    # The third-benchmark path: memlab-best's speaker rule and file context are chosen
    # from the files' speaker labels, so a LongMemEval workspace must read as a
    # user-assistant conversation (the "[S3:2] User:" prefix included).
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import memlab_best
    from memlab.stages.shape import conversation_files, user_assistant_files

    lc = Lab(lme, embedder="hashing", unit="turn", progress=False).candidates_for_system(
        memlab_best()
    )
    cs = lc.cs
    assert len(cs.table) > 0
    assert user_assistant_files(cs).all()
    assert conversation_files(cs).all()
