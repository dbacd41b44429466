"""BEAM loader: synthetic BEAM-shaped chats (always run) and the shipped dev half (skipped
with a message when ../shared/datasets/beam is absent)."""

from __future__ import annotations

import copy
import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memlab.datasets.base import load_folder
from memlab.datasets.beam import (
    BEAM_CATEGORIES,
    find_chats,
    load_beam,
    parse_time_anchor,
)
from tests.test_cli import run

# --------------------------------------------------------------------------- synthetic


def _msg(mid: int, role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "id": mid, "content": content, **extra}


CHAT = [
    {
        "batch_number": 1,
        "time_anchor": None,
        "turns": [
            [
                _msg(0, "user", "Plan the kiwi launch ->-> 1,1", time_anchor="March-15-2024"),
                _msg(1, "assistant", "### Plan\n\n1. Draft\n2. Ship"),
            ],
            [_msg(2, "user", "The zebra deadline is Friday."), _msg(3, "assistant", "Noted.")],
        ],
    },
    {
        "batch_number": 2,
        "turns": [
            [
                _msg(4, "user", "Switch the database to postgres.", time_anchor="Apr-5-2024"),
                _msg(5, "assistant", "Done\r\nwith the switch."),
            ]
        ],
    },
    {
        "batch_number": 3,
        "turns": [[_msg(6, "user", "Same day, more walrus.", time_anchor="april-05-2024")]],
    },
]
QUESTIONS = {
    "abstention": [{"question": "What is my cat called?", "ideal_response": "No information."}],
    "information_extraction": [
        {"question": "When is the zebra deadline?", "answer": "Friday", "source_chat_ids": [2]},
        {"question": "No evidence here", "answer": "x", "source_chat_ids": []},
    ],
    "knowledge_update": [
        {
            "question": "Which database?",
            "answer": "postgres",
            "difficulty": "easy",
            "source_chat_ids": {"original_info": [0, 0], "updated_info": [4, "5"]},
        }
    ],
    "event_ordering": [
        {"question": "Order?", "answer": "a, b", "source_chat_ids": [[0, 2], 6, 99, "x"]}
    ],
}


def _write_chat(folder: Path, chat: Any = CHAT, questions: Any = QUESTIONS) -> Path:
    (folder / "probing_questions").mkdir(parents=True, exist_ok=True)
    (folder / "chat.json").write_text(json.dumps(chat))
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))
    return folder


@pytest.fixture
def beam_dir(tmp_path: Path) -> Path:
    root = tmp_path / "beam"
    _write_chat(root / "100K" / "1")
    two = copy.deepcopy(CHAT[:1])
    _write_chat(root / "100K" / "10", two, {"summarization": QUESTIONS["information_extraction"]})
    _write_chat(root / "100K" / "2", two, {"abstention": QUESTIONS["abstention"]})
    return root


def test_one_workspace_per_chat_one_file_per_batch_one_line_per_message(
    beam_dir: Path, tmp_path: Path
) -> None:
    ds = load_beam(beam_dir, tmp_path / "out")
    assert list(ds.workspaces) == ["100K-1", "100K-2", "100K-10"]  # numeric order
    mem = ds.workspaces["100K-1"] / "memory"
    assert sorted(p.name for p in mem.iterdir()) == ["2024-03-15.md", "2024-04-05.md"]
    assert (mem / "2024-03-15.md").read_text().splitlines() == [
        "## Batch 1 — March-15-2024",
        "[m0] User: Plan the kiwi launch ->-> 1,1",
        "[m1] Assistant: ### Plan 1. Draft 2. Ship",
        "[m2] User: The zebra deadline is Friday.",
        "[m3] Assistant: Noted.",
    ]
    # batches 2 and 3 share a date: one file, separated by a blank line
    assert (mem / "2024-04-05.md").read_text().splitlines() == [
        "## Batch 2 — Apr-5-2024",
        "[m4] User: Switch the database to postgres.",
        "[m5] Assistant: Done with the switch.",
        "",
        "## Batch 3 — april-05-2024",
        "[m6] User: Same day, more walrus.",
    ]
    assert ds.info["chats"] == 3 and ds.info["batches"] == 5 and ds.info["messages"] == 7 + 4 + 4
    assert ds.info["messages_multiline_flattened"] == 2 + 1 + 1


