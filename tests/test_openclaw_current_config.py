"""OpenClaw 2026.9.6's settings (spec openclaw-current.md §12), the store location (§4), the
legacy layout still read, and the command line picking the reader by the file's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memlab.config.release import (
    FIXED,
    agent_store_path,
    config_shape,
    legacy_note,
    load_current_config,
    normalize_agent_id,
    openclaw_state_dir,
)
from tests.conftest import cli


def write(tmp_path: Path, text: str, name: str = "openclaw.json") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def error(path: Path, agent: str | None = None) -> str:
    with pytest.raises(ValueError) as exc:
        load_current_config(path, agent)
    return str(exc.value)


def test_defaults_and_fixed_constants(tmp_path: Path) -> None:
    cfg = load_current_config(write(tmp_path, "{memory: {search: {}}}"))
    assert (cfg.enabled, cfg.sources, cfg.provider, cfg.fallback) == (
        True,
        ("memory",),
        "openai",
        "none",
    )
    assert (cfg.fts_tokenizer, cfg.max_results, cfg.min_score, cfg.cache_enabled) == (
        "unicode61",
        6,
        0.35,
        True,
    )
    assert cfg.agent_id == "main" and cfg.citations == "auto"
    # Spec §12, in its own words and units: "Fixed: chunking 400/80, weights 0.7/0.3,
    # multiplier 4, MMR λ 0.7, decay 30 d, cache 50,000, debounce 1.5 s".
    spec = {"chunking": (400, 80), "weights": (0.7, 0.3), "multiplier": 4, "MMR λ": 0.7}
    spec |= {"decay (d)": 30, "cache": 50_000, "debounce (s)": 1.5}
    f = FIXED
    ours = {
        "chunking": (f["chunk_tokens"], f["chunk_overlap"]),
        "weights": (f["vector_weight"], f["text_weight"]),
        "multiplier": f["candidate_multiplier"],
        "MMR λ": f["mmr_lambda"],
        "decay (d)": f["half_life_days"],
        "cache": f["cache_max_entries"],
        "debounce (s)": f["watch_debounce_ms"] / 1000,
    }
    assert ours == spec and len(FIXED) == 9  # every fixed setting, and nothing else
    legacy = cfg.index_config()  # what the index is built from
    assert (legacy.chunk_tokens, legacy.chunk_overlap, legacy.cache_max_entries) == (
        400,
        80,
        50_000,
    )
    assert load_current_config(
        write(tmp_path, "{memory: {search: {provider: 'auto'}}}")
    ).provider == ("openai")


def test_strict_schema_names_key_and_file(tmp_path: Path) -> None:
    typo = write(tmp_path, "{memory: {search: {query: {maxResult: 3}}}}", "typo.json")
    msg = error(typo)
    assert str(typo) in msg and "memory.search.query.maxResult" in msg
    assert "did you mean maxResults?" in msg
    top = error(write(tmp_path, "{memory: {serch: {}, search: {}}}", "top.json"))
    assert "unknown key memory.serch" in top and "top.json" in top
    deep = error(write(tmp_path, "{memory: {search: {store: {fts: {tokeniser: 'trigram'}}}}}"))
    assert "memory.search.store.fts.tokeniser (did you mean tokenizer?)" in deep
    value = error(write(tmp_path, "{memory: {search: {query: {minScore: 1.5}}}}"))
    assert "memory.search.query.minScore must be a number in [0, 1], got a number (1.5)" in value
    tok = error(write(tmp_path, "{memory: {search: {store: {fts: {tokenizer: 'porter'}}}}}"))
    assert "must be one of unicode61, trigram" in tok
    agent = error(
        write(
            tmp_path,
            "{memory: {search: {}}, agents: {entries: {ops: {memory: {search: {ttl: 1}}}}}}",
        )
    )
    assert "unknown key agents.entries.ops.memory.search.ttl" in agent
    paths = error(write(tmp_path, "{memory: {search: {extraPaths: [{path: 'a', glob: '*.md'}]}}}"))
    assert "memory.search.extraPaths [0] has unknown key glob" in paths


def test_hybrid_weights_are_no_longer_settable(tmp_path: Path) -> None:
    cfg = write(
        tmp_path,
        "{memory: {search: {query: {hybrid: {vectorWeight: 0.5, textWeight: 0.5}}}}}",
        "weights.json",
    )
    msg = error(cfg)
    assert "unknown key memory.search.query.hybrid" in msg
    assert "fixes the hybrid weights (0.7/0.3)" in msg and "weights.json" in msg
    chunking = error(write(tmp_path, "{memory: {search: {chunking: {tokens: 200}}}}"))
    assert "unknown key memory.search.chunking" in chunking


def test_agent_override_key_by_key(tmp_path: Path) -> None:
    text = """{
      memory: {citations: 'off', search: {extraPaths: ['notes', {path: 'docs', pattern: '**/*.md'}],
               query: {maxResults: 4, minScore: 0.2}, store: {fts: {tokenizer: 'trigram'}}}},
      agents: {entries: {Ops: {memory: {search: {extraPaths: ['ops', 'notes'],
                                                 query: {minScore: 0.5}}}}}},
    }"""
    cfg = load_current_config(write(tmp_path, text), "ops")
    assert cfg.agent_id == "ops" and cfg.citations == "off"
    assert (cfg.max_results, cfg.min_score, cfg.fts_tokenizer) == (4, 0.5, "trigram")
    assert cfg.extra_paths == ("notes", {"path": "docs", "pattern": "**/*.md"}, "ops")
    assert cfg.pipeline_overrides() == {"max_results": 4, "min_score": 0.5}
    base = load_current_config(write(tmp_path, text))
    assert (base.min_score, base.extra_paths[-1]) == (0.2, {"path": "docs", "pattern": "**/*.md"})
    missing = error(write(tmp_path, text), "nobody")
    assert "no agent 'nobody'" in missing and "Ops" in missing


def test_sessions_need_session_memory(tmp_path: Path) -> None:
    plain = load_current_config(
        write(
            tmp_path,
            "{memory: {search: {sources: ['memory', 'sessions'], rememberAcrossConversations: false}}}",
        )
    )
    assert plain.sources == ("memory",)
    on = load_current_config(
        write(
            tmp_path,
            "{memory: {search: {sources: ['sessions'], experimental: {sessionMemory: true}}}}",
        )
    )
    assert on.sources == ("sessions",)
    off = error(write(tmp_path, "{memory: {search: {enabled: false}}}"))
    assert "memory.search.enabled is false" in off


def test_shape_and_legacy_note() -> None:
    assert config_shape({"memory": {"search": {}}}) == "current"
    assert config_shape({"agents": {"entries": {"a": {"memory": {"search": {}}}}}}) == "current"
    assert config_shape({"agents": {"defaults": {"memorySearch": {}}}}) == "legacy"
    assert config_shape([1]) == "legacy" and config_shape({}) == "legacy"
    note = legacy_note({"agents": {"defaults": {"memorySearch": {"provider": "auto"}}}})
    assert note is not None and "openclaw doctor --fix" in note and "memory.search" in note
    assert legacy_note({"memory": {"search": {}}}) is None


def test_state_dir_and_store_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert openclaw_state_dir(env) == home / ".openclaw"  # neither exists: the new name
    (home / ".clawdbot").mkdir()
    assert openclaw_state_dir(env) == home / ".clawdbot"  # only the legacy folder exists
    (home / ".openclaw").mkdir()
    assert openclaw_state_dir(env) == home / ".openclaw"
    assert openclaw_state_dir({**env, "OPENCLAW_STATE_DIR": " ~/state "}) == home / "state"
    other = tmp_path / "oc-home"
    assert openclaw_state_dir({**env, "OPENCLAW_HOME": str(other)}) == other / ".openclaw"
    assert agent_store_path("Ops", env) == home / ".openclaw/agents/ops/agent/openclaw-agent.sqlite"
    assert agent_store_path(None, env).parts[-3:] == ("main", "agent", "openclaw-agent.sqlite")
    assert [normalize_agent_id(v) for v in ("Main", " a b ", "--x--", "!!!", "")] == [
        "main",
        "a-b",
        "x",
        "main",
        "main",
    ]


# ------------------------------------------------------------- the command line
@pytest.fixture
def ws(tmp_path: Path, private_home: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n- The coffee roast is medium.\n")
    for day in range(1, 5):
        (root / "memory" / f"2026-11-0{day}.md").write_text(
            f"# Day {day}\n\ncoffee roast note {day}\n"
        )
    return root


def needs_current() -> None:
    from memlab.pipeline.presets import PRESETS

    # registered: a missing preset is a failure, not a skip
    assert "openclaw-current" in PRESETS


def test_cli_reads_the_release_config(ws: Path, tmp_path: Path) -> None:
    needs_current()
    cfg = write(tmp_path, "{memory: {search: {query: {maxResults: 2, minScore: 0}}}}")
    base = ["search", str(ws), "coffee roast", "--config", str(cfg)]
    code, _, err = cli(*base)  # provider defaults to openai: memlab needs a base URL or --embedder
    assert code == 2 and "memory.search.remote.baseUrl" in err and str(cfg) in err
    code, out, err = cli(*base, "--embedder", "hashing", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert len(res["results"]) == 2 and res["results"][0]["corpus"] == "memory"  # the release
    code, out, _ = cli(*base, "--embedder", "hashing", "--explain")
    assert "openclaw-current" in out and "max_results=2" in out
    bad = write(tmp_path, "{memory: {search: {query: {hybrid: {textWeight: 1}}}}}", "bad.json")
    code, _, err = cli("search", str(ws), "q", "--embedder", "hashing", "--config", str(bad))
    assert code == 2 and "bad.json" in err and "memory.search.query.hybrid" in err


def test_cli_legacy_config_still_read_with_note(ws: Path, tmp_path: Path) -> None:
    cfg = write(
        tmp_path, "{agents: {defaults: {memorySearch: {query: {maxResults: 1, minScore: 0}}}}}"
    )
    code, out, err = cli(
        "search", str(ws), "coffee", "--embedder", "hashing", "--json", "--config", str(cfg)
    )
    assert code == 0 and len(json.loads(out)["results"]) == 1
    assert "openclaw doctor --fix" in err and "agents.defaults.memorySearch" in err
    assert "corpus" not in json.loads(out)["results"][0]  # the 2026-04 system


def test_status_shows_the_release_store(ws: Path, tmp_path: Path) -> None:
    assert cli("index", str(ws), "--embedder", "hashing", "--quiet")[0] == 0
    home = tmp_path / "home"
    code, out, _ = cli("status", str(ws), "--embedder", "hashing")
    want = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    assert code == 0 and f"openclaw_store     {want} (absent;" in out
    code, out, _ = cli("status", str(ws), "--embedder", "hashing", "--json")
    assert json.loads(out)["openclaw_store"] == {
        "path": str(want),
        "agent": "main",
        "exists": False,
    }
    assert not (home / ".openclaw").exists()  # shown, never created
    cfg = write(tmp_path, "{agents: {entries: {Ops: {memory: {search: {}}}}}}")
    # a memory.search config indexes the release's files (openclaw-2026.9): its own index
    with_cfg = [str(ws), "--embedder", "hashing", "--config", str(cfg), "--agent", "Ops"]
    assert cli("index", *with_cfg, "--quiet")[0] == 0
    code, out, _ = cli("status", *with_cfg, "--json")
    st: dict[str, Any] = json.loads(out)
    assert code == 0 and st["openclaw_store"]["path"].endswith(
        "agents/ops/agent/openclaw-agent.sqlite"
    )
    assert st["fingerprint"]["memory_files"] == "openclaw-2026.9"
