"""The synthetic phenomena of OpenClaw 2026.9.6's new stages (memlab.datasets.synthetic.release).

Each phenomenon's files are read back with the release's own functions
(``memlab.openclaw_current``): annotations per chunk, discovery, dated paths, the
filename tiers and trigger recall; the classic corpora stay byte-identical.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.quality import CORPORA
from memlab.cli import build_parser, main
from memlab.config.vocab import SYNTH_PHENOMENA, SYNTH_RELEASE_PHENOMENA
from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import (
    ALL_PHENOMENA,
    PHENOMENA,
    SynthConfig,
    capacity,
    generate,
    load_negatives,
)
from memlab.datasets.synthetic import lexicon as lx
from memlab.datasets.synthetic import release_wording as rw
from memlab.datasets.synthetic.release import HIGH_IMPORTANCE, LOW_IMPORTANCE, RECENT_DAYS
from memlab.openclaw_current import (
    TriggerEntry,
    chunk_markdown,
    date_from_path,
    decay_multiplier,
    expansion_keywords,
    importance_multiplier,
    is_evergreen,
    list_memory_files,
    parse_annotations,
    path_specificity,
    project_multiplier,
    trigger_matches,
)
from tests.conftest import REPO

RELEASE = SYNTH_RELEASE_PHENOMENA
CFG = SynthConfig(days=40, seed=5, queries_per_type=20, mix=("update", *RELEASE))


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return generate(CFG, tmp_path_factory.mktemp("release") / "ds")


def _files(ds: Dataset) -> dict[str, str]:
    ws = ds.workspaces["default"]
    return {str(p.relative_to(ws)): p.read_text(encoding="utf-8") for p in ws.rglob("*.md")}


def _line(files: dict[str, str], path: str, line: int) -> str:
    return files[path].split("\n")[line - 1]


def _chunk_at(ds: Dataset, files: dict[str, str], path: str, line: int):
    """The release's chunk of ``path`` covering ``line`` (the only one: entries never share)."""
    hits = [c for c in chunk_markdown(files[path], path) if c.start_line <= line <= c.end_line]
    assert len(hits) == 1, (path, line, hits)
    return hits[0]


