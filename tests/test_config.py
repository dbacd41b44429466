from __future__ import annotations

from pathlib import Path

import pytest

from memlab.config import (
    IGNORED_KEYS,
    MemorySearchConfig,
    load_openclaw_config,
    provider_problem,
)
from memlab.pipeline.presets import from_config


def test_defaults_match_spec() -> None:
    c = MemorySearchConfig()
    assert (c.max_results, c.min_score, c.vector_weight, c.text_weight) == (6, 0.35, 0.7, 0.3)
    assert c.candidates == 24 and c.chunk_max_chars == 1600
    assert (c.chunk_tokens, c.chunk_overlap, c.mmr_lambda, c.half_life_days) == (400, 80, 0.7, 30)
    assert c.watch_debounce_ms == 1500 and c.citations == "auto" and not c.mmr_enabled


def test_clamps() -> None:
    assert MemorySearchConfig(candidate_multiplier=50).candidate_multiplier == 20
    assert MemorySearchConfig(candidate_multiplier=0.1).candidate_multiplier == 1
    assert MemorySearchConfig(mmr_lambda=3).mmr_lambda == 1
    assert MemorySearchConfig(max_results=100, candidate_multiplier=20).candidates == 200
    p = from_config(MemorySearchConfig(vector_weight=1.5, text_weight=-1))
    assert (p.vector_weight, p.text_weight) == (1.0, 0.0)


def test_json5_file_with_agent_override(tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(
        """
        // JSON5: comments, trailing commas, unquoted keys
        {
          agents: {
            defaults: {
              memorySearch: {
                extraPaths: ["docs", "~/notes"],
                query: { maxResults: 8, hybrid: { vectorWeight: 0.6, textWeight: 0.4, mmr: { enabled: true } } },
                chunking: { tokens: 300 },
              },
            },
            list: [
              { id: "work", memorySearch: { extraPaths: ["docs", "work"], query: { minScore: 0.2 } } },
            ],
          },
        }
        """
    )
    base = load_openclaw_config(cfg)
    assert base.max_results == 8 and base.vector_weight == 0.6 and base.mmr_enabled
    assert base.chunk_tokens == 300 and base.min_score == 0.35
    work = load_openclaw_config(cfg, "work")
    assert work.min_score == 0.2 and work.max_results == 8 and work.mmr_enabled
    assert work.extra_paths == ("docs", "~/notes", "work")
    assert MemorySearchConfig.from_openclaw(base.to_openclaw()) == base
    with pytest.raises(ValueError, match=r"no agent 'nobody' in agents\.list \(agents: work\)"):
        load_openclaw_config(cfg, "nobody")


def test_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"query\.maxResults"):
        MemorySearchConfig.from_openclaw({"query": {"maxResults": "six"}})
    with pytest.raises(ValueError, match=r"query\.hybrid\.mmr\.enabled"):
        MemorySearchConfig.from_openclaw({"query": {"hybrid": {"mmr": {"enabled": "yes"}}}})
    with pytest.raises(ValueError, match="provider must be one of"):
        MemorySearchConfig(provider="magic")
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json5 ")
    with pytest.raises(ValueError, match=r"bad\.json"):
        load_openclaw_config(bad)
    with pytest.raises(FileNotFoundError):
        load_openclaw_config(tmp_path / "missing.json")


def _cfg(tmp_path: Path, text: str, name: str = "openclaw.json") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_misspelled_key_names_file_path_and_nearest_key(tmp_path: Path) -> None:
    p = _cfg(tmp_path, "{agents: {defaults: {memorySearch: {query: {hybrid: {textWieght: 0.5}}}}}}")
    with pytest.raises(ValueError) as exc:
        load_openclaw_config(p)
    msg = str(exc.value)
    assert str(p) in msg
    assert "agents.defaults.memorySearch.query.hybrid.textWieght" in msg
    assert "did you mean textWeight?" in msg
    # An agent's override is checked too, under its own path; every unknown key is listed.
    p = _cfg(
        tmp_path,
        "{agents: {list: [{id: 'a'}, {id: 'b', memorySearch: {chunkng: {}, sync: {wtach: true}}}]}}",
    )
    with pytest.raises(ValueError) as exc:
        load_openclaw_config(p)
    msg = str(exc.value)
    assert "agents.list[1].memorySearch.chunkng (did you mean chunking?)" in msg
    assert "agents.list[1].memorySearch.sync.wtach (did you mean watch?)" in msg
    # No near key: the valid keys at that level are listed.
    with pytest.raises(ValueError, match=r"memorySearch\.zzz \(valid keys: enabled, provider"):
        MemorySearchConfig.from_openclaw({"zzz": 1})