def test_questions_evidence_and_defects(beam_dir: Path, tmp_path: Path) -> None:
    ds = load_beam(beam_dir, tmp_path / "out")
    q = ds.queries.set_index("qid")
    assert list(q.index[:5]) == [
        "100K-1:abstention:0",
        "100K-1:information_extraction:0",
        "100K-1:information_extraction:1",
        "100K-1:knowledge_update:0",
        "100K-1:event_ordering:0",
    ]
    assert q.loc["100K-1:knowledge_update:0", "category"] == "knowledge_update"
    assert q.loc["100K-1:knowledge_update:0", "answer"] == "postgres"
    assert q.loc["100K-1:knowledge_update:0", "difficulty"] == "easy"
    assert q.loc["100K-1:abstention:0", "answer"] == "No information."
    # asked one day after the latest anchor of its chat
    latest = datetime(2024, 4, 5, tzinfo=UTC) + timedelta(days=1)
    assert q.loc["100K-1:abstention:0", "time"] == latest.timestamp()
    ev = ds.evidence.groupby("qid")["span_id"].apply(list).to_dict()
    assert ev["100K-1:information_extraction:0"] == ["m2"]
    # dict of lists flattened in key order; duplicate dropped; digit string read as an id
    assert ev["100K-1:knowledge_update:0"] == ["m0", "m4", "m5"]
    # nested list flattened; unknown and malformed ids dropped
    assert ev["100K-1:event_ordering:0"] == ["m0", "m2", "m6"]
    assert not any(qid.split(":")[1] == "abstention" for qid in ev)
    # each span lies on its message's line
    for row in ds.evidence.itertuples():
        ws = ds.workspaces[row.qid.split(":")[0]]
        assert row.start_line == row.end_line
        line = (ws / row.path).read_text().splitlines()[row.start_line - 1]
        assert line.startswith(f"[{row.span_id}] ")
    assert ds.info["abstention_questions"] == 2
    assert ds.info["questions_per_category"]["abstention"] == 2
    d = ds.info["defects"]
    assert d["evidence_nested_lists"] == 1
    assert d["evidence_ids_duplicate"] == 1
    assert d["evidence_ids_normalised"] == 1
    assert d["evidence_ids_unknown_message"] == 1
    assert d["evidence_ids_malformed"] == 1
    assert d["questions_without_evidence"] == 2  # chat 1 and chat 10 share the empty list
    assert d["unknown_categories"] == 0 and set(BEAM_CATEGORIES) >= set(ds.queries["category"])


def test_default_out_dir_is_cache_keyed_by_sha_and_reused(
    beam_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = load_beam(beam_dir)
    assert ds.root.parent == tmp_path / "cache" / "memlab"
    assert ds.root.name == f"beam-{ds.info['source_sha256'][:12]}"
    again = load_beam(beam_dir / "100K")  # the split folder names the same chats
    assert again.root == ds.root and again.fingerprint == ds.fingerprint
    assert load_folder(ds.root).fingerprint == ds.fingerprint
    chat = beam_dir / "100K" / "2" / "chat.json"
    chat.write_text(chat.read_text().replace("zebra", "okapi"))
    changed = load_beam(beam_dir)
    assert (
        changed.root != ds.root
        and "okapi" in (changed.workspaces["100K-2"] / "memory" / "2024-03-15.md").read_text()
    )


def test_one_chat_folder_loads_alone(beam_dir: Path, tmp_path: Path) -> None:
    ds = load_beam(beam_dir / "100K" / "10", tmp_path / "o")
    assert list(ds.workspaces) == ["100K-10"] and len(ds.queries) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March-15-2024", datetime(2024, 3, 15, tzinfo=UTC)),
        ("sep-1-2023", datetime(2023, 9, 1, tzinfo=UTC)),
        (" December-31-1999 ", datetime(1999, 12, 31, tzinfo=UTC)),
    ],
)
def test_parse_time_anchor(text: str, expected: datetime) -> None:
    assert parse_time_anchor(text) == expected


@pytest.mark.parametrize("text", ["2024-03-15", "Smarch-15-2024", "February-30-2024", None, ""])
def test_parse_time_anchor_rejects(text: Any) -> None:
    with pytest.raises(ValueError, match="time anchor"):
        parse_time_anchor(text)


def _broken(mutate: Any) -> Any:
    chat = copy.deepcopy(CHAT)
    mutate(chat)
    return chat