def _by_cat(ds: Dataset, cat: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    q = ds.queries[ds.queries["category"] == cat]
    ev = ds.evidence[ds.evidence["qid"].isin(q["qid"])]
    neg = load_negatives(ds.root)
    return q, ev, neg[neg["qid"].isin(q["qid"])]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


# --------------------------------------------------------------------------- registry
def test_names_have_one_owner_and_stay_out_of_the_default_mix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memlab.datasets.synthetic.base import GENERATORS

    assert PHENOMENA is SYNTH_PHENOMENA and ALL_PHENOMENA == PHENOMENA + RELEASE
    assert len(set(ALL_PHENOMENA)) == len(ALL_PHENOMENA)
    # every name has exactly one builder, and no builder is unnamed
    assert set(GENERATORS) == set(ALL_PHENOMENA)
    # and `memlab synth --help` offers every name (argparse wraps the help text)
    with pytest.raises(SystemExit):
        main(["synth", "--help"])
    help_text = "".join(capsys.readouterr().out.split())
    listed = re.search(r"comma-separatedphenomena\(([^)]*)\)", help_text)
    assert listed and listed.group(1).split(",") == list(ALL_PHENOMENA)
    assert not set(SynthConfig().mix) & set(RELEASE)
    caps = capacity(SynthConfig(days=60))
    assert {k: caps[k] for k in RELEASE} == {
        "importance": 6 * len(lx.PROJECTS),
        "project": 20,
        "filename": 22,
        "trigger": 22,
        "longlived": 30 * 6,
    }


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_committed_corpora_regenerate_byte_identical(name: str, tmp_path: Path) -> None:
    generate(SynthConfig(**CORPORA[name]), tmp_path / name)
    assert _tree(tmp_path / name) == _tree(REPO / "datasets" / name)


def test_same_config_is_byte_identical_and_seeded(tmp_path: Path) -> None:
    cfg = SynthConfig(days=10, seed=2, queries_per_type=5, mix=RELEASE)
    a, b = (_tree(generate(cfg, tmp_path / x).root) for x in "ab")
    assert a == b
    c = _tree(generate(cfg, tmp_path / "c", seed=3).root)
    assert c["workspace/MEMORY.md"] != a["workspace/MEMORY.md"]


def test_cli_help_lists_every_phenomenon_and_synth_generates_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synth = build_parser()._subparsers._group_actions[0].choices["synth"]  # type: ignore[union-attr]
    help_text = re.sub(r"\s+", "", synth.format_help())
    assert ",".join(ALL_PHENOMENA) in help_text
    out = tmp_path / "c"
    rc = main(
        ["synth", str(out), "--days", "8", "--queries-per-type", "3", "--mix", "trigger,longlived"]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert re.search(r"longlived\s+3", printed) and re.search(r"trigger\s+3", printed)
    assert main(["synth", str(tmp_path / "d"), "--mix", "importance,typo"]) == 2
    assert "unknown phenomena in mix: ['typo']" in capsys.readouterr().err


# --------------------------------------------------------------------------- qrels
def test_qrels_and_negatives_point_at_existing_lines(ds: Dataset) -> None:
    files = _files(ds)
    ev, neg = ds.evidence, load_negatives(ds.root)
    assert ds.info["counts"] == {"update": 20, **dict.fromkeys(RELEASE, 20)}
    listed = {f.path for f in list_memory_files(ds.workspaces["default"])}
    assert set(files) == listed  # the release indexes every file written, nothing else
    for row in ev.itertuples():
        text = _line(files, row.path, row.start_line)
        assert text.startswith("- ") and row.fact in text, (row.qid, text)
    for row in neg.itertuples():
        assert _line(files, row.path, row.start_line).startswith("- " + row.fact)
    spans = set(zip(ev["path"], ev["start_line"], strict=True))
    assert not spans & set(zip(neg["path"], neg["start_line"], strict=True))
    # No leak: a fact is on its evidence lines only.
    lines = [ln for text in files.values() for ln in text.split("\n")]
    for fact, rows in ev.groupby("fact"):
        assert sum(fact in ln for ln in lines) == len(rows), fact


# --------------------------------------------------------------------------- per phenomenon
def test_importance_entries_read_back_high_against_a_low_near_copy(ds: Dataset) -> None:
    files = _files(ds)
    q, ev, neg = _by_cat(ds, "importance")
    assert len(neg) == len(q) and set(neg["kind"]) == {"low-importance"}
    for qid in q["qid"]:
        e, n = ev[ev["qid"] == qid].iloc[0], neg[neg["qid"] == qid].iloc[0]
        assert e["path"] == n["path"] == "MEMORY.md"
        hi = _chunk_at(ds, files, "MEMORY.md", e["start_line"])
        lo = _chunk_at(ds, files, "MEMORY.md", n["start_line"])
        assert hi.importance in HIGH_IMPORTANCE and lo.importance in LOW_IMPORTANCE
        assert "<!--" not in hi.text + lo.text  # stripped before chunking
        line = _line(files, "MEMORY.md", e["start_line"])
        assert parse_annotations([line], curated_root=True).importance == hi.importance
        assert importance_multiplier(hi.importance) - importance_multiplier(lo.importance) > 0.249
        # Near-copies: the same words up to the value.
        assert n["fact"].split(" (")[0] == e["fact"].split(":")[0]


def test_project_entries_tag_the_active_project_and_its_rivals(ds: Dataset) -> None:
    files = _files(ds)
    q, ev, neg = _by_cat(ds, "project")
    active = ds.info["active_projects"]
    assert len(active) == 1 and active[0] in {p.lower() for p in lx.PROJECTS}
    assert set(neg["kind"]) == {"other-project"} and len(neg) == 2 * len(q)
    for qid, query in zip(q["qid"], q["query"], strict=True):
        assert not any(p.lower() in query.lower() for p in lx.PROJECTS)  # never named
        e = ev[ev["qid"] == qid].iloc[0]
        chunk = _chunk_at(ds, files, e["path"], e["start_line"])
        assert chunk.project_key == active[0]
        assert project_multiplier(chunk.project_key, active) == 1.15
        for row in neg[neg["qid"] == qid].itertuples():
            other = _chunk_at(ds, files, row.path, row.start_line)
            assert other.project_key not in (None, active[0])
            assert project_multiplier(other.project_key, active) == 0.9


def test_active_projects_only_recorded_with_the_project_phenomenon(tmp_path: Path) -> None:
    info = generate(SynthConfig(days=5, queries_per_type=2, mix=("trigger",)), tmp_path / "x").info
    assert "active_projects" not in info


def test_filename_questions_name_a_file_whose_text_never_does(ds: Dataset) -> None:
    files = _files(ds)
    q, ev, _ = _by_cat(ds, "filename")
    tiers = []
    for qid, query in zip(q["qid"], q["query"], strict=True):
        e = ev[ev["qid"] == qid]
        assert e["path"].nunique() == 1 and len(e) == 3
        path = e["path"].iloc[0]
        assert path.startswith("memory/") and is_evergreen(path) and date_from_path(path) is None
        stem_words = set(re.findall(r"[a-z0-9]+", Path(path).stem))
        assert not stem_words & set(re.findall(r"[a-z0-9]+", files[path].lower()))
        assert set(e["start_line"]) == {
            n for n, ln in enumerate(files[path].split("\n"), 1) if ln[:2] == "- "
        }
        tier = path_specificity(query, path)
        tiers.append(tier)
        if tier == 0:  # the sentence form: found through the path table by expansion
            assert {w for w in stem_words if len(w) > 2} <= set(expansion_keywords(query))
    assert set(tiers) == {0, 1, 2}


def test_trigger_messages_recall_their_entry(ds: Dataset) -> None:
    files = _files(ds)
    q, ev, _ = _by_cat(ds, "trigger")
    entries = [
        TriggerEntry("MEMORY.md", c.start_line, c.end_line, c.text, 0.0, c.triggers)
        for c in chunk_markdown(files["MEMORY.md"], "MEMORY.md")
        if c.triggers
    ]
    assert len(entries) == len(q)
    for qid, message in zip(q["qid"], q["query"], strict=True):
        e = ev[ev["qid"] == qid].iloc[0]
        line = _line(files, "MEMORY.md", e["start_line"])
        assert parse_annotations([line], curated_root=True).triggers
        top = trigger_matches(message, entries)
        assert top and top[0].entry.start_line == e["start_line"], message
        assert top[0].match_score >= 0.65


def test_every_trigger_row_recalls_only_its_own_entry() -> None:
    # The whole table, as one MEMORY.md would hold it: each message's strongest match is
    # its own entry, and no other entry passes the release's 0.65.
    entries = [
        TriggerEntry("MEMORY.md", i + 1, i + 1, t.entry, 0.0, t.triggers.replace(",", ";"))
        for i, t in enumerate(rw.TRIGGERS)
    ]
    for i, t in enumerate(rw.TRIGGERS):
        assert [m.entry.start_line for m in trigger_matches(t.message, entries)] == [i + 1]
        # Only the trigger phrase links them: no content word of the entry in the message.
        assert not lx.content_words(t.message) & lx.content_words(t.entry), t.message


def test_longlived_facts_are_a_year_old_and_decay_away(ds: Dataset) -> None:
    q, ev, neg = _by_cat(ds, "longlived")
    end = dt.datetime.fromisoformat(CFG.end_date).replace(tzinfo=dt.UTC)
    assert set(neg["kind"]) == {"transient"} and len(neg) == len(q)
    for qid in q["qid"]:
        old = date_from_path(ev[ev["qid"] == qid]["path"].iloc[0])
        recent = date_from_path(neg[neg["qid"] == qid]["path"].iloc[0])
        assert old is not None and recent is not None
        assert 365 <= (end - old).days < 365 + 60
        assert 0 <= (end - recent).days < RECENT_DAYS
        assert (
            decay_multiplier((end - old).days) < 3e-4 < 0.85 < decay_multiplier((end - recent).days)
        )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    days=st.integers(1, 40),
    seed=st.integers(0, 2**31),
    qpt=st.integers(0, 6),
    mix=st.lists(st.sampled_from(RELEASE), min_size=1, max_size=5, unique=True),
)
def test_qrels_hold_for_random_configs(days: int, seed: int, qpt: int, mix: list[str]) -> None:
    cfg = SynthConfig(days=days, seed=seed, queries_per_type=qpt, notes_per_day=4, mix=tuple(mix))
    with tempfile.TemporaryDirectory() as tmp:
        ds = generate(cfg, Path(tmp) / "ds")
        files = _files(ds)
        assert ds.info["counts"] == dict.fromkeys(mix, qpt)
        for row in ds.evidence.itertuples():
            assert row.fact in _line(files, row.path, row.start_line)
        lines = [ln for text in files.values() for ln in text.split("\n")]
        for fact, rows in ds.evidence.groupby("fact"):
            assert sum(fact in ln for ln in lines) == len(rows), fact
        daily = {
            f"memory/{(cfg.start_date + dt.timedelta(days=i)).isoformat()}.md" for i in range(days)
        }
        dated = {p for p in files if date_from_path(p)}
        old = dated - daily
        assert daily <= dated and bool(old) == ("longlived" in mix and qpt > 0)
        assert all((cfg.start_date - date_from_path(p).date()).days >= 30 for p in old)
