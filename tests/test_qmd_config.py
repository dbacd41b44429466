"""OpenClaw 2026-04's QMD backend config (``memory.backend: "qmd"``): read strictly, searched
as that QMD would (default memory, collections with their patterns, transcripts), ranked
with ``qmd-like``; ``memlab watch``'s timing; and what release 2026.9.6's doctor makes of it
(against the release's own migration under node when it is present).
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
from pathlib import Path

import pytest

from memlab.config.load import config_system, index_extras, load_search_config, watch_settings
from memlab.config.qmd import QmdConfig, doctor_migration, parse_duration_ms
from tests.conftest import cli, write
from tests.openclaw_release import require_release


def config(tmp_path: Path, qmd: dict, **memory) -> Path:
    f = tmp_path / "openclaw.json"
    body = {
        "memory": {"backend": "qmd", "qmd": qmd, **memory},
        "agents": {"defaults": {"memorySearch": {"provider": "hashing"}}},
    }
    f.write_text("// a 2026-04 config with the QMD backend\n" + json.dumps(body))
    return f


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "# Memory\n\nThe dentist appointment is on Tuesday.\n")
    write(root, "memory/2026-01-02.md", "# Day\n\nAlice planted tomatoes.\n")
    write(root, "notes/garden.md", "# Garden\n\nPlant tomatoes in May.\n")
    write(root, "notes/deep/more.md", "# Deep\n\ntomatoes grow in the deep folder\n")
    write(root, "notes/todo.txt", "tomatoes, not markdown\n")
    write(
        root, "sessions/s1.jsonl", json.dumps({"role": "user", "content": "I love tomatoes"}) + "\n"
    )
    return root


def test_reads_every_setting(tmp_path: Path) -> None:
    f = config(
        tmp_path,
        {
            "includeDefaultMemory": False,
            "searchMode": "search",
            "update": {"interval": "2m", "debounceMs": 900, "onBoot": True},
            "limits": {"maxResults": 3, "timeoutMs": 2000, "maxSnippetChars": 300},
            "paths": [{"name": "docs", "path": "notes", "pattern": "*.md"}, {"path": "archive"}],
            "sessions": {"enabled": True, "retentionDays": 30},
            "command": "qmd",
            "scope": {"default": "deny"},
        },
    )
    cfg, note = load_search_config(f, check_provider=False)
    assert isinstance(cfg, QmdConfig)
    assert [c["pattern"] for c in cfg.collections] == ["*.md", "**/*.md"]  # QMD's default glob
    assert [c["name"] for c in cfg.collections] == ["docs", "archive-main"]
    idx = cfg.index_config()
    assert idx.sources == ("memory", "sessions")
    assert (idx.chunk_tokens, idx.chunk_overlap, idx.max_results) == (900, 135, 3)
    assert index_extras(cfg) == {"chunker_kind": "heading", "default_memory": False}
    assert watch_settings(cfg) == {"debounce_ms": 900, "interval_s": 120.0}
    p = config_system(cfg, {})
    assert p.name == "qmd-like" and p.max_results == 3 and p.vector is False  # searchMode search
    assert "qmd-like" in note and "query expansion and reranker" in note
    assert "collection docs (notes, *.md)" in note and "session transcripts" in note


@pytest.mark.parametrize(
    "qmd, says",
    [
        (
            {"limits": {"maxResult": 3}},
            "unknown key memory.qmd.limits.maxResult (did you mean maxResults?)",
        ),
        ({"pathz": []}, "unknown key memory.qmd.pathz (did you mean paths?)"),
        ({"paths": [{"path": "x", "glob": "*.md"}]}, "memory.qmd.paths [0] has unknown key glob"),
        ({"searchMode": "deep"}, "memory.qmd.searchMode must be one of search, vsearch, query"),
        ({"update": {"interval": "soon"}}, "memory.qmd.update.interval must be a duration"),
        ({"limits": {"maxResults": 0}}, "memory.qmd.limits.maxResults must be an integer >= 1"),
    ],
)
def test_strict_keys(tmp_path: Path, qmd: dict, says: str, private_cache) -> None:
    f = config(tmp_path, qmd)
    with pytest.raises(ValueError, match=r"OpenClaw's memory\.qmd schema is strict") as exc:
        load_search_config(f, check_provider=False)
    assert says in str(exc.value) and str(f) in str(exc.value)
    code, _, err = cli("search", str(tmp_path), "x", "--config", str(f))
    assert code == 2 and says in err


def test_memory_keys_are_strict_too(tmp_path: Path) -> None:
    f = config(tmp_path, {}, sarch={})
    with pytest.raises(ValueError, match=r"unknown key memory.sarch \(valid keys: backend"):
        load_search_config(f, check_provider=False)


def found(out: str) -> list[str]:
    return [r["path"] for r in json.loads(out)["results"]]


def test_search_searches_what_qmd_would(ws: Path, tmp_path: Path, private_cache) -> None:
    """Collections with their patterns; the default memory only with includeDefaultMemory;
    transcripts with sessions.enabled; one result per file (qmd-like); the note on stderr."""
    only = config(
        tmp_path,
        {
            "includeDefaultMemory": False,
            "paths": [{"name": "n", "path": "notes", "pattern": "*.md"}],
        },
    )
    code, out, err = cli("search", str(ws), "tomatoes", "--config", str(only), "--json")
    assert code == 0, err
    assert found(out) == ["notes/garden.md"]  # not deep/ (pattern), not memory/ (no default)
    assert "memlab searches collection n (notes, *.md) with qmd-like" in err
    every = config(
        tmp_path,
        {"paths": [{"path": "notes"}], "sessions": {"enabled": True}, "limits": {"maxResults": 10}},
    )
    code, out, err = cli("search", str(ws), "tomatoes", "--config", str(every), "--json")
    assert code == 0, err
    paths = found(out)
    assert set(paths) == {  # every indexed file is in QMD's vector list (20 files)
        "MEMORY.md",
        "memory/2026-01-02.md",
        "notes/garden.md",
        "notes/deep/more.md",
        "sessions/s1.jsonl",
    }
    assert len(paths) == len(set(paths))
    code, out, err = cli("search", str(ws), "dentist", "--config", str(every), "--json")
    assert found(out)[0] == "MEMORY.md"


def test_eval_config_runs_qmd_like(tmp_path: Path, private_cache) -> None:
    from memlab.datasets.synthetic import SynthConfig, generate

    generate(SynthConfig(days=6, seed=2, queries_per_type=2), tmp_path / "c")
    f = config(tmp_path, {"limits": {"maxResults": 6}})
    lab = ["synthetic", "--path", str(tmp_path / "c"), "--embedder", "hashing", "--json"]
    code, out, err = cli("eval", *lab, "--config", str(f), "--preset", "qmd-like")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["config"]["same_ranking_as"] == "qmd-like"


def test_durations() -> None:
    assert [parse_duration_ms(x) for x in ("5m", "30s", "1h", "250ms", "2d", 1500, "0s")] == [
        300_000,
        30_000,
        3_600_000,
        250,
        172_800_000,
        1500,
        0,
    ]
    with pytest.raises(ValueError):
        parse_duration_ms("soon")


def test_watch_syncs_every_interval(tmp_path: Path) -> None:
    """update.interval: a sync every interval, with no file event at all."""
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.files.watch import watch
    from memlab.store import MemoryIndex

    write(tmp_path / "ws", "MEMORY.md", "# M\n\nhello\n")
    idx = MemoryIndex(
        tmp_path / "ws",
        db_path=tmp_path / "i.sqlite",
        embedder=HashingEmbedder(32),
        chunker=ChunkerConfig("line"),
        progress=False,
    )
    syncs: list[object] = []
    stop = threading.Event()
    watch(idx, max_seconds=1.3, interval_s=0.4, on_sync=syncs.append, stop=stop, verbose=False)
    assert len(syncs) >= 3  # the first sync, then about one per 0.4 s
    idx.close()


def test_doctor_shows_the_release_migration(ws: Path, tmp_path: Path) -> None:
    f = config(
        tmp_path,
        {
            "paths": [{"name": "docs", "path": " notes ", "pattern": "**/*.md"}],
            "sessions": {"enabled": True},
        },
    )
    code, out, err = cli("doctor", str(ws), "--config", str(f), "--json")
    assert code == 0, err
    mig = json.loads(out)["config"]
    assert mig["memory.search"] == {
        "experimental": {"sessionMemory": True},
        "sources": ["memory", "sessions"],
        "extraPaths": [{"path": "notes", "pattern": "**/*.md"}],
    }
    assert mig["changes"][-1].startswith("Removed retired QMD memory configuration")
    assert json.loads(f.read_text().split("\n", 1)[1])["memory"]["backend"] == "qmd"  # untouched


# --------------------------------------------------------- against the release (node)
HARNESS = Path(__file__).parent / "data" / "openclaw_qmd_doctor_harness.mjs"


def random_config(rng: random.Random) -> dict:
    def entry() -> object:
        path = rng.choice(["notes", " notes ", "~/docs", "", "archive/"])
        e: dict = {"path": path}
        if rng.random() < 0.6:
            e["pattern"] = rng.choice(["**/*.md", " *.md ", "", "docs/*.md"])
        if rng.random() < 0.5:
            e["name"] = rng.choice(["a", "b"])
        return e

    memory: dict = {"backend": "qmd"}
    qmd: dict = {}
    if rng.random() < 0.8:
        qmd["paths"] = [entry() for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.6:
        qmd["sessions"] = {"enabled": rng.choice([True, False])}
    memory["qmd"] = qmd
    if rng.random() < 0.6:
        search: dict = {}
        if rng.random() < 0.5:
            search["sources"] = rng.choice([[], ["memory"], ["memory", "sessions"]])
        if rng.random() < 0.4:
            search["experimental"] = rng.choice([{}, {"sessionMemory": False}])
        if rng.random() < 0.5:
            search["extraPaths"] = [
                rng.choice(["notes", " x ", {"path": "notes", "pattern": "**/*.md"}])
            ]
        if rng.random() < 0.4:
            search["qmd"] = {
                "extraCollections": [entry()],
                "sessions": {"enabled": rng.random() < 0.5},
            }
        memory["search"] = search
    return {"memory": memory}


@pytest.mark.slow
def test_doctor_migration_equals_the_release() -> None:
    dist = require_release("markdown-chunks-DYWd0D11.mjs")  # any module of its dist/
    rng = random.Random(7)
    configs = [random_config(rng) for _ in range(300)]
    out = subprocess.run(
        ["node", str(HARNESS), str(dist)],
        input=json.dumps(configs),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for cfg, want in zip(configs, json.loads(out.stdout), strict=True):
        search, changes = doctor_migration(cfg)
        assert changes == want["changes"], cfg
        assert search == want["raw"].get("memory", {}).get("search", {}), cfg


def test_the_ignored_keys_are_the_schemas_unused_leaves() -> None:
    """``IGNORED_QMD_KEYS`` (what the docs list as accepted and unused) is read off the
    schema, so a key cannot be accepted without being listed or the reverse."""
    from memlab.config.qmd import IGNORED_QMD_KEYS

    assert set(IGNORED_QMD_KEYS) == {
        "command", "mcporter", "scope", "sessions.retentionDays", "sessions.exportDir",
        "update.onBoot", "update.waitForBootSync", "update.embedInterval",
        "update.commandTimeoutMs", "update.updateTimeoutMs", "update.embedTimeoutMs",
        "limits.maxSnippetChars", "limits.maxInjectedChars",
    }  # fmt: skip
