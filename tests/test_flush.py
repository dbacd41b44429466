"""The memory-flush simulation (memlab.flush): OpenClaw's trigger rule against the spec's
numbers (openclaw-memory.md §9), the lifecycle, the provenance of every note, and the
written workspaces' evaluability."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from memlab.config.vocab import FLUSH_MEMORIES, FLUSH_POLICIES
from memlab.datasets.base import Dataset
from memlab.flush import FlushConfig, flush_study, flush_threshold, should_flush
from memlab.flush.config import flush_config_from_openclaw, load_flush_config, parse_byte_size
from memlab.flush.lifecycle import simulate
from memlab.flush.policies import POLICIES, Note, first_sentence
from memlab.flush.transcript import read_conversations, turn_tokens

MIB2 = 2 * 1024 * 1024


def check(cfg: FlushConfig, tokens: int, nbytes: int = 0, count: int = 0, at: int | None = None):
    return should_flush(
        cfg,
        context_tokens=tokens,
        transcript_bytes=nbytes,
        compaction_count=count,
        flushed_at_compaction=at,
    )


def test_defaults_are_the_spec_numbers():
    cfg = FlushConfig()
    assert (cfg.enabled, cfg.soft_threshold_tokens, cfg.reserve_tokens_floor) == (True, 4000, 20000)
    assert cfg.context_window == 200_000
    assert cfg.force_flush_transcript_bytes == MIB2
    assert cfg.threshold == 176_000 == flush_threshold(200_000, 20_000, 4_000)
    assert cfg.compaction_limit == 180_000


def test_threshold_is_reached_not_passed_and_fires_once_per_cycle():
    cfg = FlushConfig()
    assert not check(cfg, 175_999)
    assert check(cfg, 176_000)  # "reaches": ≥, as memory-flush.ts compares
    assert not check(cfg, 179_000, count=0, at=0)  # already flushed in this cycle
    assert check(cfg, 179_000, count=1, at=0)  # a compaction opened a new cycle
    assert not check(cfg.with_(enabled=False), 190_000)


def test_threshold_at_or_below_zero_never_fires_by_tokens():
    cfg = FlushConfig(context_window=20_000)  # 20,000 − 20,000 − 4,000 < 0
    assert cfg.threshold == 0
    assert not check(cfg, 10**9)
    assert check(cfg, 0, nbytes=MIB2)  # the byte rule still holds


def test_two_mib_transcript_forces_a_flush():
    cfg = FlushConfig()
    assert not check(cfg, 10, nbytes=MIB2 - 1)
    assert check(cfg, 10, nbytes=MIB2)
    assert not check(cfg, 10, nbytes=MIB2, count=2, at=2)  # once per cycle here too
    assert not check(cfg.with_(force_flush_transcript_bytes=0), 10, nbytes=10 * MIB2)


def test_openclaw_json_is_read_strictly(tmp_path: Path):
    p = tmp_path / "openclaw.json"
    p.write_text(
        "{agents: {defaults: {contextTokens: 128000, compaction: {reserveTokensFloor: 10000,"
        " mode: 'safeguard', memoryFlush: {softThresholdTokens: 6000,"
        " forceFlushTranscriptBytes: '1mb'}}}}}"
    )
    cfg = load_flush_config(p)
    assert (cfg.context_window, cfg.reserve_tokens_floor, cfg.soft_threshold_tokens) == (
        128_000,
        10_000,
        6_000,
    )
    assert cfg.threshold == 128_000 - 10_000 - 6_000
    assert cfg.force_flush_transcript_bytes == 1024 * 1024
    assert flush_config_from_openclaw({}) == FlushConfig()
    bad = {"agents": {"defaults": {"compaction": {"memoryFlush": {"softThresholdToken": 1}}}}}
    with pytest.raises(ValueError, match=r"memoryFlush\.softThresholdToken.*softThresholdTokens"):
        flush_config_from_openclaw(bad)
    bad = {"agents": {"defaults": {"compaction": {"memoryFlush": {"enabled": "yes"}}}}}
    with pytest.raises(ValueError, match="enabled"):
        flush_config_from_openclaw(bad)
    assert parse_byte_size("2MiB", "x") == MIB2
    with pytest.raises(ValueError, match="x must be a byte size"):
        parse_byte_size(-1, "x")


def make_dataset(root: Path, days: int = 6, turns: int = 10, chars: int = 400) -> Dataset:
    """One conversation, a session per day, ``turns`` turns of ~``chars`` characters; a
    question per day asking about that day's third turn, asked after the last day."""
    ws = root / "conv"
    (ws / "memory").mkdir(parents=True)
    queries, evidence = [], []
    for d in range(days):
        rel = f"memory/2024-01-{d + 1:02d}.md"
        lines = [f"## Session {d + 1}"]
        for t in range(turns):
            who = "User" if t % 2 == 0 else "Assistant"
            text = f"{who}: Day {d} turn {t} mentions Project{d}x{t} and the lighthouse."
            lines.append(text + " filler" * ((chars - len(text)) // 7))
        (ws / rel).write_text("\n".join(lines) + "\n")
        qid = f"conv:q{d}"
        queries.append(
            {"qid": qid, "query": f"Project{d}x2", "group": "conv", "category": "c", "time": 2e9}
        )
        evidence.append(
            {"qid": qid, "path": rel, "start_line": 4, "end_line": 4, "grade": 1, "span_id": qid}
        )
    ds = Dataset("toy", root, {"conv": ws}, pd.DataFrame(queries), pd.DataFrame(evidence), {})
    ds.save()
    return ds


def small(**kw) -> FlushConfig:
    # threshold 1,200 tokens, compaction past 1,300: a few flushes over 6 × 1,000 tokens.
    return FlushConfig(
        context_window=1_500, reserve_tokens_floor=200, soft_threshold_tokens=100, **kw
    )


def test_lifecycle_flushes_once_per_cycle_before_each_compaction(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    convs = read_conversations(ds)
    total = sum(t.tokens for s in convs[0].sessions for t in s.turns)
    run = simulate(convs, small(), POLICIES["oracle"], policy_name="oracle")
    kinds = [e["kind"] for e in run.events]
    assert kinds.count("compaction") >= 2
    # Every compaction is preceded by exactly one flush in its cycle.
    cycle_flushes, per_cycle = 0, []
    for k in kinds:
        if k == "flush":
            cycle_flushes += 1
        elif k == "compaction":
            per_cycle.append(cycle_flushes)
            cycle_flushes = 0
    assert per_cycle and all(n == 1 for n in per_cycle)
    for e in run.events:
        if e["kind"] == "flush":
            assert e["context_tokens"] >= small().threshold
    assert run.summary()["transcript_tokens"] == total
    # "session" resets: a 1,000-token session never reaches 1,200: no flush at all.
    quiet = simulate(read_conversations(ds), small(reset="session"), POLICIES["oracle"])
    assert [e["kind"] for e in quiet.events].count("flush") == 0
    assert quiet.summary()["agent_sessions"] == 6


def test_read_only_workspace_skips_the_flush(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    run = simulate(read_conversations(ds), small(read_only=True), POLICIES["extractive"])
    kinds = [e["kind"] for e in run.events]
    assert "skipped-read-only" in kinds and "flush" not in kinds and not run.notes
    normal = simulate(read_conversations(ds), small(), POLICIES["extractive"])
    assert kinds.count("skipped-read-only") == [e["kind"] for e in normal.events].count("flush")


def test_byte_rule_fires_without_the_token_threshold(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    cfg = FlushConfig(force_flush_transcript_bytes=3_000)  # threshold 176k never reached
    run = simulate(read_conversations(ds), cfg, POLICIES["none"])
    flushes = [e for e in run.events if e["kind"] == "flush"]
    assert len(flushes) == 1 and flushes[0]["by_bytes"]  # no compaction: one cycle, one flush
    assert flushes[0]["transcript_bytes"] >= 3_000


def test_policy_provenance_is_enforced(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")

    def liar(window):
        return [Note("made up", (("memory/elsewhere.md", 1),))]

    with pytest.raises(ValueError, match=r"liar.*not a turn of its window"):
        simulate(read_conversations(ds), small(), liar)


def test_every_note_keeps_its_provenance(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    for policy in ("oracle", "extractive"):
        fw = flush_study(ds, small(), policy, out_dir=tmp_path / f"out-{policy}", layout="daily")
        prov = [json.loads(x) for x in (fw.root / "provenance.jsonl").read_text().splitlines()]
        assert len(prov) == len(fw.run.notes) > 0
        src = {}
        for p in (ds.workspaces["conv"] / "memory").glob("*.md"):
            for i, line in enumerate(p.read_text().split("\n"), 1):
                src[(f"memory/{p.name}", i)] = line
        for row in prov:
            written = (fw.root / "notes" / "conv" / row["path"]).read_text().split("\n")
            note = written[row["line"] - 1]
            assert note.startswith("- ")
            for s in row["sources"]:
                turn = src[(s["path"], s["line"])]
                if policy == "oracle":
                    assert note[2:] == turn
                else:
                    assert note[2:] == first_sentence(turn)
            assert row["path"].startswith("memory/2024-01-")  # today's daily file


def test_relevance_carries_over_and_the_lab_evaluates_it(tmp_path: Path):
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    ds = make_dataset(tmp_path / "src")
    fw = flush_study(ds, small(), "oracle", out_dir=tmp_path / "out", layout="session")
    assert set(fw.datasets) == set(FLUSH_MEMORIES)
    covered = {s for n in fw.run.notes for s in n.sources}
    notes_ev = fw.datasets["notes"].evidence
    for row in ds.evidence.itertuples():
        key = (row.path, row.start_line)
        got = notes_ev[notes_ev.qid == row.qid]
        if key in covered:  # the oracle kept the evidence turn: its note is the evidence
            assert got.path.str.startswith("memory/notes/").all() and len(got) == 1
        else:  # lost: the transcript row stays, a file the notes workspace lacks
            assert got.path.str.startswith("memory/sessions/").all()
    assert len(fw.datasets["both"].evidence) == len(ds.evidence) + len(
        covered & set(zip(ds.evidence.path, ds.evidence.start_line, strict=True))
    )
    scores = {}
    for memory, d in fw.datasets.items():
        lab = Lab(d, embedder="hashing", unit="turn", level="file", index_dir=tmp_path / memory)
        res = run_experiment([preset("bm25")], lab, ["recall_any@5"])
        scores[memory] = float(res.table.loc["bm25", "recall_any@5"])
        assert int(res.table.loc["bm25", "n"]) == len(ds.queries)  # lost ones stay in the mean


def test_daily_layout_is_scored_by_line(tmp_path: Path):
    """OpenClaw's daily files mix the notes of many sessions: at unit level a question
    counts as found only when the note line holding its evidence is ranked. Each query
    names one turn, whose first sentence an extractive note copies, so bm25's top line is that note
    exactly when the flush kept the turn (a tight extractive budget loses some)."""
    from memlab.flush.measure import compare_memories

    ds = make_dataset(tmp_path / "src")
    fw = flush_study(
        ds, small(), "extractive", out_dir=tmp_path / "out", layout="daily", budget_tokens=40
    )
    assert all(p.name.startswith("2024-01-") for p in (fw.root / "notes").rglob("*.md"))
    cmp = compare_memories(
        fw, ["bm25"], level="unit", metrics=("recall_any@1",), index_root=tmp_path / "idx"
    )
    kept = {s for n in fw.run.notes for s in n.sources}
    want = {r.qid: float((r.path, r.start_line) in kept) for r in ds.evidence.itertuples()}
    assert 0 < sum(want.values()) < len(want)  # some turns flushed, some lost
    pq = cmp.per_query.set_index(["memory", "qid"])["value"]
    assert {q: pq[("notes", q)] for q in want} == want
    assert all(pq[("transcripts", q)] == 1.0 for q in want)
    with pytest.raises(ValueError, match="level must be one of"):
        compare_memories(fw, ["bm25"], level="session", index_root=tmp_path / "idx")


def test_out_dir_holding_other_files_is_refused(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "diary.md").write_text("mine")
    with pytest.raises(FileExistsError, match="not written by memlab flush"):
        flush_study(ds, small(), "none", out_dir=mine)
    assert (mine / "diary.md").read_text() == "mine"


def test_policy_names_and_extracted_needs_the_data(tmp_path: Path):
    assert set(POLICIES) == set(FLUSH_POLICIES)
    ds = make_dataset(tmp_path / "src")
    with pytest.raises(ValueError, match="carries no extracted memory"):
        flush_study(ds, small(), "extracted", out_dir=tmp_path / "o")
    with pytest.raises(ValueError, match="policy must be one of"):
        flush_study(ds, small(), "llm", out_dir=tmp_path / "o")


def test_extractive_respects_its_budget(tmp_path: Path):
    ds = make_dataset(tmp_path / "src")
    run = simulate(read_conversations(ds), small(), POLICIES["extractive"], budget_tokens=40)
    per_flush: dict[int, int] = {}
    for n in run.notes:
        per_flush[n.flush] = per_flush.get(n.flush, 0) + turn_tokens(first_sentence(n.text))
    assert per_flush and max(per_flush.values()) <= 40


def test_cli_flush_simulate_writes_where_told(tmp_path: Path, capsys):
    from memlab.cli import main

    ds = make_dataset(tmp_path / "src")
    out = tmp_path / "out"
    argv = ["flush", "simulate", "folder", "--path", str(ds.root), "--out", str(out)]
    rc = main(
        [
            *argv,
            "--context-window",
            "1500",
            "--reserve-floor",
            "200",
            "--soft-threshold",
            "100",
            "--policy",
            "oracle",
            "--json",
        ]
    )
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["threshold_tokens"] == 1200 and report["flushes"] >= 2
    assert all((out / m / "dataset.json").is_file() for m in FLUSH_MEMORIES)
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "MEMORY.md").write_text("keep")
    assert (
        main(
            [
                "flush",
                "simulate",
                "folder",
                "--path",
                str(ds.root),
                "--out",
                str(tmp_path / "theirs"),
            ]
        )
        == 2
    )