@pytest.mark.parametrize(
    ("chat", "questions", "match"),
    [
        ({"batches": []}, QUESTIONS, r"chat\.json: expected a non-empty JSON list of batches"),
        (_broken(lambda c: c[0].pop("turns")), QUESTIONS, r"chat\.json: batch 0 needs 'turns'"),
        (
            _broken(lambda c: c[1]["turns"][0][1].pop("id")),
            QUESTIONS,
            r"chat\.json: batch 1 turns\[0\]\[1\]: 'id' should be an integer",
        ),
        (
            _broken(lambda c: c[0]["turns"][1][0].update(id=1)),
            QUESTIONS,
            r"batch 0 turns\[1\]\[0\]: duplicate message 'id' 1",
        ),
        (
            _broken(lambda c: c[0]["turns"][0][1].update(content=None)),
            QUESTIONS,
            r"message 1 needs a 'content' string",
        ),
        (
            _broken(lambda c: c[1]["turns"][0][0].pop("time_anchor")),
            QUESTIONS,
            r"chat\.json: batch 1 \(batch_number 2\) has no 'time_anchor'",
        ),
        (
            _broken(lambda c: c[2]["turns"][0][0].update(time_anchor="2024-05-01")),
            QUESTIONS,
            r"chat\.json: batch 2 'time_anchor': not a BEAM time anchor",
        ),
        (CHAT, [], r"probing_questions\.json: expected a JSON object"),
        (CHAT, {"summarization": {}}, r"probing_questions\.json: 'summarization' should be a list"),
        (
            CHAT,
            {"summarization": [{"q": "x"}]},
            r"probing_questions\.json: summarization\[0\] needs a 'question' string",
        ),
    ],
)
def test_malformed_input_names_file_and_field(
    tmp_path: Path, chat: Any, questions: Any, match: str
) -> None:
    folder = _write_chat(tmp_path / "100K" / "1", chat, questions)
    with pytest.raises(ValueError, match=match):
        load_beam(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing half-built is left behind


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"BEAM not found: looked at the path given"):
        load_beam(tmp_path / "nope", tmp_path / "o")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no BEAM chat"):
        find_chats(tmp_path / "empty")
    folder = _write_chat(tmp_path / "100K" / "1")
    (folder / "probing_questions" / "probing_questions.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"probing_questions\.json"):
        load_beam(folder, tmp_path / "o")
    (folder / "probing_questions" / "probing_questions.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"probing_questions\.json is not a BEAM"):
        load_beam(folder, tmp_path / "o")


def test_cli_eval_beam_leaves_abstention_out(
    beam_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = run(
        "eval", "beam", "--path", str(beam_dir), "--unit", "turn", "--embedder", "hashing",
        "--preset", "bm25", "--metrics", "recall@5", "--json",
    )  # fmt: skip
    (row,) = json.loads(p.stdout)
    # 8 questions: 2 abstention and 2 with an empty evidence list are left out, 4 scored
    assert row["n_queries"] == 4
    # BM25 finds the zebra line (chats 1 and 10: 1 each), 1 of 3 database spans, no "Order?"
    assert row["metrics"]["recall@5"] == pytest.approx((1 + 1 + 1 / 3 + 0) / 4)


def test_cli_eval_says_how_the_stages_read_the_files(
    beam_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    p = run(
        "eval", "beam", "--path", str(beam_dir), "--unit", "turn", "--embedder", "hashing",
        "--preset", "memlab-best", "--metrics", "recall@5",
    )  # fmt: skip
    m = re.search(
        r"memlab-best reads (\d+) files: file context in (\d+) conversations; role rule in "
        r"(\d+) user–assistant files, prev/next window in the other (\d+)",
        p.stdout,
    )
    assert m, p.stdout
    files, conv, ua, other = map(int, m.groups())
    # Every BEAM daily log is a user–assistant chat, so memlab-best's role rule and file
    # context both apply to every file.
    assert files > 0 and conv == ua == files and other == 0
    # The role rule switched off: the line names only the stage that runs.
    p = run(
        "eval", "beam", "--path", str(beam_dir), "--unit", "turn", "--embedder", "hashing",
        "--preset", "memlab-best", "--set", "neighbor_shape=off", "--metrics", "recall@5",
    )  # fmt: skip
    assert f"reads {files} files: file context in {conv} conversations (" in p.stdout
    assert "role rule" not in p.stdout
    # No shape-aware stage, no line.
    p = run(
        "eval", "beam", "--path", str(beam_dir), "--unit", "turn", "--embedder", "hashing",
        "--preset", "bm25", "--metrics", "recall@5",
    )  # fmt: skip
    assert "reads" not in p.stdout and "role rule" not in p.stdout


# --------------------------------------------------------------------------- shipped dev half


def _real_dir() -> Path:
    env = os.environ.get("MEMLAB_BEAM")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared/datasets/beam"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = _real_dir()
    if not (path / "100K").is_dir():
        pytest.skip(f"BEAM not found at {path} (set MEMLAB_BEAM to the BEAM folder)")
    return load_beam(path, tmp_path_factory.mktemp("beam") / "out")


def test_shipped_dev_half_counts(real: Any) -> None:
    info = real.info
    assert (info["chats"], info["batches"], info["messages"]) == (10, 40, 2432)
    assert info["questions"] == 200 and info["abstention_questions"] == 20
    assert info["questions_per_category"] == {c: 20 for c in BEAM_CATEGORIES}
    assert (info["evidence_ids_total"], info["evidence_ids_valid"]) == (569, 559)
    assert {k: v for k, v in info["defects"].items() if v} == {
        "evidence_nested_lists": 1,
        "evidence_ids_duplicate": 10,
        "questions_without_evidence": 1,
    }
    assert real.queries["group"].value_counts().to_dict() == {f"100K-{n}": 20 for n in range(1, 11)}


def test_shipped_lines_are_messages(real: Any) -> None:
    lines = [
        ln
        for ws in real.workspaces.values()
        for p in sorted(ws.rglob("*.md"))
        for ln in p.read_text().splitlines()
    ]
    messages = [ln for ln in lines if ln.startswith("[m")]
    assert len(messages) == 2432
    assert all(ln.startswith("## Batch ") for ln in lines if ln and not ln.startswith("[m"))
