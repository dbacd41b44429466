"""RealMem loader and `memlab eval realmem`: a hand-made RealMem-shaped fixture
(tests/data/realmem, always run) and the five dev personas (skipped with a message when
../shared/datasets/realmem is absent)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memlab.datasets.base import load_folder
from memlab.datasets.convwriter import MARKER_NAME
from memlab.datasets.realmem import (
    REALMEM_METRICS,
    find_personas,
    load_realmem,
    parse_session_date,
    persona_group,
    read_is_query,
    realmem_default_path,
)
from memlab.store.asof import unit_time
from tests.conftest import REPO
from tests.test_cli import run

FIXTURE = REPO / "tests" / "data" / "realmem"


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    return load_realmem(FIXTURE, tmp_path_factory.mktemp("realmem") / "out")


def test_personas_and_groups() -> None:
    files = find_personas(FIXTURE)
    assert [f.name for f in files] == [
        "Small_Two_dialogues_256k.json",
        "Tiny_Persona_dialogues_256k.json",
    ]
    assert persona_group(files[1]) == "Tiny_Persona"
    assert find_personas(files[0]) == [files[0]]


def test_each_session_is_its_own_dated_file_in_file_order(tiny) -> None:
    ws = tiny.workspaces["Tiny_Persona"]
    names = sorted(p.name for p in (ws / "memory").iterdir())
    # Two sessions on 15 Dec: the second at 00:01; the third runs backwards (14 Dec) and
    # is clamped to its predecessor's date, third of that day: 00:02.
    assert names == [
        "2025-12-15-0001.md",
        "2025-12-15-0002.md",
        "2025-12-15.md",
        "2025-12-20.md",
        "2025-12-22.md",
    ]
    times = [unit_time(f"memory/{n}") for n in names]
    assert times[2] < times[0] < times[1] < times[3] < times[4]
    text = (ws / "memory" / "2025-12-15-0001.md").read_text().splitlines()
    # The heading names the uuid (the identifier names the topic); one line per turn,
    # a multi-line message flattened.
    assert text == [
        "## Session aaaa0002 — 2025-12-15 (Monday)",
        "User: My sourdough starter smells like acetone. What should I do?",
        "Assistant: Feed the starter twice a day with equal flour and water.",
        "User: Thanks, noted.",
    ]
    assert "Cooking" not in "\n".join(text)


def test_queries_protocol_and_gold(tiny) -> None:
    q = tiny.queries.set_index("qid")
    assert list(q.index) == [
        "Small_Two:Q-0001",
        "Tiny_Persona:Q-0001",
        "Tiny_Persona:Q-0002",
        "Tiny_Persona:Q-0003",
        "Tiny_Persona:Q-0004",
        "Tiny_Persona:Q-0005",
    ]
    # The string "True" is a query; "maybe" is not (counted).
    assert q.loc["Tiny_Persona:Q-0002", "category"] == "Implicit Preference"
    assert q.loc["Tiny_Persona:Q-0003", "session_type"] == "multi_session"
    # time = cutoff = the query's session's time (the clamped session: 15 Dec 00:02).
    assert q.loc["Tiny_Persona:Q-0001", "cutoff"] == _ts("2025-12-15T00:02")
    assert (q["time"] == q["cutoff"]).all()
    ev = tiny.evidence
    gold = ev.groupby("qid")["span_id"].apply(list).to_dict()
    assert gold == {
        "Small_Two:Q-0001": ["Travel_Planning_3:S1_01"],
        "Tiny_Persona:Q-0001": ["Fitness_1:S1_01"],
        "Tiny_Persona:Q-0002": ["Cooking_2:S1_01"],  # from memory_used (the fallback)
        # own session, a future one and an unknown uuid dropped; the past one kept
        "Tiny_Persona:Q-0003": ["Fitness_1:S1_01"],
    }
    row = ev[ev["qid"] == "Tiny_Persona:Q-0001"].iloc[0]
    assert (row["path"], row["start_line"], row["end_line"]) == ("memory/2025-12-15.md", 1, 3)
    assert row["session_uuid"] == "aaaa0001"


def test_defects_counted(tiny) -> None:
    d = tiny.info["defects"]
    assert d["sessions_time_backwards"] == 1
    assert d["gold_own_session"] == 1
    assert d["gold_in_future"] == 2
    assert d["gold_unknown_uuids"] == 1
    assert d["queries_without_gold"] == 2  # Q-0004 (only future gold), Q-0005 (no answer)
    assert d["queries_without_next_assistant"] == 1
    assert d["is_query_unreadable"] == 1
    assert d["weekday_mismatch"] == 1
    assert sum(d.values()) == 10
    assert tiny.info["gold_from_memory_used"] == 1
    assert tiny.info["memory_use_without_query"] == 1
    assert tiny.info["level"] == "file"
    assert tiny.info["queries"] == 6 and tiny.info["queries_with_gold"] == 4


def test_reused_when_complete_and_saved_as_a_folder(tiny, tmp_path: Path) -> None:
    marker = json.loads((tiny.root / MARKER_NAME).read_text())
    assert marker["loader"] == "realmem"
    again = load_realmem(FIXTURE, tiny.root)
    assert again.fingerprint == tiny.fingerprint
    back = load_folder(tiny.root)
    assert "cutoff" in back.queries.columns
    assert np.array_equal(back.queries["cutoff"], tiny.queries["cutoff"])


def test_a_changed_file_is_a_new_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    a = load_realmem(src)
    data = json.loads((src / "Small_Two_dialogues_256k.json").read_text())
    data["dialogues"][0]["dialogue_turns"][0]["content"] = "Book me an aisle seat."
    (src / "Small_Two_dialogues_256k.json").write_text(json.dumps(data))
    b = load_realmem(src)
    assert a.root != b.root and a.root.parent == b.root.parent == tmp_path / "cache" / "memlab"


def test_parsers() -> None:
    assert parse_session_date("2025-12-15 (Monday)") == (datetime(2025, 12, 15, tzinfo=UTC), True)
    assert parse_session_date("2025-12-22 (Tuesday)")[1] is False
    with pytest.raises(ValueError, match="2025-13-01"):
        parse_session_date("2025-13-01")
    with pytest.raises(ValueError, match="current_time"):
        parse_session_date("15/12/2025")
    assert [read_is_query(v) for v in (True, "True", "false", None, False, "x", 1)] == [
        True,
        True,
        False,
        False,
        False,
        None,
        None,
    ]


def test_bad_shapes_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "Bad_dialogues_256k.json"
    bad.write_text(json.dumps({"dialogues": [{"session_uuid": "x"}]}))
    with pytest.raises(ValueError, match=r"Bad_dialogues_256k\.json.*dialogue_turns"):
        load_realmem(bad, tmp_path / "out")


def test_not_found_says_where_it_looked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMLAB_REALMEM", str(tmp_path / "absent"))
    assert realmem_default_path() == tmp_path / "absent"
    with pytest.raises(FileNotFoundError, match=r"absent \(no such file or folder\)"):
        load_realmem()
    r = run("eval", "realmem", "--embedder", "hashing", check=False)
    assert r.returncode == 2
    assert "RealMem not found" in r.stderr and "absent" in r.stderr


def test_eval_realmem_on_the_fixture(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    r = run(
        "eval",
        "realmem",
        "--path",
        str(FIXTURE),
        "--embedder",
        "hashing",
        "--unit",
        "turn",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    names = [x["name"] for x in rows]
    assert names == [
        "recency",
        "random",
        "bm25",
        "vector",
        "wsum",
        "memlab-best",
        "memlab-best-chunk",
    ]
    for x in rows:
        assert list(x["metrics"]) == list(REALMEM_METRICS)
        assert x["n_queries"] == 4  # queries with past gold
    assert "vs_baseline" in rows[0] and "vs_baseline" not in rows[2]  # bm25 is the baseline
    assert "sessions_time_backwards 1" in r.stderr  # defects said beside the JSON
    # Small_Two's only query has one past session: every system finds it at rank 1.
    table = run(
        "eval",
        "realmem",
        "--path",
        str(FIXTURE),
        "--embedder",
        "hashing",
        "--preset",
        "recency,bm25",
    )
    assert table.returncode == 0, table.stderr
    assert "level='file'" in table.stdout and "realmem defects" in table.stdout


# ----------------------------------------------------------------------- dev personas


@pytest.fixture(scope="module")
def dev():
    path = realmem_default_path()
    if path is None or not path.exists():
        pytest.skip("RealMem not found (looked for $MEMLAB_REALMEM, ../shared/datasets/realmem)")
    return load_realmem(path)


def test_dev_personas_as_stated_in_docs(dev) -> None:
    assert sorted(dev.workspaces) == [
        "Adeleke_Okonjo",
        "Ethan_Hunt",
        "Kenta_Tanaka",
        "Kim_Ji_young",
        "Liam_O_Connor",
    ]
    assert dev.info["sessions"] == 1026 and dev.info["queries"] == 728
    found = {k: v for k, v in dev.info["defects"].items() if v}
    assert found == {"gold_own_session": 1, "sessions_time_backwards": 53}
    # Every query has a past gold session; the cut-off hides its own session.
    assert dev.info["queries_with_gold"] == 728
    assert np.isfinite(dev.queries["cutoff"]).all()


# ------------------------------------------------------------- the shipped persona


def test_shipped_persona_is_the_original_and_loads(tmp_path: Path) -> None:
    """datasets/realmem ships one persona, gzip-compressed, byte-identical to RealMem's
    file (the sha256 its README states), with the Apache-2.0 licence beside it; the loader
    reads it as it reads the .json."""
    import gzip
    import hashlib

    folder = Path(__file__).resolve().parents[1] / "datasets" / "realmem"
    gz = folder / "Kenta_Tanaka_dialogues_256k.json.gz"
    digest = hashlib.sha256(gzip.decompress(gz.read_bytes())).hexdigest()
    assert digest == "b8fe2e606db96dbce1ffa0ab7c21b23ce83d4b5d472d80cd4bd23cd8a259d397"
    assert digest in (folder / "README.md").read_text()
    assert "Apache License" in (folder / "LICENSE").read_text()
    ds = load_realmem(folder, tmp_path / "out")
    assert list(ds.workspaces) == ["Kenta_Tanaka"]
    assert ds.info["sessions"] == 191 and ds.info["queries"] == 153
