"""memlab's own index under OpenClaw 2026.9.6's memory-file rule (spec openclaw-current §1, §2,
§8, §9): the release's files and chunks, per-chunk annotations, coexisting with 2026.4."""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.chunking import ChunkerConfig
from memlab.chunking.annotations import INVALID_PROJECT_KEY
from memlab.eval.merge import merge_tables
from memlab.files.workspace import discover_memory_files
from memlab.openclaw_current import chunk_markdown, list_memory_files, parse_annotations
from memlab.pipeline import Pipeline
from memlab.store import MemoryIndex
from tests.conftest import CountingEmbedder, write

CURRENT = "openclaw-2026.9"
OLD = "openclaw-2026.4"

MEMORY = (
    "# Infrastructure\n"
    "- The router VLAN config lives on the gateway box <!-- importance: 8 -->\n"
    "  second line of the router entry\n"
    "- Billing invoices go to finance <!-- trigger: billing, invoices; Finance -->   \n"
    "- Apollo launches in May <!-- project: Apollo/web; path:apps/apollo -->\n"
    "- A note with a broken tag <!-- project: alpha; ; beta -->\n"
    "- Plain entry without annotations\n"
    "## People\n"
    "- Alice owns billing <!-- importance: 11 -->\n"
)
USER = "- Prefers short answers <!-- importance: 3 -->\n- Works on <!-- project: zeus -->\n"


pytestmark = pytest.mark.usefixtures("private_cache")  # tests/conftest.py


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", MEMORY)
    write(root, "USER.md", USER)
    write(root, "memory.md", "- legacy root file <!-- importance: 9 -->\n")
    write(root, "DREAMS.md", "dreamt about the router\n")
    write(root, "memory/.openclaw-repair/root-memory/2026-09-01/memory.md", "archived\n")
    write(root, "memory/2026-09-20.md", "# 2026-09-20\n- router vlan moved <!-- project: net -->\n")
    write(root, "memory/sub/2026-01-02-1430.md", "old log <!-- importance: 9 -->\nline two\n")
    write(root, "memory/sub/notes.md", "undated notes\n")
    return root


def index(ws: Path, rule: str, embedder) -> MemoryIndex:
    return MemoryIndex(ws, embedder=embedder, memory_files=rule, progress=False)


def rows(ix: MemoryIndex) -> list[tuple[str, str, int, int]]:
    t = ix.table
    texts = ix.texts(np.arange(len(t)))
    return [
        (str(p), txt, int(s), int(e))
        for p, txt, s, e in zip(t.paths, texts, t.start_lines, t.end_lines, strict=True)
    ]


