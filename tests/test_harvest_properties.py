"""Properties of memlab harvest (Hypothesis): any interleaving of a session's entries gives
each memory_search call once with its own follow-ups only; qids survive a re-harvest of
grown transcripts; nothing is written outside OUT."""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.datasets.harvest import harvest
from memlab.datasets.harvest.codec import Session, parse_entries
from memlab.datasets.harvest.link import link_session
from tests.transcripts import (
    T0,
    assistant,
    get_payload,
    header,
    hit,
    iso,
    result,
    search_payload,
    user,
    write_jsonl,
)

NOISE = [
    "{broken",
    {"type": "bookmark", "id": "ignored"},
    {"type": "model_change", "provider": "p", "modelId": "m"},
]

# A turn: its searches, each with (number of hits, its memory_get reads, its citations).
turn_shape = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=3
)


def build(turns: list, seed: int, noise: int) -> tuple[list, dict[str, list]]:
    """A session's records for ``turns`` (``turn_shape``) in one random order that keeps
    each call before its result and its follow-ups; and the follow-ups each call must get:
    {qid: [(signal, path, start, end)]}. Every path is shown by one call only."""
    rnd = random.Random(seed)
    records: list = [header("S")]
    expected: dict[str, list] = {}
    n = 0

    def nid(kind: str) -> str:
        nonlocal n
        n += 1
        return f"{kind}{n}"

    for ti, searches in enumerate(turns):
        records.append(user(nid("u"), 0, f"question {ti}"))
        # events: (must come after this search, or None), record maker
        pending: list[tuple[int | None, object]] = []
        for si, (n_hits, n_gets, n_cites) in enumerate(searches):
            paths = [f"memory/t{ti}s{si}h{h}.md" for h in range(n_hits)]
            call_entry, call_id = nid("a"), nid("c")
            expected[f"S:{call_entry}"] = []
            hits = [hit(p, 1, 3, 0.5, "a\nb\nc") for p in paths]
            search = assistant(call_entry, 0, (call_id, "memory_search", {"query": f"q{ti}{si}"}))
            pending.append((None, ("search", si, search)))
            pending.append(
                (si, result(nid("r"), 0, call_id, "memory_search", search_payload(hits)))
            )
            for g in range(n_gets):
                p = paths[g % n_hits]
                gid = nid("g")
                expected[f"S:{call_entry}"].append(("memory_get", p, 2, 3))
                args = {"path": p, "from": 2, "lines": 2}
                pending.append((si, assistant(nid("a"), 0, (gid, "memory_get", args))))
                pending.append(
                    (si, result(nid("r"), 0, gid, "memory_get", get_payload(p, "b\nc", 2)))
                )
            for c in range(n_cites):
                p = paths[(c + 1) % n_hits]
                expected[f"S:{call_entry}"].append(("citation", p, c + 1, c + 1))
                pending.append((si, assistant(nid("a"), 0, f"ok\n\nSource: {p}#L{c + 1}")))
        for _ in range(noise):
            pending.append((None, rnd.choice(NOISE)))
        # a random order in which each search comes before everything that needs it
        placed: set[int] = set()
        order: list = []
        while pending:
            ready = [i for i, (need, _) in enumerate(pending) if need is None or need in placed]
            _, rec = pending.pop(rnd.choice(ready))
            if isinstance(rec, tuple) and rec[0] == "search":
                placed.add(rec[1])
                rec = rec[2]
            order.append(rec)
        records.extend(order)
    for i, rec in enumerate(records):
        if isinstance(rec, dict) and rec.get("type") == "message":
            rec["timestamp"] = iso(T0 + i)  # times in the order written
    return records, expected


@settings(max_examples=60, deadline=None)
@given(st.lists(turn_shape, min_size=1, max_size=3), st.integers(0, 2**32), st.integers(0, 3))
def test_each_call_once_with_its_own_follow_ups(turns: list, seed: int, noise: int) -> None:
    records, expected = build(turns, seed, noise)
    counts: Counter[str] = Counter()
    parsed = [(f"L{i}", r if isinstance(r, dict) else None, None) for i, r in enumerate(records)]
    _, entries = parse_entries(parsed, counts)
    calls = link_session(Session("S", "test", 4, entries), counts)
    assert sorted(c.qid for c in calls) == sorted(expected)  # each call once
    got = {c.qid: sorted((f.signal, f.path, f.start, f.end) for f in c.followups) for c in calls}
    assert got == {q: sorted(v) for q, v in expected.items()}  # its own follow-ups only


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# M\n\n- alpha\n- beta\n")
    return ws


def _session_records(sid: str, queries: list[str], start: float) -> list:
    recs: list = [header(sid, start)]
    for i, q in enumerate(queries):
        t = start + 10 * i
        recs.append(user(f"u{i}", t, "?"))
        recs.append(assistant(f"a{i}", t + 1, (f"c{i}", "memory_search", {"query": q})))
        payload = search_payload([hit("MEMORY.md", 3, 3, 0.5, "- alpha")])
        recs.append(result(f"r{i}", t + 2, f"c{i}", "memory_search", payload))
        recs.append(assistant(f"x{i}", t + 3, "Source: MEMORY.md#L3"))
    return recs


def _files(root: Path, skip: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and skip not in p.parents
    }


queries = st.lists(st.text(min_size=1, max_size=20).filter(str.strip), min_size=1, max_size=4)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(queries, min_size=1, max_size=3), queries, st.booleans())
def test_qids_survive_a_reharvest_and_nothing_leaves_out(
    sessions: list[list[str]], more: list[str], snapshot: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = _workspace(root)
        tdir = root / "transcripts"
        for i, qs in enumerate(sessions):
            write_jsonl(tdir / f"s{i}.jsonl", _session_records(f"s{i}", qs, T0 + 1000 * i))
        out = root / "out"
        before = _files(root, out)
        first = harvest(ws, out, sessions=tdir, snapshot=snapshot)
        assert _files(root, out) == before  # nothing written outside OUT
        rows1 = (out / "queries.jsonl").read_text().split("\n")[:-1]
        assert len(rows1) == sum(len(qs) for qs in sessions) == len(first.calls)
        # the agent goes on: session 0 grows, a new session appears; harvest again
        grown = _session_records("s0", sessions[0] + more, T0)
        write_jsonl(tdir / "s0.jsonl", grown)
        write_jsonl(tdir / "new.jsonl", _session_records("new", more, T0 + 99_000))
        harvest(ws, out, sessions=tdir, snapshot=snapshot)
        rows2 = (out / "queries.jsonl").read_text().split("\n")[:-1]
        old = {json.loads(r)["qid"]: r for r in rows1}
        new = {json.loads(r)["qid"]: r for r in rows2}
        assert all(new[q] == r for q, r in old.items())  # same qid, same row
        assert len(new) == len(old) + 2 * len(more)
