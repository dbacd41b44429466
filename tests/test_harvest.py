"""memlab harvest: the transcript codec, follow-up linking, anchoring, the query-log report,
the refusals, and the committed example agent harvested with its exact counts."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from memlab.datasets.harvest import codec, harvest
from memlab.datasets.harvest.anchor import WorkspaceFiles, anchor, norm_line
from memlab.datasets.harvest.codec import parse_entries, read_jsonl_session, transcript_files
from memlab.datasets.harvest.link import SearchCall, citations, link_session
from memlab.datasets.harvest.report import query_log_report, reasked
from tests.conftest import REPO, cli
from tests.transcripts import (
    T0,
    assistant,
    get_payload,
    header,
    hit,
    result,
    search_payload,
    user,
    write_jsonl,
    write_store,
)

EXAMPLE = REPO / "datasets" / "example-agent"


def _session(records: list) -> codec.Session:
    counts: Counter[str] = Counter()
    h, entries = parse_entries([(f"L{i}", r, None) for i, r in enumerate(records, 1)], counts)
    return codec.Session(h["id"] if h else "s", "test", None, entries)


def _digests(*roots: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------ codec
def test_parse_entries_counts_every_skipped_record() -> None:
    counts: Counter[str] = Counter()
    records = [
        ("L1", header("s1"), None),
        ("L2", None, None),  # a line that did not parse
        ("L3", [1, 2], None),  # JSON, not an object
        ("L4", {"type": "bookmark", "id": "x"}, None),
        ("L5", {"type": "model_change", "id": "m", "provider": "p", "modelId": "x"}, None),
        ("L6", {"type": "message", "id": "n", "message": {"content": "no role"}}, None),
        ("L7", user("u1", T0, "hi"), None),
        ("L8", user("u1", T0 + 1, "again"), None),  # the same id twice
        ("L9", {"type": "message", "message": {"role": "user", "content": "legacy"}}, None),
        ("L9b", {"role": "assistant", "content": "bare", "timestamp": 3.0e12}, None),
        ("L10", header("s2"), None),  # a second header
        ("L11", {"type": "message", "id": "c", "message": {"role": "custom", "content": ""}}, 5.0),
    ]
    h, entries = parse_entries(records, counts)
    assert h is not None and h["id"] == "s1"
    assert [e.id for e in entries] == ["u1", "L9", "L9b"]  # no id: the line's fallback
    assert entries[1].text == "legacy" and math.isnan(entries[1].time)
    assert entries[2].role == "assistant" and entries[2].parts == ["bare"]
    assert entries[2].time == 3.0e9
    assert counts == {
        codec.MALFORMED: 2,
        codec.UNKNOWN_TYPE: 1,
        codec.OTHER_TYPE: 3,  # model_change, the second header, a custom message
        codec.NO_ROLE: 1,
        codec.DUPLICATE_ENTRY: 1,
    }


def test_entry_time_from_iso_then_message_ms_then_row() -> None:
    counts: Counter[str] = Counter()
    no_iso = {"type": "message", "id": "a", "message": {"role": "user", "timestamp": 1.5e12}}
    bare = {"type": "message", "id": "b", "message": {"role": "user"}}
    _, entries = parse_entries(
        [("L1", user("u", T0, "x"), None), ("L2", no_iso, None), ("L3", bare, 2.0e12)], counts
    )
    assert [e.time for e in entries] == [T0, 1.5e9, 2.0e9]


def test_assistant_parts_keep_text_and_calls_in_order() -> None:
    rec = assistant("a", T0, "looking", ("c1", "memory_search", {"query": "q"}), "done")
    rec["message"]["content"].insert(0, {"type": "thinking", "thinking": "hmm"})
    rec["message"]["content"].append(
        {"type": "toolUse", "id": "c2", "name": "memory_get", "input": {"path": "a.md"}}
    )
    (e,) = _session([rec]).entries
    assert e.parts[0] == "looking" and e.parts[2] == "done"
    assert (e.parts[1].id, e.parts[1].name, e.parts[1].arguments) == (
        "c1",
        "memory_search",
        {"query": "q"},
    )
    assert e.parts[3].arguments == {"path": "a.md"}


def test_read_jsonl_session_id_from_header_or_file_name(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    a = write_jsonl(tmp_path / "x.jsonl", [header("abc"), user("u", T0, "hi"), "{not json"])
    b = write_jsonl(tmp_path / "legacy-1.jsonl.reset.2026-01-01T10-00-00.000Z", [user("u", T0, "")])
    s = read_jsonl_session(a, counts)
    assert s is not None and s.id == "abc" and s.version == 4 and len(s.entries) == 1
    assert read_jsonl_session(b, counts).id == "legacy-1"
    assert counts[codec.MALFORMED] == 1
    (tmp_path / "link.jsonl").symlink_to(a)
    assert read_jsonl_session(tmp_path / "link.jsonl", counts) is None
    assert counts[codec.NOT_REGULAR] == 1


def test_transcript_files_are_sessions_and_their_archives_only(tmp_path: Path) -> None:
    names = [
        "a.jsonl",
        "a.trajectory.jsonl",
        "a.checkpoint.0b7d5e1c-2f4a-4c1e-9a3b-8d6f0e2a1c55.jsonl",
        "b.jsonl.reset.2026-01-01T10-00-00.000Z",
        "c.jsonl.deleted.2026-01-01T10-00-00.000Z",
        "d.jsonl.reset.2026-01-01T10-00-00.000Z.zst",
        "sessions.json",
        "notes.md",
    ]
    for n in names:
        (tmp_path / n).write_text("")
    got = [p.name for p in transcript_files(tmp_path)]
    assert got == [names[0], names[3], names[4]]
    assert transcript_files(tmp_path / "missing") == []


def test_a_wal_store_is_read_without_a_file_written_beside_it(tmp_path: Path) -> None:
    """A WAL-mode database opened ``mode=ro`` would gain ``-shm``/``-wal`` files; closed, it
    is opened immutable; with an agent's open ``-wal`` beside it, a private copy is read
    (the uncommitted-to-the-main-file rows included) and the folder is left byte for byte."""
    sessions = {"s1": [header("s1"), user("u1", T0, "a")]}
    db = write_store(tmp_path / "state" / "agent.sqlite", sessions, wal=True)
    before = _digests(tmp_path / "state")
    got = [s.id for s in codec.read_store_sessions(db, Counter())]
    assert got == ["s1"] and _digests(tmp_path / "state") == before
    # an agent still running: its last rows live in the -wal file only
    live = sqlite3.connect(db)
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at)"
        " VALUES (?, ?, ?, ?)",
        ("s2", 0, json.dumps(header("s2")), int(T0 * 1000)),
    )
    live.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at)"
        " VALUES (?, ?, ?, ?)",
        ("s2", 1, json.dumps(user("v1", T0, "b")), int(T0 * 1000)),
    )
    live.commit()
    try:
        assert (db.parent / "agent.sqlite-wal").stat().st_size > 0
        before = _digests(tmp_path / "state")
        got = {s.id: [e.id for e in s.entries] for s in codec.read_store_sessions(db, Counter())}
        assert got == {"s1": ["u1"], "s2": ["v1"]}
        assert _digests(tmp_path / "state") == before
    finally:
        live.close()


def test_store_read_only_with_and_without_a_zstd_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_store(
        tmp_path / "agent.sqlite",
        {
            "s1": [header("s1"), user("u1", T0, "a"), user("u2", T0 + 1, "b")],
            "s2": [header("s2"), user("v1", T0, "c")],
        },
        compressed={2},
    )
    before = _digests(tmp_path)
    monkeypatch.setattr(codec, "zstd_decoder", lambda: None)
    counts: Counter[str] = Counter()
    got = {s.id: [e.id for e in s.entries] for s in codec.read_store_sessions(db, counts)}
    assert got == {"s1": ["u1"], "s2": ["v1"]} and counts == {codec.COMPRESSED: 1}
    monkeypatch.setattr(codec, "zstd_decoder", lambda: lambda blob, size: blob[1:])
    counts.clear()
    got = {s.id: [e.id for e in s.entries] for s in codec.read_store_sessions(db, counts)}
    assert got == {"s1": ["u1", "u2"], "s2": ["v1"]} and not counts
    assert _digests(tmp_path) == before  # nothing written, no journal left beside it


# ------------------------------------------------------------------ linking
def _turn_session() -> codec.Session:
    snip = "line one\nline two"
    return _session(
        [
            header("S"),
            user("u1", T0, "q"),
            assistant("a0", T0 + 1, "Source: memory/x.md#L1"),  # before any search
            assistant("a1", T0 + 2, ("c1", "memory_search", {"query": "first", "maxResults": 3})),
            result(
                "r1", T0 + 3, "c1", "memory_search", search_payload([hit("a.md", 1, 2, 0.8, snip)])
            ),
            assistant("a2", T0 + 4, ("c2", "memory_search", {"query": "second"})),
            result(
                "r2", T0 + 5, "c2", "memory_search", search_payload([hit("b.md", 3, 4, 0.6, snip)])
            ),
            assistant("a3", T0 + 6, ("g1", "memory_get", {"path": "a.md", "from": 1, "lines": 2})),
            result("r3", T0 + 7, "g1", "memory_get", get_payload("a.md", snip, 1)),
            assistant("a4", T0 + 8, ("g2", "memory_get", {"path": "c.md"})),
            result("r4", T0 + 9, "g2", "memory_get", get_payload("c.md", "whole\nfile")),
            assistant("a5", T0 + 10, ("x1", "exec", {"cmd": "ls"})),
            assistant("a6", T0 + 11, "Sources: a.md#L2, b.md#L3-L4 and c.md#L2-1"),
            user("u2", T0 + 60, "next"),
            assistant("a7", T0 + 61, "Source: a.md#L1"),  # a new turn: no search before it
        ]
    )


def test_follow_ups_belong_to_the_latest_call_that_showed_the_path() -> None:
    counts: Counter[str] = Counter()
    calls = link_session(_turn_session(), counts)
    first, second = calls
    assert [c.qid for c in calls] == ["S:a1", "S:a2"]
    assert first.arguments == {"query": "first", "maxResults": 3}
    got = {c.qid: [(f.signal, f.path, f.start, f.end) for f in c.followups] for c in calls}
    assert got["S:a1"] == [("memory_get", "a.md", 1, 2), ("citation", "a.md", 2, 2)]
    # c.md was shown by no call: the latest call of the turn owns it
    assert got["S:a2"] == [
        ("memory_get", "c.md", None, None),
        ("citation", "b.md", 3, 4),
        ("citation", "c.md", 1, 2),
    ]
    assert second.followups[1].shown == ["line one", "line two"]  # the hit's snippet
    assert second.followups[2].shown == ["whole", "file"]  # the whole-file read's text
    assert counts == {"follow-up with no memory_search before it in its turn": 2,
                      "other tool call": 1}  # fmt: skip


def test_calls_of_one_entry_get_numbered_qids_and_errors_are_marked() -> None:
    s = _session(
        [
            header("S"),
            user("u", T0, "q"),
            assistant(
                "a1",
                T0 + 1,
                ("c1", "memory_search", {"query": "one"}),
                ("c2", "memory_search", {"query": "two"}),
                ("c3", "memory_search", {"query": "three"}),
                ("c4", "memory_search", {"query": "four"}),
                ("c5", "memory_search", {"query": "  "}),
            ),
            result("r1", T0 + 2, "c1", "memory_search", {"results": [], "error": "boom"}),
            result("r2", T0 + 2, "c2", "memory_search", "plain text, not JSON"),
            result("r3", T0 + 2, "c3", "memory_search", search_payload([]), error=True),
        ]
    )
    counts: Counter[str] = Counter()
    calls = link_session(s, counts)
    assert [c.qid for c in calls] == ["S:a1", "S:a1:2", "S:a1:3", "S:a1:4"]
    assert [c.error for c in calls] == [True, False, True, True]  # c4: no result at all
    assert calls[1].hits is None  # a result that could not be read
    assert counts == {"memory_search call without a query": 1}


def test_citations_are_read_after_source_only() -> None:
    text = "See memory/a.md#L3.\nSource: memory/a.md#L5\nSources: x.md#L1-L3, y z.md#L9-7 (b.md#L2)"
    assert citations(text) == [
        ("memory/a.md", 5, 5),
        ("x.md", 1, 3),
        ("z.md", 7, 9),
        ("b.md", 2, 2),
    ]


def test_a_release_read_keeps_the_lines_it_says_it_kept() -> None:
    notice = "line a\nline b\n\n[More lines: use from=3]"
    payload = {"status": "ok", "text": notice, "path": "a.md", "from": 1, "lines": 2}
    s = _session(
        [
            header("S"),
            user("u", T0, "q"),
            assistant("a1", T0 + 1, ("c1", "memory_search", {"query": "q"})),
            result("r1", T0 + 2, "c1", "memory_search", search_payload([])),
            assistant("a2", T0 + 3, ("g1", "memory_get", {"path": "a.md", "lines": 50})),
            result("r2", T0 + 4, "g1", "memory_get", payload),
            assistant("a3", T0 + 5, ("g2", "memory_get", {"path": "b.md", "from": 2})),
            result("r3", T0 + 6, "g2", "memory_get", {"status": "not_found", "text": ""}),
        ]
    )
    (call,) = link_session(s, Counter())
    got, missing = call.followups
    assert (got.start, got.end, got.shown) == (1, 2, ["line a", "line b"])
    assert missing.error


# ------------------------------------------------------------------ anchoring
def test_norm_line_drops_annotations_and_spacing() -> None:
    assert norm_line("  a\tb  <!-- importance: 8 -->") == "a b"
    assert norm_line("x <!-- a comment --> y") == "x <!-- a comment --> y"


def test_anchor_in_place_moved_mostly_and_gone() -> None:
    file = ["# t", "", "alpha", "beta", "gamma", "delta"]
    assert anchor(file, 3, ["alpha", "beta"]) == 3
    moved = ["# t", "new", "", "alpha", "beta", "gamma", "delta"]
    assert anchor(moved, 3, ["alpha", "beta"]) == 4
    edited = ["# t", "", "alpha", "BETA", "gamma", "delta"]
    assert anchor(edited, 3, ["alpha", "beta", "gamma"]) == 3  # 2 of 3 lines still there
    assert anchor(edited, 3, ["alpha", "beta"]) is None  # 1 of 2: no majority
    assert anchor(file, 4, ["beta"]) == 4 and anchor(file, 4, ["zeta"]) is None
    assert anchor(file, 2, ["", ""]) is None  # blank lines anchor nowhere
    assert anchor(file, 5, ["gam"], prefix_last=True) == 5
    assert anchor(file, 5, ["gam"]) is None
    twice = ["x", "a", "b", "x", "a", "b", "x"]
    assert anchor(twice, 4, ["a", "b"]) == 5  # the nearest copy: after 4, not 2
    assert anchor(twice, 4, ["a", "b"], index={"a": [1, 4]}) == 5


def test_workspace_files_place_and_same_day_log(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# M\n\n- one\n- two\n")
    (ws / "memory" / "2026-01-01.md").write_text("# day\n")
    (ws / "notes.md").write_text("not memory\n")
    files = WorkspaceFiles(ws)
    assert set(files.files) == {"MEMORY.md", "memory/2026-01-01.md"}
    assert files.relative(str(ws / "MEMORY.md")) == "MEMORY.md"
    assert files.relative("./memory\\2026-01-01.md") == "memory/2026-01-01.md"
    assert files.relative("/elsewhere/x.md") == "/elsewhere/x.md"
    assert files.lines("MEMORY.md") == ["# M", "", "- one", "- two"]
    assert files.lines("notes.md") is None
    assert files.place("MEMORY.md", 1, 4, ["# M", "", "- one"], prefix_last=True) == (1, 4)
    assert files.place("MEMORY.md", 2, 9, ["- two"], prefix_last=False) == (4, 4)  # cut at end
    day = 1_767_225_600.0  # 2026-01-01T00:00Z
    assert files.same_day_log(day + 3600) and not files.same_day_log(day)  # not yet visible
    assert not files.same_day_log(day + 86400 + 1) and not files.same_day_log(math.nan)


# ------------------------------------------------------------------ report
def _call(qid: str, t: float, turn: int = 1, entry: str | None = None, **kw) -> SearchCall:
    return SearchCall(qid, "s", entry or qid, turn, t, kw.pop("query", "backup policy"), {}, **kw)


def test_reasked_is_the_same_turn_within_a_minute_from_another_message() -> None:
    calls = [
        _call("a", 0.0),
        _call("b", 30.0),  # a re-ask of a
        _call("c", 30.0, entry="b"),  # sent with b in one message
        _call("d", 100.0),  # 70 s after b
        _call("e", 110.0, turn=2),  # another turn
    ]
    assert reasked(calls) == {"a"}


def test_query_log_report_numbers() -> None:
    from memlab.datasets.harvest.link import Hit

    def h(score: float) -> Hit:
        return Hit("a.md", 1, 1, score, [])

    day = 1_767_225_600.0
    calls = [
        _call("a", day + 10, hits=[h(0.9), h(0.35)], query="LED-142"),
        _call("b", day + 20, hits=[], query="what is the backup policy?"),
        _call("c", day + 86400, error=True, hits=[]),
        _call("d", day + 86500, hits=None),
        _call("e", math.nan, hits=[h(1.4), h(-0.2)]),
    ]
    r = query_log_report(calls)
    assert r["calls"] == 5 and r["days"] == 2
    assert r["calls_per_day"] == {
        "mean": 2.0,
        "max": 2,
        "by_day": {"2026-01-01": 2, "2026-01-02": 2},
    }
    assert r["error_share"] == pytest.approx(1 / 5)
    assert r["no_result_share"] == pytest.approx(1 / 3)  # of a, b, e (d unread): b
    assert r["reasked_share"] == pytest.approx(1 / 5)
    assert r["kinds"] == {"identifier": 1, "question": 1, "keywords": 3}
    d = r["shown_scores"]
    assert d["n"] == 4 and d["min"] == -0.2 and d["max"] == 1.4
    assert d["histogram"]["counts"][0] == 1 and d["histogram"]["counts"][-1] == 2
    assert sum(d["histogram"]["counts"]) == 4 and len(d["histogram"]["edges"]) == 11
    empty = query_log_report([])
    assert empty["error_share"] is None and empty["shown_scores"]["median"] is None


# ------------------------------------------------------------------ the command
def _small_agent(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- The gateway runs on gw-prod-7.\n")
    (ws / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n\n- Moved backups to B2.\n")
    snip = "# 2026-01-01\n\n- Moved backups to B2.\n\nSource: memory/2026-01-01.md#L1-L3"
    sessions = tmp_path / "sessions"
    write_jsonl(
        sessions / "s1.jsonl",
        [
            header("s1"),
            user("u1", T0, "where are backups?"),
            assistant("a1", T0 + 1, ("c1", "memory_search", {"query": "backups", "minScore": 0.2})),
            result(
                "r1",
                T0 + 2,
                "c1",
                "memory_search",
                search_payload([hit("memory/2026-01-01.md", 1, 3, 0.7, snip)]),
            ),
            assistant("a2", T0 + 3, "B2.\n\nSource: memory/2026-01-01.md#L3"),
        ],
    )
    return ws, sessions


def test_cli_harvest_writes_the_folder_and_eval_reads_it(tmp_path: Path) -> None:
    ws, sessions = _small_agent(tmp_path)
    out = tmp_path / "out"
    code, stdout, err = cli("harvest", str(ws), "--sessions", str(sessions), "--out", str(out))
    assert code == 0, err
    assert "memory_search calls 1, queries 1 (0 errored)" in stdout
    assert "implicit spans 1: memory_get 0, citation 1" in stdout
    (q,) = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    assert q["qid"] == "s1:a1" and q["cutoff"] == q["time"] == T0 + 1 and q["minScore"] == 0.2
    assert q["category"] == "keywords" and q["shown"] == 1 and q["error"] is False
    assert (
        out / "shown.trec"
    ).read_text() == "s1:a1 Q0 memory/2026-01-01.md:1-3 1 1.000000 deployed\n"
    (e,) = [json.loads(x) for x in (out / "evidence.jsonl").read_text().splitlines()]
    assert (e["path"], e["start_line"], e["end_line"], e["signal"]) == (
        "memory/2026-01-01.md",
        3,
        3,
        "citation",
    )
    from memlab.datasets.base import load_folder

    ds = load_folder(out)
    assert ds.workspaces == {"default": ws.resolve()} and len(ds.queries) == 1
    code, stdout, err = cli(
        "eval", "folder", "--path", str(out), "--embedder", "hashing", "--preset", "bm25",
        "--run", f"deployed={out / 'shown.trec'}", "--metrics", "recall@6",
    )  # fmt: skip
    assert code == 0, err
    assert "deployed" in stdout and "as of each question's cut-off" in stdout


def test_cli_harvest_json_and_snapshot(tmp_path: Path) -> None:
    ws, sessions = _small_agent(tmp_path)
    out = tmp_path / "frozen"
    code, stdout, err = cli(
        "harvest", str(ws), "--sessions", str(sessions), "--out", str(out), "--snapshot", "--json"
    )
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["summary"]["queries"] == 1 and doc["health"]["calls"] == 1
    assert json.loads((out / "report.json").read_text()) == doc
    assert (out / "workspace" / "MEMORY.md").read_bytes() == (ws / "MEMORY.md").read_bytes()
    from memlab.datasets.base import load_folder

    assert load_folder(out).workspaces == {"default": (out / "workspace").resolve()}
    # a re-harvest into the same folder, without --snapshot, replaces it
    code, _, err = cli("harvest", str(ws), "--sessions", str(sessions), "--out", str(out))
    assert code == 0, err
    assert not (out / "workspace").exists() and not (out / ".harvest-tmp").exists()


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("ws/out", "inside the workspace"),
        ("ws/memory", "inside the workspace"),
        ("sessions/out", "inside the transcripts"),
        (".", "holds the workspace"),
        ("foreign", "holds other files"),
        ("looks", "looks like a memory workspace"),
        ("afile", "is a file"),
    ],
)
def test_refused_out_exits_2_and_writes_nothing(tmp_path: Path, where: str, message: str) -> None:
    ws, sessions = _small_agent(tmp_path)
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "thesis.tex").write_text("x")
    (tmp_path / "looks" / "memory").mkdir(parents=True)
    (tmp_path / "afile").write_text("x")
    before = _digests(tmp_path)
    dirs = sorted(p for p in tmp_path.rglob("*") if p.is_dir())
    code, _, err = cli(
        "harvest", str(ws), "--sessions", str(sessions), "--out", str(tmp_path / where)
    )
    assert code == 2 and message in err, err
    assert _digests(tmp_path) == before
    assert sorted(p for p in tmp_path.rglob("*") if p.is_dir()) == dirs


def test_no_transcripts_or_no_queries_exit_2(tmp_path: Path) -> None:
    ws, _ = _small_agent(tmp_path)
    code, _, err = cli("harvest", str(ws), "--out", str(tmp_path / "o1"))
    assert code == 2 and "no transcripts at" in err and "--agent ID" in err
    write_jsonl(tmp_path / "quiet" / "s.jsonl", [header("q"), user("u", T0, "hi")])
    code, _, err = cli(
        "harvest", str(ws), "--sessions", str(tmp_path / "quiet"), "--out", str(tmp_path / "o2")
    )
    assert code == 2 and "nothing to harvest" in err
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_agent_layout_reads_jsonl_and_the_agent_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, sessions = _small_agent(tmp_path)
    state = tmp_path / "state"
    agent = state / "agents" / "ops"
    lines = (sessions / "s1.jsonl").read_text().splitlines()
    write_jsonl(agent / "sessions" / "s1.jsonl", lines[:2])  # a shorter copy of s1
    s2 = [header("s2"), user("u", T0 + 50, "x")]
    s2 += [assistant("a", T0 + 51, ("c", "memory_search", {"query": "gw-prod-7"}))]
    write_store(agent / "agent" / "openclaw-agent.sqlite", {"s1": lines, "s2": s2})
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    before = _digests(state)
    result = harvest(ws, tmp_path / "out", agent="OPS")
    assert [c.qid for c in result.calls] == ["s1:a1", "s2:a"]
    assert result.summary["skipped"] == {
        "session read twice (the copy with fewer entries skipped)": 1
    }
    assert result.summary["origin"] == "openclaw" and "agent database" in result.summary["places"]
    assert _digests(state) == before


# ------------------------------------------------------------------ the example agent
def test_example_agent_harvest_counts(tmp_path: Path) -> None:
    before = _digests(EXAMPLE)
    out = tmp_path / "out"
    code, stdout, err = cli(
        "harvest",
        str(EXAMPLE / "workspace"),
        "--sessions",
        str(EXAMPLE / "sessions"),
        "--out",
        str(out),
        "--json",
    )
    assert code == 0, err
    assert _digests(EXAMPLE) == before  # the workspace and transcripts untouched
    s, h = (json.loads(stdout)[k] for k in ("summary", "health"))
    expected = {
        "sessions": 10,
        "entries": 133,
        "calls": 30,
        "queries": 30,
        "errors": 1,
        "shown": 38,
        "shown_placed": 36,
        "evidence": 29,
        "evidence_by_signal": {"memory_get": 7, "citation": 22},
        "evidence_file_level": 2,
        "same_day_log": 8,
        "dropped": {"file not in the workspace": 1, "text no longer in the file": 1},
        "shown_dropped": {"file not in the workspace": 1, "text no longer in the file": 1},
        "skipped": {
            "malformed line": 1,
            "other entry type": 2,
            "other tool call": 1,
            "unknown entry type": 1,
        },
    }
    assert {k: s[k] for k in expected} == expected
    assert h["kinds"] == {"identifier": 13, "question": 4, "keywords": 13}
    assert h["error_share"] == pytest.approx(1 / 30)
    assert h["no_result_share"] == pytest.approx(1 / 29)
    assert h["reasked_share"] == pytest.approx(3 / 30)
    assert h["days"] == 10 and h["calls_per_day"]["max"] == 5
    evidence = [json.loads(x) for x in (out / "evidence.jsonl").read_text().splitlines()]
    moved = sorted((e["path"], e["start_line"]) for e in evidence if e["moved"])
    assert moved == [("MEMORY.md", 7), ("MEMORY.md", 12), ("memory/2026-02-24.md", 6)]


def test_example_agent_is_what_its_script_writes() -> None:
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_example_agent.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr


def test_shown_hits_without_text_and_twice(tmp_path: Path) -> None:
    ws, _ = _small_agent(tmp_path)
    hits = [
        hit("MEMORY.md", 3, 9, 0.9, ""),  # no snippet: the lines as shown, cut at the end
        hit("MEMORY.md", 3, 9, 0.8, ""),  # the same lines again
        hit("MEMORY.md", 12, 14, 0.7, ""),  # past the file's end
        hit("notes/elsewhere.md", 1, 2, 0.6, "x"),
    ]
    write_jsonl(
        tmp_path / "t" / "s.jsonl",
        [
            header("s"),
            user("u", T0, "q"),
            assistant("a", T0 + 1, ("c", "memory_search", {"query": "gateway"})),
            result("r", T0 + 2, "c", "memory_search", search_payload(hits)),
        ],
    )
    res = harvest(ws, tmp_path / "out", sessions=tmp_path / "t")
    assert (tmp_path / "out" / "shown.trec").read_text().split()[2] == "MEMORY.md:3-3"
    assert res.summary["shown_placed"] == 1
    assert res.summary["shown_dropped"] == {
        "file not in the workspace": 1,
        "lines past the file's end (no text shown to anchor by)": 1,
        "the same lines shown twice in one answer": 1,
    }
    rows = [json.loads(x) for x in (tmp_path / "out" / "shown.jsonl").read_text().splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4] and rows[0]["score"] == 0.9