def test_release_rule_indexes_the_release_files_and_chunks(ws: Path, hashing) -> None:
    ix = index(ws, CURRENT, hashing)
    ix.sync()
    files = [r[0] for r in ix.connect().execute("SELECT path FROM files ORDER BY rowid")]
    want = [f.path for f in list_memory_files(ws)]
    assert files == want
    # spec §1: MEMORY.md, USER.md, memory/**; no memory.md, DREAMS.md, .openclaw-repair
    assert want == [
        "MEMORY.md",
        "USER.md",
        "memory/2026-09-20.md",
        "memory/sub/2026-01-02-1430.md",
        "memory/sub/notes.md",
    ]
    expected = [
        (f.path, c.text, c.start_line, c.end_line)
        for f in list_memory_files(ws)
        for c in chunk_markdown(f.abspath.read_text(), f.path)
    ]
    assert rows(ix) == expected
    # per-entry blocks of MEMORY.md, annotations stripped (and the trailing spaces with them)
    memory = [r for r in rows(ix) if r[0] == "MEMORY.md"]
    spans = [(1, 1), (2, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (9, 10)]
    assert [(s, e) for _, _, s, e in memory] == spans
    assert memory[2][1] == "- Billing invoices go to finance"
    assert not any("<!--" in txt for _, txt, _, _ in rows(ix))


def test_annotations_are_stored_per_chunk(ws: Path, hashing) -> None:
    ix = index(ws, CURRENT, hashing)
    ix.sync()
    t = ix.table
    assert t.importance is not None and t.importance.dtype == np.float64
    assert t.project_keys is not None and t.triggers is not None
    # the release's parse over each chunk's original span (entry span for `- ` entries)
    got = []
    for f in list_memory_files(ws):
        lines = f.abspath.read_text().split("\n")
        for c in chunk_markdown(f.abspath.read_text(), f.path):
            span = (c.entry_start_line or c.start_line, c.entry_end_line or c.end_line)
            a = parse_annotations(
                lines[span[0] - 1 : span[1]],
                curated_root=f.path in ("MEMORY.md", "USER.md"),
                project_scope=f.path != "USER.md",
            )
            got.append((a.importance, a.project_key, a.triggers))
    stored = [
        (None if np.isnan(i) else int(i), p, tr)
        for i, p, tr in zip(t.importance, t.project_keys, t.triggers, strict=True)
    ]
    assert stored == got
    by_text = dict(zip(ix.texts(np.arange(len(t))), stored, strict=True))
    # exact values of spec §8/§9
    assert by_text[
        "- The router VLAN config lives on the gateway box\n  second line of the router entry"
    ] == (8, None, None)
    assert by_text["- Billing invoices go to finance"] == (None, None, "billing; invoices; Finance")
    assert by_text["- Apollo launches in May"] == (None, "apollo/web; path:apps/apollo", None)
    assert by_text["- A note with a broken tag"] == (None, INVALID_PROJECT_KEY, None)
    assert by_text["- Alice owns billing\n"] == (None, None, None)  # 11 is out of range
    assert by_text["- Prefers short answers"] == (3, None, None)  # USER.md: curated
    assert by_text["- Works on\n"] == (None, None, None)  # USER.md: no project scope
    assert by_text["# 2026-09-20\n- router vlan moved\n"] == (None, "net", None)
    assert by_text["old log\nline two\n"] == (None, None, None)  # not a curated root


def test_2026_4_rule_keeps_todays_files_and_chunks(ws: Path, hashing) -> None:
    ix = index(ws, OLD, hashing)
    ix.sync()
    expected = [
        (f.path, c.text, c.start_line, c.end_line)
        for f in discover_memory_files(ws)
        for c in ChunkerConfig().chunk(f.abspath.read_text())
    ]
    assert rows(ix) == expected
    assert {"memory.md", "MEMORY.md"} <= {r[0] for r in expected}
    assert "<!-- importance: 8 -->" in rows(ix)[0][1]  # not stripped
    t = ix.table
    assert t.importance is None and t.project_keys is None and t.triggers is None
    assert Pipeline().memory_files == OLD and Pipeline().retrieval_spec().memory_files == OLD


def test_both_rules_coexist_and_switching_rebuilds_nothing(ws: Path, hashing) -> None:
    counting = CountingEmbedder(hashing)
    new, old = index(ws, CURRENT, counting), index(ws, OLD, counting)
    assert new.identity != old.identity and new.identity.startswith(old.identity + "-oc2026.9-")
    assert new.db_path != old.db_path
    n_new, n_old = new.sync().chunks, old.sync().chunks
    new.close()
    old.close()
    before = len(counting.embedded)
    for _ in range(2):  # alternate: each finds its own file in step
        for rule in (CURRENT, OLD, CURRENT):
            ix = index(ws, rule, counting)
            assert ix.rebuild_reason() == ""
            assert ix.ensure_synced(files=True) is None
            report = ix.sync()
            assert not report.full_reindex and report.chunks_added == 0
            assert report.chunks == (n_new if rule == CURRENT else n_old)
            ix.close()
    assert len(counting.embedded) == before


def test_annotation_edit_alone_replaces_the_row(ws: Path, hashing) -> None:
    counting = CountingEmbedder(hashing)
    ix = index(ws, CURRENT, counting)
    ix.sync()
    (ws / "MEMORY.md").write_text(MEMORY.replace("importance: 8", "importance: 2"))
    report = ix.sync()
    assert report.chunks_added == 1 and report.chunks_removed == 1
    assert report.embedded == 0  # the stripped text is unchanged: the cache serves it
    assert sorted(x for x in ix.table.importance if not np.isnan(x)) == [2.0, 3.0]


def test_old_index_rebuilds_and_says_why(ws: Path, hashing) -> None:
    ix = index(ws, OLD, hashing)
    ix.sync()
    path = ix.db_path
    ix.close()
    # a file as the previous memlab wrote it: schema 1, no annotation columns, no rule
    conn = sqlite3.connect(path)
    for col in ("importance", "project_key", "triggers"):
        conn.execute(f"ALTER TABLE chunks DROP COLUMN {col}")
    fp = json.loads(conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()[0])
    fp["schema"] = 1
    del fp["memory_files"]
    conn.execute("UPDATE meta SET value=? WHERE key='fingerprint'", (json.dumps(fp),))
    conn.commit()
    conn.close()
    ix = index(ws, OLD, hashing)
    assert ix.rebuild_reason() == "index schema changed from 1 to 2"
    assert len(ix.table) > 0 and ix.table.importance is None  # still readable unsynced
    from memlab.cli.common import announce_rebuild

    err = io.StringIO()
    with redirect_stderr(err):
        announce_rebuild(ix)
    assert "index schema changed from 1 to 2" in err.getvalue()
    report = ix.sync()
    assert report.full_reindex and report.embedded == 0
    assert report.reason == "fingerprint changed: index schema changed from 1 to 2"
    cols = {r[1] for r in ix.connect().execute("PRAGMA table_info(chunks)")}
    assert {"importance", "project_key", "triggers"} <= cols
    # the same file opened under the release rule: the rule and the chunker are named
    other = MemoryIndex(ws, embedder=hashing, memory_files=CURRENT, db_path=path)
    assert other.rebuild_reason() == (
        "chunker changed from openclaw:v1:tokens=400:overlap=80 to openclaw-2026.9:v5;"
        " memory-file rule changed from openclaw-2026.4 to openclaw-2026.9"
    )


def test_bad_rule_is_refused_by_name(ws: Path) -> None:
    with pytest.raises(ValueError, match=r"memory_files must be one of openclaw-2026\.4"):
        MemoryIndex(ws, embedder=None, memory_files="openclaw-2027")
    with pytest.raises(ValueError, match="memory_files"):
        Pipeline(memory_files="2026.9")
    p = Pipeline(memory_files=CURRENT)
    assert p.retrieval_spec().memory_files == CURRENT and p.get_params()["memory_files"] == CURRENT


def test_merge_tables_concatenates_annotations(ws: Path, hashing) -> None:
    new, old = index(ws, CURRENT, hashing), index(ws, OLD, hashing)
    new.sync()
    old.sync()
    m = merge_tables([old.table, new.table])
    n_old = len(old.table)
    assert m.importance is not None and np.isnan(m.importance[:n_old]).all()
    np.testing.assert_array_equal(m.importance[n_old:], new.table.importance)
    assert list(m.project_keys) == [None] * n_old + list(new.table.project_keys)
    assert list(m.triggers) == [None] * n_old + list(new.table.triggers)
    assert merge_tables([old.table, old.table]).importance is None


def test_lab_runs_each_rule_on_its_own_index(ws: Path, tmp_path: Path, hashing) -> None:
    from memlab.datasets.base import Dataset
    from memlab.eval.lab import Lab

    queries = pd.DataFrame(
        {"qid": ["q1"], "query": ["router vlan"], "group": ["g"], "category": ["x"], "time": [None]}
    )
    evidence = pd.DataFrame(
        {"qid": ["q1"], "path": ["MEMORY.md"], "start_line": [2], "end_line": [3], "grade": [1]}
    )
    ds = Dataset("t", tmp_path, {"g": ws}, queries, evidence)
    lab = Lab(ds, embedder=hashing, index_dir=tmp_path / "labidx", progress=False)
    cur = Pipeline(name="cur", memory_files=CURRENT)
    assert lab.lab_for(Pipeline()) is lab
    sub = lab.lab_for(cur)
    assert sub is not lab and sub.memory_files == CURRENT and lab.lab_for(cur) is sub
    assert sub.index("g").table.importance is not None and lab.index("g").table.importance is None
    assert sub.index("g").db_path != lab.index("g").db_path
    found = lab.candidates_for([Pipeline(), cur])
    assert found["cur"].cs.table.importance is not None
    assert found["openclaw"].cs.table.importance is None


def test_cli_search_and_files_follow_the_rule(ws: Path) -> None:
    from memlab.cli import main

    def run(*args: str, code: int = 0) -> str:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            assert main(list(args)) == code
        return out.getvalue() if code == 0 else err.getvalue()

    listed = json.loads(run("files", str(ws), "--memory-files", CURRENT, "--json"))
    assert [r["path"] for r in listed] == [f.path for f in list_memory_files(ws)]
    old = json.loads(run("files", str(ws), "--json"))
    assert "memory.md" in [r["path"] for r in old]
    common = ("--embedder", "hashing", "--json")
    res = json.loads(run("search", str(ws), "billing invoices", "--memory-files", CURRENT, *common))
    assert res["results"] and res["results"][0]["path"] == "MEMORY.md"
    assert "<!--" not in res["results"][0]["snippet"]
    status = json.loads(
        run("status", str(ws), "--memory-files", CURRENT, "--embedder", "hashing", "--json")
    )
    assert "-oc2026.9-" in status["index_path"] and status["memory_files"] == CURRENT
    # the 2026.4 index was never built: its status names the release's index instead
    err = run("status", str(ws), "--embedder", "hashing", code=2)
    assert "no index at" in err and status["identity"] in err
