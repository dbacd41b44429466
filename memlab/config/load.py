"""A settings file of either OpenClaw, read by one entry point and written by another.

``openclaw.json`` comes in two layouts: 2026-04's ``agents.defaults.memorySearch``
(``memlab.config.load_openclaw_config``) and release 2026.9.6's ``memory.search``
(``memlab.config.release.load_current_config``). `load_search_config` reads either
(``memlab.config.release.file_shape`` tells them apart) and `config_system` gives the system
the file describes, so the command line and the server hold no branch on the release.

`export_config` is the way back (``memlab export``): the settings of a layout that describe
a given system, checked by reading them back through `config_system` — an export is written
only when its system equals the one it came from, so the round trip holds by construction,
and a system a layout cannot express is refused (`ExportRefused`) naming each parameter and
the stage it belongs to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.config import (
    MemorySearchConfig,
    load_openclaw_config,
    openclaw_file,
    provider_problem,
)
from memlab.config.release import (
    CurrentSearchConfig,
    current_file,
    file_shape,
    legacy_note,
    load_current_config,
)
from memlab.config.vocab import EXPORT_TARGETS, OPENCLAW_TOKENIZERS

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline

__all__ = [
    "ExportRefused",
    "config_files_rule",
    "config_system",
    "export_config",
    "index_extras",
    "index_settings",
    "load_search_config",
    "watch_settings",
]


def load_search_config(
    path: str | os.PathLike[str], agent: str | None = None, *, check_provider: bool = True
) -> tuple[MemorySearchConfig | CurrentSearchConfig, str | None]:
    """The settings of ``path`` (with ``agent``'s override) and a note for the reader, or
    None. A ``memory.search`` file → ``CurrentSearchConfig``; any other →
    ``MemorySearchConfig``, with the note of how the release's doctor migrates
    ``agents.defaults.memorySearch`` (``legacy_note``). ``check_provider``: a provider
    memlab cannot build (``provider_problem``, naming the file and the key) is a
    ValueError, as every problem of the file is."""
    from memlab.config.qmd import is_qmd_config, load_qmd_config

    data = _parsed(path)
    if is_qmd_config(data):
        qmd = load_qmd_config(path, agent)
        problem = provider_problem(qmd.search) if check_provider else None
        if problem:
            raise ValueError(f"{Path(path).expanduser()}: {problem}")
        return qmd, qmd.note()
    if file_shape(path) == "current":
        current = load_current_config(path, agent)
        problem = current.provider_problem() if check_provider else None
        if problem:
            raise ValueError(problem)
        return current, None
    cfg = load_openclaw_config(path, agent)
    problem = provider_problem(cfg) if check_provider else None
    if problem:
        raise ValueError(f"{Path(path).expanduser()}: {problem}")
    return cfg, _migration_note(path)


def _parsed(path: str | os.PathLike[str]) -> Any:
    """The parsed JSON5 of ``path``, None when it cannot be read or parsed (the readers
    then report the problem as they always have)."""
    import json5

    try:
        return json5.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError, json.JSONDecodeError):
        return None


def _migration_note(path: str | os.PathLike[str]) -> str | None:
    data = _parsed(path)
    if data is None:
        return None
    note = legacy_note(data)
    return f"{Path(path).expanduser()}: {note}" if note else None


def config_files_rule(cfg: Any) -> str | None:
    """The memory-file rule (``vocab.MEMORY_FILE_RULES``) a settings object implies: the
    release's files for a ``memory.search`` file, None (the caller's default) otherwise."""
    return "openclaw-2026.9" if isinstance(cfg, CurrentSearchConfig) else None


def index_settings(cfg: Any) -> MemorySearchConfig:
    """The index options of a settings object as a ``MemorySearchConfig``
    (``memlab.config.index_options`` reads that shape; the release's and a QMD config's
    are translated)."""
    return cfg if isinstance(cfg, MemorySearchConfig) else cfg.index_config()


def index_extras(cfg: Any) -> dict[str, Any]:
    """Index options a settings object implies that a ``MemorySearchConfig`` does not hold:
    for a QMD config (``memlab.config.qmd``) the chunker kind (``heading``) and whether the
    default memory files are searched (``default_memory``); {} otherwise."""
    return cfg.index_overrides() if hasattr(cfg, "index_overrides") else {}


def watch_settings(cfg: Any) -> dict[str, float]:
    """What a settings object says of ``memlab watch``: a QMD config's ``update.debounceMs``
    (``debounce_ms``) and ``update.interval`` (``interval_s``: a sync every interval, events
    or not); {} otherwise."""
    if not hasattr(cfg, "interval_ms"):
        return {}
    return {"debounce_ms": cfg.debounce_ms, "interval_s": cfg.interval_ms / 1000}


def config_system(cfg: Any, overrides: dict[str, Any]) -> Pipeline:
    """The system a settings object describes, with ``overrides`` applied: a 2026-04 file's
    query settings (``presets.from_config``: weights, maxResults, minScore, MMR, decay); a
    QMD backend's ``qmd-like`` with its ``limits.maxResults`` and ``searchMode``;
    for a ``memory.search`` file the ``openclaw-current`` preset with the settings it still
    reads (maxResults, minScore: the rest of its ranking is fixed)."""
    from memlab.pipeline.presets import from_config, preset

    # A tokenizer other than the default is the index the system runs on (what `memlab
    # eval --config` builds its lab for); the default leaves it to the index.
    tok = {} if cfg.fts_tokenizer == "unicode61" else {"fts_tokenizer": cfg.fts_tokenizer}
    if hasattr(cfg, "index_overrides"):  # a QMD backend config: QMD's retrieval
        return preset("qmd-like").replace(**{**cfg.pipeline_overrides(), **tok, **overrides})
    if isinstance(cfg, CurrentSearchConfig):
        return preset("openclaw-current").replace(
            **{**cfg.pipeline_overrides(), **tok, **overrides}
        )
    return from_config(cfg).replace(**{**tok, **overrides})


class ExportRefused(ValueError):
    """A system a target cannot express: ``problems`` names each parameter (with the stage
    it belongs to and what the target holds instead); the message ends with the route that
    can (``--target mcp``)."""

    def __init__(self, target: str, system: str, problems: Sequence[str]) -> None:
        self.target, self.problems = target, list(problems)
        super().__init__(
            f"{system} cannot be written as {target} settings ({len(self.problems)}"
            f" problem{'' if len(self.problems) == 1 else 's'}): "
            + "; ".join(self.problems)
            + ". Use --target mcp: a preset file `memlab mcp --preset-file FILE` serves"
            " (docs/deploy.md)"
        )


# The 2026-04 key each mapped parameter is written to (for the refusal's wording).
APRIL_KEYS = {
    "keyword": "query.hybrid.enabled",
    "max_results": "query.maxResults",
    "min_score": "query.minScore",
    "candidate_multiplier": "query.hybrid.candidateMultiplier (1–20)",
    "vector_weight": "query.hybrid.vectorWeight",
    "text_weight": "query.hybrid.textWeight",
    "mmr": "query.hybrid.mmr.enabled (Jaccard MMR)",
    "mmr_lambda": "query.hybrid.mmr.lambda",
    "decay": "query.hybrid.temporalDecay.enabled (exact decay)",
    "half_life_days": "query.hybrid.temporalDecay.halfLifeDays",
}
# Parameters of candidate generation (no stage declares them).
CANDIDATE_PARAMS = frozenset(
    {"keyword_mode", "keyword_fallback", "candidate_multiplier", "max_candidates", "vector"}
)


def parameter_stage(name: str) -> str:
    """Where a pipeline parameter acts, for messages: ``stage S`` (the first stage that
    declares it, else the first that reads it), ``candidate generation`` or ``the index``."""
    from memlab.stages import STAGES

    if name in ("fts_tokenizer", "memory_files"):
        return "the index"
    if name in CANDIDATE_PARAMS:
        return "candidate generation"
    for attr in ("params", "uses"):
        for st in STAGES:
            if name in getattr(st, attr):
                return f"stage {st.name}"
    return "candidate generation"


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)


def _differences(
    p: Pipeline, back: Pipeline, target: str, fixed: Mapping[str, Any], keys: Mapping[str, str]
) -> list[str]:
    """One problem per parameter where ``back`` (the system the written settings describe)
    differs from ``p``: its stage, its value and what the target holds instead (a key that
    cannot hold it, a value the target fixes, or no such setting)."""
    want, got = p.get_params(), back.get_params()
    out = []
    for k, v in want.items():
        if k in ("name", "fts_tokenizer") or got.get(k) == v:
            continue
        if k in keys:
            instead = f"{keys[k]} cannot hold it"
        elif k in fixed and fixed[k] == got.get(k):
            instead = f"{target} fixes {_value(got.get(k))}"
        else:
            instead = f"no {target} key sets it; it runs {_value(got.get(k))}"
        out.append(f"{parameter_stage(k)}: {k}={_value(v)} ({instead})")
    return out


def export_config(
    p: Pipeline,
    target: str,
    *,
    agent: str | None = None,
    embedder: Mapping[str, Any] | None = None,
    chunker: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
) -> tuple[dict[str, Any], Any]:
    """The ``openclaw.json`` of ``target`` (``openclaw-2026.4`` or ``openclaw-2026.9``)
    describing system ``p``, and its settings object; ``ExportRefused`` when the target
    cannot express ``p``.

    Written: every key the system changes from the target's defaults and nothing else (both
    schemas are strict) — 2026-04: ``query.hybrid`` weights, candidateMultiplier, MMR,
    temporal decay, ``query.maxResults``/``minScore``, ``chunking`` (from ``chunker``,
    ``{kind, tokens, overlap}``; only OpenClaw's ``openclaw`` chunker), the FTS tokenizer
    (unicode61 or trigram), ``provider``/``model`` (from ``embedder``), ``extraPaths``;
    2026.9.6: ``query.maxResults``/``minScore``, the tokenizer, provider, model, extraPaths
    (the rest of its ranking is fixed). ``agent``: under that agent's entry instead of the
    defaults. The settings are read back (`config_system`) and must give a system equal to
    ``p`` in every parameter but its name, else each difference is a problem; a tokenizer,
    memory-file rule or chunker the target lacks is one too."""
    if target not in EXPORT_TARGETS or target == "mcp":
        raise ValueError(f"export_config writes openclaw-2026.4 or openclaw-2026.9, not {target!r}")
    problems: list[str] = []
    tok = p.fts_tokenizer or "unicode61"
    if tok not in OPENCLAW_TOKENIZERS:
        problems.append(
            f"the index: fts_tokenizer={tok} ({target}'s store.fts.tokenizer is"
            f" {' or '.join(OPENCLAW_TOKENIZERS)})"
        )
        tok = "unicode61"
    emb = dict(embedder or {})
    provider, model = emb.get("provider") or "auto", emb.get("model")
    if target == "openclaw-2026.9":
        from memlab.pipeline.presets import preset

        cfg: Any = CurrentSearchConfig(
            file=Path("<memlab export>"),
            extra_paths=tuple(extra),
            provider=provider,
            model=model,
            fts_tokenizer=tok,
            max_results=p.max_results,
            min_score=min(1.0, max(0.0, float(p.min_score))),
        )
        keys = {"max_results": "query.maxResults", "min_score": "query.minScore (0–1)"}
        fixed = preset("openclaw-current").get_params()
        problems += _differences(p, config_system(cfg, {}), "the release", fixed, keys)
        if problems:
            raise ExportRefused(target, p.name, problems)
        return current_file(cfg.search_keys(), agent), cfg
    ch = dict(chunker or {"kind": "openclaw", "tokens": 400, "overlap": 80})
    if ch.get("kind") != "openclaw":
        problems.append(
            f"the index: chunker {ch.get('kind')} (OpenClaw 2026-04 chunks by"
            " chunking.tokens/overlap only; memlab's `openclaw` chunker reads them)"
        )
        ch = {"tokens": 400, "overlap": 80}
    cfg = MemorySearchConfig(
        provider=provider,
        model=model,
        extra_paths=tuple(extra),
        fts_tokenizer=tok,
        chunk_tokens=int(ch.get("tokens", 400)),
        chunk_overlap=int(ch.get("overlap", 80)),
        max_results=p.max_results,
        min_score=p.min_score,
        hybrid_enabled=p.keyword,
        vector_weight=p.vector_weight,
        text_weight=p.text_weight,
        candidate_multiplier=p.candidate_multiplier,
        mmr_enabled=p.mmr != "off",
        mmr_lambda=p.mmr_lambda,
        decay_enabled=p.decay != "off",
        half_life_days=p.half_life_days,
    )
    problems += _differences(p, config_system(cfg, {}), "OpenClaw 2026-04", {}, APRIL_KEYS)
    if problems:
        raise ExportRefused(target, p.name, problems)
    return openclaw_file(cfg.to_openclaw(changed_only=True), agent), cfg
