"""OpenClaw-compatible memory-search settings (spec section 10).

`MemorySearchConfig` carries OpenClaw's keys under snake_case names with its
defaults and clamping rules. It is read from an OpenClaw config file
(``~/.openclaw/openclaw.json``, JSON5: ``agents.defaults.memorySearch`` with an
agent's ``agents.list[].memorySearch`` override applied key by key) or built
in Python. An invalid value is a ``ValueError`` naming the OpenClaw key.

The file is read by `load_openclaw_config` and written by `to_openclaw` and `openclaw_file`
(``memlab export --target openclaw-2026.4``, through ``memlab.config.load``): one owner of
the schema. The key-tree helpers every reader shares are :mod:`memlab.config.keys`.

Size: one module because `_KEYS` (field → OpenClaw key) drives `from_openclaw`,
`to_openclaw` and the key tree of `check_memory_search_keys`, and `_coerce` and
the `_check_*` helpers name the same keys.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from memlab.config.keys import check_key_tree, deep_merge, json_kind, key_tree, object_or_empty
from memlab.config.vocab import (
    CITATION_MODES,
    CONFIG_PROVIDERS,
    DEFAULT_LOCAL_BACKEND,
    EMBED_PROVIDERS,
    FTS_TOKENIZERS,
    SOURCES,
)

DEFAULT_CONFIG_PATH = Path("~/.openclaw/openclaw.json")

# snake_case field -> OpenClaw key path under memorySearch
_KEYS: dict[str, tuple[str, ...]] = {
    "enabled": ("enabled",),
    "provider": ("provider",),
    "model": ("model",),
    "fallback": ("fallback",),
    "remote_base_url": ("remote", "baseUrl"),
    "remote_api_key": ("remote", "apiKey"),
    "remote_headers": ("remote", "headers"),
    "extra_paths": ("extraPaths",),
    "sources": ("sources",),
    "store_path": ("store", "path"),
    "fts_tokenizer": ("store", "fts", "tokenizer"),
    "chunk_tokens": ("chunking", "tokens"),
    "chunk_overlap": ("chunking", "overlap"),
    "watch": ("sync", "watch"),
    "watch_debounce_ms": ("sync", "watchDebounceMs"),
    "interval_minutes": ("sync", "intervalMinutes"),
    "max_results": ("query", "maxResults"),
    "min_score": ("query", "minScore"),
    "hybrid_enabled": ("query", "hybrid", "enabled"),
    "vector_weight": ("query", "hybrid", "vectorWeight"),
    "text_weight": ("query", "hybrid", "textWeight"),
    "candidate_multiplier": ("query", "hybrid", "candidateMultiplier"),
    "mmr_enabled": ("query", "hybrid", "mmr", "enabled"),
    "mmr_lambda": ("query", "hybrid", "mmr", "lambda"),
    "decay_enabled": ("query", "hybrid", "temporalDecay", "enabled"),
    "half_life_days": ("query", "hybrid", "temporalDecay", "halfLifeDays"),
    "cache_enabled": ("cache", "enabled"),
    "cache_max_entries": ("cache", "maxEntries"),
    "citations": ("citations",),
}

# Keys of OpenClaw's strict ``memorySearch`` schema that memlab accepts and ignores (they
# change nothing memlab computes). Sources: openclaw-current.md §12 (rememberAcrossConversations,
# multimodal, experimental.sessionMemory, remote.batch, inputType/queryInputType/
# documentInputType, outputDimensionality, local.modelPath, store.vector) and OpenClaw's
# MemorySearchSchema (src/config/zod-schema.agent-runtime.ts) for the rest. A key ending in
# ``.*`` is a record: any key below it is OpenClaw's business.
IGNORED_KEYS: tuple[str, ...] = (
    "rememberAcrossConversations",
    "multimodal.enabled",
    "multimodal.modalities",
    "multimodal.maxFileBytes",
    "experimental.sessionMemory",
    "qmd.extraCollections",
    "remote.nonBatchConcurrency",
    "remote.batch.enabled",
    "remote.batch.wait",
    "remote.batch.concurrency",
    "remote.batch.pollIntervalMs",
    "remote.batch.timeoutMinutes",
    "inputType",
    "queryInputType",
    "documentInputType",
    "outputDimensionality",
    "local.modelPath",
    "local.modelCacheDir",
    "local.contextSize",
    "store.driver",
    "store.vector.enabled",
    "store.vector.extensionPath",
    "sync.onSessionStart",
    "sync.onSearch",
    "sync.embeddingBatchTimeoutSeconds",
    "sync.sessions.deltaBytes",
    "sync.sessions.deltaMessages",
    "sync.sessions.postCompactionForce",
)

# The allowed values live in memlab.config.vocab; the names stay importable from here.
PROVIDERS = CONFIG_PROVIDERS
# Providers memlab can build (memlab.embed.select); the others are OpenClaw's own clients.
MEMLAB_PROVIDERS = EMBED_PROVIDERS
MAX_CANDIDATES = 200


@dataclass(frozen=True)
class MemorySearchConfig:
    """OpenClaw's ``agents.defaults.memorySearch`` with its defaults (spec section 10).

    Derived values: ``candidates`` = min(200, floor(max_results ×
    candidate_multiplier)) (24 by default); ``chunk_max_chars`` = max(32,
    4 × chunk_tokens). ``candidate_multiplier`` is clamped to [1, 20] and
    ``mmr_lambda`` to [0, 1] as OpenClaw does; the weights are kept as given
    and clamped/renormalised at fusion (both 0 → 0.7/0.3).
    """

    enabled: bool = True
    provider: str = "auto"
    model: str | None = None
    fallback: str = "none"
    remote_base_url: str | None = None
    remote_api_key: str | None = None
    remote_headers: dict[str, str] = field(default_factory=dict)
    # Paths; OpenClaw 2026.9.6's {path, pattern} entries arrive as dicts (index_config).
    extra_paths: tuple[str | dict[str, str], ...] = ()
    sources: tuple[str, ...] = ("memory",)
    store_path: str | None = None
    fts_tokenizer: str = "unicode61"
    chunk_tokens: int = 400
    chunk_overlap: int = 80
    watch: bool = True
    watch_debounce_ms: int = 1500
    interval_minutes: float = 0
    max_results: int = 6
    min_score: float = 0.35
    hybrid_enabled: bool = True
    vector_weight: float = 0.7
    text_weight: float = 0.3
    candidate_multiplier: float = 4
    mmr_enabled: bool = False
    mmr_lambda: float = 0.7
    decay_enabled: bool = False
    half_life_days: float = 30
    cache_enabled: bool = True
    cache_max_entries: int | None = None
    citations: str = "auto"

    def __post_init__(self) -> None:
        _check_choice("provider", self.provider, PROVIDERS)
        _check_choice("fallback", self.fallback, (*PROVIDERS, "none"))
        _check_choice("store.fts.tokenizer", self.fts_tokenizer, FTS_TOKENIZERS)
        _check_choice("citations", self.citations, CITATION_MODES)
        for s in self.sources:
            _check_choice("sources", s, SOURCES)
        _check_int("chunking.tokens", self.chunk_tokens, 1)
        _check_int("chunking.overlap", self.chunk_overlap, 0)
        _check_int("query.maxResults", self.max_results, 1)
        _check_int("sync.watchDebounceMs", self.watch_debounce_ms, 0)
        for key, value in (
            ("query.minScore", self.min_score),
            ("query.hybrid.vectorWeight", self.vector_weight),
            ("query.hybrid.textWeight", self.text_weight),
            ("query.hybrid.candidateMultiplier", self.candidate_multiplier),
            ("query.hybrid.mmr.lambda", self.mmr_lambda),
            ("query.hybrid.temporalDecay.halfLifeDays", self.half_life_days),
        ):
            _check_number(key, value)
        if self.cache_max_entries is not None:
            _check_int("cache.maxEntries", self.cache_max_entries, 1)
        # OpenClaw's clamps, applied on construction so every consumer sees them.
        object.__setattr__(
            self, "candidate_multiplier", min(20.0, max(1.0, self.candidate_multiplier))
        )
        object.__setattr__(self, "mmr_lambda", min(1.0, max(0.0, self.mmr_lambda)))
        unique: dict[tuple[str, str], str | dict[str, str]] = {}
        for e in self.extra_paths:
            unique.setdefault(_extra_key(e), e)  # first position kept
        object.__setattr__(self, "extra_paths", tuple(unique.values()))
        object.__setattr__(self, "sources", tuple(self.sources))

    @property
    def candidates(self) -> int:
        """Candidates per leg: min(200, floor(max_results × candidate_multiplier))."""
        return min(MAX_CANDIDATES, math.floor(self.max_results * self.candidate_multiplier))

    @property
    def chunk_max_chars(self) -> int:
        """max(32, 4 × chunk_tokens)."""
        return max(32, 4 * self.chunk_tokens)

    def replace(self, **changes: Any) -> MemorySearchConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_openclaw(self, changed_only: bool = False) -> dict[str, Any]:
        """This configuration as OpenClaw's nested ``memorySearch`` object: every key, or
        with ``changed_only`` the keys whose value differs from OpenClaw's default (what an
        export writes: ``from_openclaw`` of it gives this configuration back)."""
        out: dict[str, Any] = {}
        values = asdict(self)
        defaults = asdict(MemorySearchConfig())
        for name, path in _KEYS.items():
            value = values[name]
            if changed_only and value == defaults[name]:
                continue
            if isinstance(value, tuple):
                value = list(value)
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = value
        return out

    @classmethod
    def from_openclaw(cls, memory_search: Mapping[str, Any]) -> MemorySearchConfig:
        """Build from an OpenClaw ``memorySearch`` object (camelCase, nested).

        OpenClaw's schema is strict, and so is this: a key that is neither one
        memlab reads nor one of :data:`IGNORED_KEYS` is a ``ValueError`` naming
        its full path and the nearest valid key (see ``check_memory_search_keys``);
        a value of the wrong type is a ``ValueError`` naming its key.
        """
        check_memory_search_keys(memory_search)
        kwargs: dict[str, Any] = {}
        for name, path in _KEYS.items():
            node: Any = memory_search
            for part in path:
                if not isinstance(node, Mapping) or part not in node:
                    break
                node = node[part]
            else:
                kwargs[name] = _coerce(name, ".".join(path), node)
        return cls(**kwargs)


def openclaw_file(memory_search: Mapping[str, Any], agent: str | None = None) -> dict[str, Any]:
    """An ``openclaw.json`` holding ``memory_search`` where `load_openclaw_config` reads it:
    ``agents.defaults.memorySearch``, or with ``agent`` that agent's entry of ``agents.list``
    (``{"id": agent, "memorySearch": ...}``); nothing else."""
    if agent is None:
        return {"agents": {"defaults": {"memorySearch": dict(memory_search)}}}
    if not agent.strip():
        raise ValueError("the agent id is empty")
    return {"agents": {"list": [{"id": agent, "memorySearch": dict(memory_search)}]}}


def load_openclaw_config(
    path: str | os.PathLike[str] | None = None, agent_id: str | None = None
) -> MemorySearchConfig:
    """Read ``agents.defaults.memorySearch`` (+ an agent's override) from an OpenClaw JSON5 file.

    The agent's ``agents.list[i].memorySearch`` (matched by ``id``) overrides
    the defaults key by key (deep merge); ``extraPaths`` lists are concatenated
    and de-duplicated. A missing file raises ``FileNotFoundError``; invalid
    JSON5, a top level that is not an object, an unknown key inside a
    ``memorySearch`` object (with the nearest valid key), an invalid value, an
    empty ``agent_id`` or one not in ``agents.list`` raise ``ValueError`` naming
    the file and the key. Keys outside the ``memorySearch`` objects belong to
    the rest of OpenClaw's configuration and are not checked.
    """
    import json5

    p = Path(path if path is not None else DEFAULT_CONFIG_PATH).expanduser()
    if p.is_dir():
        raise ValueError(f"{p} is a directory; --config takes the openclaw.json file itself")
    if not p.exists():
        raise FileNotFoundError(f"OpenClaw config not found: {p}")
    try:
        data = json5.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{p}: not a UTF-8 text file ({exc.reason}); is it openclaw.json?"
        ) from exc
    except ValueError as exc:
        raise ValueError(f"{p}: not valid JSON5 ({exc})") from exc
    if not isinstance(data, Mapping):
        raise ValueError(
            f"{p}: the top level must be an object ({{agents: {{defaults: {{memorySearch: "
            f"{{...}}}}}}}}), got {json_kind(data)}"
        )
    try:
        agents = object_or_empty(data, "agents", "agents")
        defaults = object_or_empty(agents, "defaults", "agents.defaults")
        base = dict(object_or_empty(defaults, "memorySearch", "agents.defaults.memorySearch"))
        check_memory_search_keys(base, "agents.defaults.memorySearch")
        listed = agents.get("list") or []
        if not isinstance(listed, list):
            raise ValueError(f"agents.list must be an array, got {json_kind(listed)}")
        for i, a in enumerate(listed):
            if isinstance(a, Mapping) and "memorySearch" in a:
                where = f"agents.list[{i}].memorySearch"
                check_memory_search_keys(object_or_empty(a, "memorySearch", where), where)
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from exc
    if agent_id is not None:
        listed = [a for a in listed if isinstance(a, Mapping)]
        known = ", ".join(str(a.get("id")) for a in listed) or "none"
        if not isinstance(agent_id, str) or not agent_id.strip():
            raise ValueError(
                f"{p}: the agent id is empty; name one of agents.list's ids (agents: {known})"
            )
        agent = next((a for a in listed if a.get("id") == agent_id), None)
        if agent is None:
            raise ValueError(f"{p}: no agent {agent_id!r} in agents.list (agents: {known})")
        override = agent.get("memorySearch") or {}
        merged_extra = list(base.get("extraPaths") or []) + list(override.get("extraPaths") or [])
        base = deep_merge(base, override)
        if merged_extra:
            base["extraPaths"] = list(dict.fromkeys(merged_extra))
    try:
        return MemorySearchConfig.from_openclaw(base)
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from exc


def provider_problem(cfg: MemorySearchConfig) -> str | None:
    """Why memlab cannot build ``cfg``'s embedding provider, naming the key and the fix; None if it can.

    Caught here, where the OpenClaw key is known, rather than when the embedder
    is built: ``provider`` must be one memlab implements (:data:`MEMLAB_PROVIDERS`;
    gemini, voyage and mistral are OpenClaw's own clients), ``openai`` needs
    ``remote.baseUrl``, and a ``remote.baseUrl`` that ``auto`` or ``openai``
    would use must be an http(s) URL.
    """
    other = "or choose another provider (memlab: --embedder local, hashing or none)"
    if cfg.provider not in MEMLAB_PROVIDERS:
        return (
            f"memorySearch.provider {cfg.provider!r} is an OpenClaw provider memlab does not "
            f"implement: use provider 'openai' with memorySearch.remote.baseUrl for an "
            f"OpenAI-compatible endpoint, {other}"
        )
    url = cfg.remote_base_url
    if cfg.provider == "openai" and not url:
        return (
            "memorySearch.provider is 'openai' but memorySearch.remote.baseUrl is not set: add "
            "remote.baseUrl (the http(s) URL of an OpenAI-compatible embeddings API, e.g. "
            f"https://api.openai.com/v1), {other}"
        )
    if (
        cfg.provider in ("auto", "openai")
        and url
        and not re.match(r"^https?://[^/\s]+", url.strip())
    ):
        return (
            f"memorySearch.remote.baseUrl must be an http(s) URL such as "
            f"https://api.openai.com/v1, got {url!r}"
        )
    return None


def index_options(
    cfg: MemorySearchConfig,
    *,
    provider: str | None = None,
    model: str | None = None,
    chunker_kind: str | None = None,
    chunk_tokens: int | None = None,
    chunk_overlap: int | None = None,
    db_path: str | os.PathLike[str] | None = None,
    fts_tokenizer: str | None = None,
    extra: Sequence[str] = (),
    local_backend: str = DEFAULT_LOCAL_BACKEND,
    embed_timeout: float | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """The ``MemoryIndex`` keyword arguments of OpenClaw settings: the one translation
    from config to index, used by ``MemoryIndex.from_config`` and the command line.

    From ``cfg``: the embedder (``resolve_embedder(provider, model, remote, fallback)``
    with ``remote`` = {base_url, api_key, headers} when ``remote.baseUrl`` is set and
    ``fallback`` None for ``"none"``), ``db_path`` (only the one given: ``store.path`` is
    OpenClaw's own database, which memlab never opens), the chunker
    (``ChunkerConfig(kind, chunking.tokens, chunking.overlap)``, kind ``openclaw``),
    ``extra_paths``, ``sources``, ``fts_tokenizer``, ``cache_enabled``, ``cache_max_entries``.

    The named arguments override one setting each, None meaning "the config's":
    ``provider`` and ``model`` (``or``: an empty string is the config's too; a
    ``provider`` given here is built without the config's ``fallback``, as a user who
    names an embedder asks for that one), ``chunker_kind``, ``chunk_tokens``,
    ``chunk_overlap``, ``db_path``, ``fts_tokenizer``; ``extra`` paths are added after
    the config's ``extraPaths``; ``local_backend`` runs the packaged model with ``torch``
    (sentence-transformers) or ``onnx`` (onnxruntime: no torch on the query path, the same
    vectors and index identity); ``embed_timeout`` (seconds, None = the provider's default)
    bounds each request to a remote provider. Any other keyword is a ``MemoryIndex`` argument and wins
    as given (``embedder=...`` skips building one; ``chunker=``, ``extra_paths=`` replace).
    Building the embedder reads no model (construction is lazy), but an unusable
    provider raises here (``EmbeddingError``/``ValueError``).
    """
    from memlab.chunking import ChunkerConfig

    options: dict[str, Any] = {}
    if "embedder" not in overrides:  # built first: its errors come before the chunker's
        from memlab.embed import resolve_embedder

        remote = None
        if cfg.remote_base_url:
            remote = {
                "base_url": cfg.remote_base_url,
                "api_key": cfg.remote_api_key,
                "headers": cfg.remote_headers,
                "timeout": embed_timeout,
            }
        fallback = None if provider or cfg.fallback == "none" else cfg.fallback
        options["embedder"] = resolve_embedder(
            provider or cfg.provider,
            model=model or cfg.model,
            remote=remote,
            fallback=fallback,
            backend=local_backend,
        )
    options.update(
        # Never cfg.store_path: that is OpenClaw's own database (its schema, its agent's
        # memory); memlab keeps its index in the user cache unless --db names one.
        db_path=db_path,
        chunker=ChunkerConfig(
            chunker_kind or "openclaw",
            chunk_tokens if chunk_tokens is not None else cfg.chunk_tokens,
            chunk_overlap if chunk_overlap is not None else cfg.chunk_overlap,
        ),
        extra_paths=[*cfg.extra_paths, *extra],
        sources=cfg.sources,
        fts_tokenizer=fts_tokenizer or cfg.fts_tokenizer,
        cache_enabled=cfg.cache_enabled,
        cache_max_entries=cfg.cache_max_entries,
    )
    options.update(overrides)
    return options


def _extra_key(entry: str | Mapping[str, str]) -> tuple[str, str]:
    # An extra path and a {path, pattern} entry: duplicates are the same (path, pattern).
    if isinstance(entry, Mapping):
        return (str(entry.get("path")), str(entry.get("pattern") or ""))
    return (entry, "")


_KEY_TREE = key_tree([*_KEYS.values(), *(tuple(k.split(".")) for k in IGNORED_KEYS)])


def check_memory_search_keys(memory_search: Any, where: str = "memorySearch") -> None:
    """Raise ``ValueError`` unless every key of a ``memorySearch`` object is a valid one.

    Valid keys are those memlab reads (``_KEYS``, spec section 10) and
    :data:`IGNORED_KEYS`; an object-valued key (``query``, ``query.hybrid``, ...)
    must hold an object. The message names every unknown key by its full path
    (``where`` + key path) with the nearest valid key at its level
    (``difflib.get_close_matches``, cutoff 0.6) or, failing one, the valid keys there.
    """
    problems: list[str] = []
    check_key_tree(memory_search, _KEY_TREE, where, problems)
    if problems:
        raise ValueError(
            "; ".join(problems) + " (OpenClaw's memorySearch schema is strict: fix or remove it)"
        )


_BOOL_FIELDS = {f.name for f in fields(MemorySearchConfig) if f.type in ("bool",)}


def _coerce(name: str, key: str, value: Any) -> Any:
    if name in ("extra_paths", "sources"):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{key} must be a list of strings, got {value!r}")
        return tuple(value)
    if name == "remote_headers":
        if not isinstance(value, Mapping):
            raise ValueError(f"{key} must be an object, got {value!r}")
        return {str(k): str(v) for k, v in value.items()}
    if name in ("model", "remote_base_url", "store_path") and not isinstance(value, str | None):
        raise ValueError(f"{key} must be a string, got {json_kind(value)}")
    if name in _BOOL_FIELDS and not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return value


def _check_choice(key: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{key} must be one of {', '.join(choices)}; got {value!r}")


def _check_int(key: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{key} must be an integer >= {minimum}, got {value!r}")


def _check_number(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key} must be a finite number, got {value!r}")
