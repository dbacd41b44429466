from __future__ import annotations

from pathlib import Path

import pytest

from memlab.config import MemorySearchConfig, load_openclaw_config
from memlab.pipeline import from_config


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