def test_object_keys_must_hold_objects(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"memorySearch\.query must be an object, got a number"):
        MemorySearchConfig.from_openclaw({"query": 5})
    p = _cfg(tmp_path, "{agents: {defaults: {memorySearch: [1]}}}")
    with pytest.raises(ValueError, match=r"agents\.defaults\.memorySearch must be an object"):
        load_openclaw_config(p)
    p = _cfg(tmp_path, "{agents: {list: {id: 'a'}}}")
    with pytest.raises(ValueError, match=r"agents\.list must be an array"):
        load_openclaw_config(p)
    with pytest.raises(ValueError, match=r"query\.hybrid\.vectorWeight must be a finite number"):
        MemorySearchConfig.from_openclaw({"query": {"hybrid": {"vectorWeight": "0.7"}}})
    with pytest.raises(ValueError, match=r"remote\.baseUrl must be a string, got a number"):
        MemorySearchConfig.from_openclaw({"remote": {"baseUrl": 8080}})


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    for text, kind in (("[1, 2]", "an array"), ("'x'", "a string"), ("null", "null")):
        p = _cfg(tmp_path, text, "top.json")
        with pytest.raises(
            ValueError, match=rf"top\.json: the top level must be an object.*{kind}"
        ):
            load_openclaw_config(p)
    with pytest.raises(ValueError, match="is a directory"):
        load_openclaw_config(tmp_path)


def test_openclaw_keys_memlab_ignores_are_accepted(tmp_path: Path) -> None:
    ms: dict = {}
    for key in IGNORED_KEYS:
        node = ms
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = 1
    ms["remote"]["headers"] = {"X-Anything": "goes"}  # a record: any header name
    assert MemorySearchConfig.from_openclaw(ms) == MemorySearchConfig(
        remote_headers={"X-Anything": "goes"}
    )
    # The rest of OpenClaw's config is not memlab's to police.
    import json

    p = _cfg(
        tmp_path,
        json.dumps(
            {
                "gateway": {"port": 1},
                "agents": {
                    "defaults": {"model": "x", "memorySearch": ms},
                    "list": [{"id": "a", "tools": {"weird": 1}}],
                },
            }
        ),
    )
    assert load_openclaw_config(p, "a").remote_headers == {"X-Anything": "goes"}


def test_agent_id_must_name_an_agent(tmp_path: Path) -> None:
    p = _cfg(tmp_path, "{agents: {list: [{id: 'work'}]}}")
    for bad in ("", "   "):
        with pytest.raises(ValueError, match=r"openclaw\.json: the agent id is empty.*work"):
            load_openclaw_config(p, bad)


def test_provider_problem_names_key_and_fix() -> None:
    msg = provider_problem(MemorySearchConfig(provider="openai"))
    assert msg is not None and "memorySearch.remote.baseUrl is not set" in msg
    assert "--embedder" in msg
    assert (
        provider_problem(MemorySearchConfig(provider="openai", remote_base_url="http://h/v1"))
        is None
    )
    bad_url = provider_problem(MemorySearchConfig(provider="auto", remote_base_url="localhost:1"))
    assert bad_url is not None and "memorySearch.remote.baseUrl must be an http(s) URL" in bad_url
    gem = provider_problem(MemorySearchConfig(provider="gemini"))
    assert gem is not None and "does not implement" in gem
    assert provider_problem(MemorySearchConfig()) is None


def test_index_options_is_the_one_config_to_index_translation() -> None:
    from memlab.chunking import ChunkerConfig
    from memlab.config import index_options
    from memlab.embed import FallbackEmbedder, HashingEmbedder

    cfg = MemorySearchConfig(
        provider="hashing",
        store_path="/tmp/memlab-x.sqlite",
        extra_paths=("notes",),
        chunk_tokens=200,
        chunk_overlap=20,
        fts_tokenizer="porter",
        cache_enabled=False,
        cache_max_entries=10,
    )
    opts = index_options(cfg)
    assert isinstance(opts.pop("embedder"), HashingEmbedder)
    assert opts == {
        # store.path is OpenClaw's own database: never memlab's index
        "db_path": None,
        "chunker": ChunkerConfig("openclaw", 200, 20),
        "extra_paths": ["notes"],
        "sources": ("memory",),
        "fts_tokenizer": "porter",
        "cache_enabled": False,
        "cache_max_entries": 10,
    }
    # each named override replaces one setting; extra paths add; other keywords win as given
    over = index_options(
        cfg,
        provider="none",
        chunker_kind="line",
        chunk_tokens=100,
        db_path="b.sqlite",
        extra=["more"],
        fts_tokenizer="trigram",
        vector_backend="faiss",
    )
    assert over["embedder"] is None and over["chunker"] == ChunkerConfig("line", 100, 20)
    assert (over["db_path"], over["extra_paths"], over["fts_tokenizer"]) == (
        "b.sqlite",
        ["notes", "more"],
        "trigram",
    )
    assert over["vector_backend"] == "faiss"
    assert index_options(cfg, embedder=None)["embedder"] is None
    # the config's fallback wraps the config's provider, not one named on the command line
    remote = MemorySearchConfig(
        provider="openai", remote_base_url="http://127.0.0.1:9/v1", fallback="hashing"
    )
    assert isinstance(index_options(remote)["embedder"], FallbackEmbedder)
    assert isinstance(index_options(remote, provider="hashing")["embedder"], HashingEmbedder)
