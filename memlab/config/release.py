"""OpenClaw 2026.9.6's memory-search settings (spec ``openclaw-current.md`` §12, §4).

The release reads ``memory.search`` and, per agent, ``agents.entries.<id>.memory.search``
(key by key; ``extraPaths`` concatenated), with a strict schema: an unknown key is an
error. Chunking, the hybrid weights (0.7/0.3), the candidate multiplier, MMR λ, the decay
half-life, the cache size and the sync settings are fixed (:data:`FIXED`): a config that
sets ``query.hybrid`` under ``memory.search`` is rejected like any unknown key. The
legacy ``agents.defaults.memorySearch`` is still read by :mod:`memlab.config`;
:func:`legacy_note` says how OpenClaw's doctor moves it. :func:`agent_store_path` is
where the release keeps its index (shown by ``memlab status``, never opened).

Size: one file format, read and written here: :data:`SCHEMA`, ``RETIRED`` and the readers
(``_agent_entries``, ``_merge``, ``_remember``) serve :func:`load_current_config`, and
``CurrentSearchConfig.search_keys`` with :func:`current_file` write it back; ``normalize_agent_id``
names both the agent whose settings win and its :func:`agent_store_path`;
``config_shape`` tells this format from the legacy one.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlab.config.keys import check_key_tree, json_kind
from memlab.config.vocab import (
    CITATION_MODES,
    CONFIG_PROVIDERS,
    MULTIMODAL_MODALITIES,
    OPENCLAW_CURRENT_TOKENIZERS,
    SOURCES,
)

__all__ = [
    "FIXED",
    "SCHEMA",
    "CurrentSearchConfig",
    "agent_store_path",
    "check_search_keys",
    "config_shape",
    "current_file",
    "legacy_note",
    "load_current_config",
    "normalize_agent_id",
    "openclaw_state_dir",
]

# Settings the release no longer reads from the config (spec §12 "Fixed").
FIXED: dict[str, Any] = {
    "chunk_tokens": 400,
    "chunk_overlap": 80,
    "vector_weight": 0.7,
    "text_weight": 0.3,
    "candidate_multiplier": 4,
    "mmr_lambda": 0.7,
    "half_life_days": 30,
    "cache_max_entries": 50_000,
    "watch_debounce_ms": 1500,
}
DEFAULT_AGENT_ID = "main"

# The strict schema of memory.search: a nested dict of keys; a leaf names its value type.
SCHEMA: dict[str, Any] = {
    "enabled": "bool",
    "rememberAcrossConversations": "bool",
    "sources": "sources",
    "extraPaths": "extra_paths",
    "multimodal": {"enabled": "bool", "modalities": "modalities", "maxFileBytes": "posint"},
    "experimental": {"sessionMemory": "bool"},
    "provider": "str",
    "remote": {
        "baseUrl": "str",
        "apiKey": "secret",
        "headers": "headers",
        "batch": {"enabled": "bool"},
    },
    "fallback": "str",
    "model": "str",
    "inputType": "str1",
    "queryInputType": "str1",
    "documentInputType": "str1",
    "outputDimensionality": "posint",
    "local": {"modelPath": "str"},
    "store": {
        "fts": {"tokenizer": "tokenizer"},
        "vector": {"enabled": "bool", "extensionPath": "str"},
    },
    "query": {"maxResults": "posint", "minScore": "unit"},
    "cache": {"enabled": "bool"},
}
# Why a key of the 2026-04 schema is gone, for the error message.
RETIRED = {
    "hybrid": "the release fixes the hybrid weights (0.7/0.3), MMR and decay",
    "chunking": "the release fixes chunking at 400/80 tokens",
    "sync": "the release fixes the sync settings",
    "path": "the index lives in the agent database (memlab status shows where)",
    "maxEntries": "the release fixes the cache at 50,000 entries",
}


def _leaf_problem(kind: str, value: Any) -> str | None:
    """Why ``value`` does not fit the leaf type ``kind``; None when it does."""
    is_num = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if kind in ("str", "str1"):
        if not isinstance(value, str):
            return "must be a string"
        return "must not be empty" if kind == "str1" and not value else None
    if kind == "posint":
        ok = is_num and float(value).is_integer() and value > 0
        return None if ok else "must be a positive integer"
    if kind == "unit":
        ok = is_num and math.isfinite(value) and 0 <= value <= 1
        return None if ok else "must be a number in [0, 1]"
    if kind == "tokenizer":
        ok = value in OPENCLAW_CURRENT_TOKENIZERS
        return None if ok else f"must be one of {', '.join(OPENCLAW_CURRENT_TOKENIZERS)}"
    if kind in ("sources", "modalities"):
        allowed = SOURCES if kind == "sources" else MULTIMODAL_MODALITIES
        ok = isinstance(value, list) and all(v in allowed for v in value)
        return None if ok else f"must be an array of {', '.join(allowed)}"
    if kind == "headers":
        ok = isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())
        return None if ok else "must be an object of strings"
    if kind == "secret":
        return None if isinstance(value, str | Mapping) else "must be a string or a secret ref"
    if kind == "extra_paths":
        if not isinstance(value, list):
            return "must be an array of paths or {path, pattern} objects"
        for i, entry in enumerate(value):
            if isinstance(entry, str):
                continue
            if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
                return f"[{i}] must be a string or an object with a string path"
            extra = sorted(set(entry) - {"path", "pattern"})
            if extra:
                return f"[{i}] has unknown key {extra[0]} (only path and pattern)"
            if "pattern" in entry and not isinstance(entry["pattern"], str):
                return f"[{i}].pattern must be a string"
        return None
    raise AssertionError(kind)


def check_search_keys(search: Any, where: str = "memory.search") -> None:
    """Raise ``ValueError`` unless ``search`` fits the release's strict ``memory.search``
    schema (:data:`SCHEMA`): every unknown key named by its full path with the nearest
    valid key at its level (``difflib``, cutoff 0.6) or the valid keys there, and why a
    retired key is gone; every value of the wrong type named with its key."""
    problems: list[str] = []
    check_key_tree(search, SCHEMA, where, problems, leaf_problem=_leaf_problem, retired=RETIRED)
    if problems:
        raise ValueError(
            "; ".join(problems) + " (OpenClaw 2026.9.6's memory.search schema is strict)"
        )


@dataclass(frozen=True)
class CurrentSearchConfig:
    """The effective settings of one agent under OpenClaw 2026.9.6 (spec §12).

    Defaults: enabled, sources ``["memory"]``, provider ``openai`` (``auto`` means
    ``openai``), fallback ``none``, tokenizer ``unicode61``, maxResults 6, minScore 0.35
    (clamped to [0, 1]), cache on; ``sources`` are the ones memory_search searches
    (``sessions`` only with ``experimental.sessionMemory`` or remembering across
    conversations with sessions configured). ``file`` and ``agent_id`` say where they
    came from. The rest of the release's ranking is :data:`FIXED`.
    """

    file: Path
    agent_id: str = DEFAULT_AGENT_ID
    enabled: bool = True
    sources: tuple[str, ...] = ("memory",)
    extra_paths: tuple[str | dict[str, str], ...] = ()
    provider: str = "openai"
    model: str | None = None
    fallback: str = "none"
    remote_base_url: str | None = None
    remote_api_key: str | None = None
    remote_headers: dict[str, str] = field(default_factory=dict)
    fts_tokenizer: str = "unicode61"
    max_results: int = 6
    min_score: float = 0.35
    cache_enabled: bool = True
    citations: str = "auto"
    session_memory: bool = False
    remember_across_conversations: bool = True

    def pipeline_overrides(self) -> dict[str, Any]:
        """The ``openclaw-current`` preset's parameters these settings change:
        ``max_results`` and ``min_score`` (the rest of its ranking is fixed)."""
        return {"max_results": self.max_results, "min_score": self.min_score}

    def search_keys(self) -> dict[str, Any]:
        """The ``memory.search`` object of these settings: the keys whose value differs from
        the release's default (provider, model, extraPaths, store.fts.tokenizer,
        query.maxResults, query.minScore): what ``memlab export --target openclaw-2026.9``
        writes; `load_current_config` of it gives these settings back."""
        d = CurrentSearchConfig(file=self.file)
        out: dict[str, Any] = {}
        if self.provider != d.provider:
            out["provider"] = self.provider
        if self.model != d.model:
            out["model"] = self.model
        if self.extra_paths:
            out["extraPaths"] = [e if isinstance(e, str) else dict(e) for e in self.extra_paths]
        if self.fts_tokenizer != d.fts_tokenizer:
            out["store"] = {"fts": {"tokenizer": self.fts_tokenizer}}
        query = {
            k: v
            for k, v, default in (
                ("maxResults", self.max_results, d.max_results),
                ("minScore", self.min_score, d.min_score),
            )
            if v != default
        }
        if query:
            out["query"] = query
        return out

    def provider_problem(self) -> str | None:
        """Why memlab cannot build this provider (``memlab.config.provider_problem`` in the
        release's key names, with the file); None when it can."""
        from memlab.config import provider_problem

        if self.provider not in CONFIG_PROVIDERS:
            return (
                f"{self.file}: memory.search.provider {self.provider!r} is not a provider"
                " memlab implements: use 'openai' with memory.search.remote.baseUrl, or"
                " --embedder local, hashing or none"
            )
        problem = provider_problem(self.index_config())
        if problem is None:
            return None
        return f"{self.file}: " + problem.replace("memorySearch.", "memory.search.")

    def index_config(self) -> Any:
        """These settings as a :class:`memlab.config.MemorySearchConfig` for the index
        (``memlab.config.index_options``): provider, model, fallback, remote, extra paths
        (a ``{path, pattern}`` entry as a dict, its pattern matched by the 2026.9 file
        rule), sources, tokenizer, cache, chunking
        400/80. ``openai`` without ``remote.baseUrl`` stays ``openai``, so
        :meth:`provider_problem` names the missing key."""
        from memlab.config import MemorySearchConfig

        paths = [e if isinstance(e, str) else dict(e) for e in self.extra_paths]
        return MemorySearchConfig(
            # A provider memlab cannot name is only reached with --embedder overriding it
            # (provider_problem stops the command otherwise).
            provider=self.provider if self.provider in CONFIG_PROVIDERS else "auto",
            model=self.model,
            fallback=self.fallback,
            remote_base_url=self.remote_base_url,
            remote_api_key=self.remote_api_key,
            remote_headers=dict(self.remote_headers),
            extra_paths=tuple(paths),
            sources=self.sources,
            fts_tokenizer=self.fts_tokenizer,
            chunk_tokens=FIXED["chunk_tokens"],
            chunk_overlap=FIXED["chunk_overlap"],
            max_results=self.max_results,
            min_score=self.min_score,
            cache_enabled=self.cache_enabled,
            cache_max_entries=FIXED["cache_max_entries"],
            citations=self.citations,
        )


def current_file(search: Mapping[str, Any], agent: str | None = None) -> dict[str, Any]:
    """A release config holding ``search`` where `load_current_config` reads it:
    ``memory.search``, or with ``agent`` that agent's ``agents.entries.<id>.memory.search``
    (the id normalised as the release does); nothing else."""
    if agent is None:
        return {"memory": {"search": dict(search)}}
    return {
        "agents": {"entries": {normalize_agent_id(agent): {"memory": {"search": dict(search)}}}}
    }


def _read(path: str | os.PathLike[str]) -> tuple[Path, Any]:
    """(path, parsed JSON5) of a config file; errors name the file."""
    import json5

    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{p} is a directory; --config takes the openclaw.json file itself")
    if not p.exists():
        raise FileNotFoundError(f"OpenClaw config not found: {p}")
    try:
        return p, json5.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not a UTF-8 text file ({exc.reason})") from exc
    except ValueError as exc:
        raise ValueError(f"{p}: not valid JSON5 ({exc})") from exc


def _agent_entries(data: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """(id, where, entry) for each agent of ``agents.entries`` (an object keyed by id) or,
    failing that, ``agents.list`` (an array of ``{id, ...}``)."""
    agents = data.get("agents")
    if not isinstance(agents, Mapping):
        return []
    entries = agents.get("entries")
    if isinstance(entries, Mapping):
        return [(str(k), f"agents.entries.{k}", v) for k, v in entries.items()]
    listed = agents.get("list")
    if isinstance(listed, list):
        return [
            (str(a.get("id")), f"agents.list[{i}]", a)
            for i, a in enumerate(listed)
            if isinstance(a, Mapping)
        ]
    return []


def config_shape(data: Any) -> str:
    """``"current"`` when a parsed config has ``memory.search`` or an agent's
    ``memory.search`` (the release's layout), else ``"legacy"`` (2026-04's
    ``agents.defaults.memorySearch``, or nothing memory-related)."""
    if not isinstance(data, Mapping):
        return "legacy"
    memory = data.get("memory")
    if isinstance(memory, Mapping) and "search" in memory:
        return "current"
    for _, _, entry in _agent_entries(data):
        mem = entry.get("memory") if isinstance(entry, Mapping) else None
        if isinstance(mem, Mapping) and "search" in mem:
            return "current"
    return "legacy"


def file_shape(path: str | os.PathLike[str]) -> str:
    """:func:`config_shape` of a file; ``"legacy"`` when it cannot be read or parsed (the
    legacy reader then reports the problem as it always has)."""
    try:
        return config_shape(_read(path)[1])
    except (OSError, ValueError):
        return "legacy"


def legacy_note(data: Any) -> str | None:
    """How OpenClaw 2026.9.6's doctor migrates a legacy config; None when ``data`` has no
    ``agents.defaults.memorySearch`` (or agent ``memorySearch``)."""
    if not isinstance(data, Mapping):
        return None
    agents = data.get("agents")
    defaults = agents.get("defaults") if isinstance(agents, Mapping) else None
    has_defaults = isinstance(defaults, Mapping) and "memorySearch" in defaults
    has_agent = any(
        isinstance(e, Mapping) and "memorySearch" in e for _, _, e in _agent_entries(data)
    )
    if not (has_defaults or has_agent or "memorySearch" in data):
        return None
    return (
        "this config uses the 2026-04 layout (agents.defaults.memorySearch), read as"
        " OpenClaw 2026-04 did. OpenClaw 2026.9.6 rejects it until `openclaw doctor --fix`"
        " moves it to memory.search (an agent's memorySearch to"
        " agents.entries.<id>.memory.search), turning provider 'auto' into 'openai',"
        " dropping store.path, the retired keys (query.hybrid, chunking, sync ...) and the"
        " QMD settings; memlab never rewrites the file"
    )


def normalize_agent_id(value: str | None) -> str:
    """The release's agent id: trimmed and lower-cased when it matches
    ``[a-z0-9][a-z0-9_-]{0,63}`` (any case), else runs of other characters → ``-``,
    leading/trailing dashes dropped, cut to 64; ``main`` when nothing is left."""
    trimmed = (value or "").strip()
    low = trimmed.lower()
    if re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", trimmed, flags=re.IGNORECASE):
        return low
    cleaned = re.sub(r"-+$", "", re.sub(r"^-+", "", re.sub(r"[^a-z0-9_-]+", "-", low)))[:64]
    return cleaned or DEFAULT_AGENT_ID


def _home(env: Mapping[str, str]) -> str:
    explicit = (env.get("OPENCLAW_HOME") or "").strip()
    os_home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    if not explicit:
        return os.path.abspath(os_home)
    if explicit == "~" or explicit.startswith(("~/", "~\\")):
        explicit = os_home + explicit[1:]
    return os.path.abspath(explicit)


def openclaw_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The release's state folder: ``$OPENCLAW_STATE_DIR`` (trimmed, ``~`` = the home,
    made absolute) when set, else ``HOME/.openclaw`` if it exists, else ``HOME/.clawdbot``
    if that exists, else ``HOME/.openclaw``; HOME is ``$OPENCLAW_HOME`` (``~`` expanded)
    or the OS home. Only ``exists`` checks: nothing is opened."""
    env = os.environ if env is None else env
    home = _home(env)
    override = (env.get("OPENCLAW_STATE_DIR") or "").strip()
    if override:
        if override == "~" or override.startswith(("~/", "~\\")):
            override = home + override[1:]
        return Path(os.path.abspath(override))
    new = Path(home) / ".openclaw"
    legacy = Path(home) / ".clawdbot"
    return new if new.exists() or not legacy.exists() else legacy


def agent_store_path(agent_id: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """``<state>/agents/<id>/agent/openclaw-agent.sqlite`` (spec §4) for the normalised
    agent id (``main`` by default); memlab never opens or writes it."""
    agent = normalize_agent_id(agent_id)
    return openclaw_state_dir(env) / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Key by key (objects recursively; ``remote.headers`` and arrays replaced whole)."""
    out = dict(base)
    for k, v in over.items():
        if k != "headers" and isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _get(node: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if not isinstance(node, Mapping) or k not in node:
            return default
        node = node[k]
    return node


def _remember(data: Mapping[str, Any], search: Mapping[str, Any]) -> bool:
    """rememberAcrossConversations: as set, else on when no session or binding scopes
    direct messages away from the main session."""
    if "rememberAcrossConversations" in search:
        return bool(search["rememberAcrossConversations"])
    scope = _get(data, "session", "dmScope")
    bindings = data.get("bindings") if isinstance(data.get("bindings"), list) else []
    scoped = any(_get(b, "session", "dmScope") is not None for b in bindings)
    return (scope is None or scope == "main") and not scoped


def load_current_config(
    path: str | os.PathLike[str], agent_id: str | None = None
) -> CurrentSearchConfig:
    """Read OpenClaw 2026.9.6's ``memory.search`` (+ ``agents.entries.<id>.memory.search``).

    ``memory`` may hold only ``citations`` and ``search``, an agent's ``memory`` only
    ``search``, and each ``search`` object must fit :data:`SCHEMA`; every error is a
    ``ValueError`` naming the file and the key. ``agent_id`` (normalised) picks the agent
    whose settings win key by key (``extraPaths`` concatenated, duplicates dropped); an
    unknown one is an error listing the agents. ``enabled: false`` is an error (the
    release offers no memory tools then).
    """
    p, data = _read(path)
    try:
        if not isinstance(data, Mapping):
            raise ValueError(f"the top level must be an object, got {json_kind(data)}")
        memory = data.get("memory", {})
        problems: list[str] = []
        if not isinstance(memory, Mapping):
            raise ValueError(f"memory must be an object, got {json_kind(memory)}")
        for key in memory:
            if key not in ("citations", "search"):
                problems.append(f"unknown key memory.{key} (valid keys: citations, search)")
        if "citations" in memory and memory["citations"] not in CITATION_MODES:
            problems.append(f"memory.citations must be one of {', '.join(CITATION_MODES)}")
        if problems:
            raise ValueError("; ".join(problems))
        base = memory.get("search") or {}
        check_search_keys(base, "memory.search")
        agents = _agent_entries(data)
        for _, where, entry in agents:
            mem = entry.get("memory") if isinstance(entry, Mapping) else None
            if mem is None:
                continue
            if not isinstance(mem, Mapping):
                raise ValueError(f"{where}.memory must be an object, got {json_kind(mem)}")
            for key in mem:
                if key != "search":
                    raise ValueError(f"unknown key {where}.memory.{key} (valid keys: search)")
            check_search_keys(mem.get("search") or {}, f"{where}.memory.search")
        over: Mapping[str, Any] = {}
        agent = normalize_agent_id(agent_id)
        if agent_id is not None:
            found = [e for i, _, e in agents if normalize_agent_id(i) == agent]
            if not found:
                known = ", ".join(i for i, _, _ in agents) or "none"
                raise ValueError(f"no agent {agent_id!r} in agents.entries (agents: {known})")
            over = _get(found[0], "memory", "search", default={}) or {}
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from exc
    merged = _merge(base, over)
    extra: dict[str, str | dict[str, str]] = {}
    for entry in [*(base.get("extraPaths") or []), *(over.get("extraPaths") or [])]:
        where_to = (entry if isinstance(entry, str) else entry["path"]).strip()
        pattern = "" if isinstance(entry, str) else (entry.get("pattern") or "").strip()
        if where_to:
            extra[f"{where_to}\0{pattern}"] = (
                {"path": where_to, "pattern": pattern} if pattern else where_to
            )
    if merged.get("enabled", True) is False:
        raise ValueError(
            f"{p}: memory.search.enabled is false for agent {agent}: OpenClaw offers no"
            " memory tools then (set it true, or choose another agent)"
        )
    remember = _remember(data, merged)
    session_memory = bool(_get(merged, "experimental", "sessionMemory", default=False))
    configured = merged.get("sources") or ["memory"]
    sessions_ok = session_memory or (remember and "sessions" in configured)
    sources = tuple(dict.fromkeys(s for s in configured if s == "memory" or sessions_ok))
    provider = (merged.get("provider") or "").strip()
    remote = merged.get("remote") or {}
    key = remote.get("apiKey")
    return CurrentSearchConfig(
        file=p,
        agent_id=agent,
        sources=sources or ("memory",),
        extra_paths=tuple(extra.values()),
        provider="openai" if provider in ("", "auto") else provider,
        model=merged.get("model"),
        fallback=merged.get("fallback") or "none",
        remote_base_url=remote.get("baseUrl"),
        remote_api_key=key if isinstance(key, str) else None,
        remote_headers=dict(remote.get("headers") or {}),
        fts_tokenizer=_get(merged, "store", "fts", "tokenizer", default="unicode61"),
        max_results=int(_get(merged, "query", "maxResults", default=6)),
        min_score=min(1.0, max(0.0, float(_get(merged, "query", "minScore", default=0.35)))),
        cache_enabled=bool(_get(merged, "cache", "enabled", default=True)),
        citations=memory.get("citations", "auto"),
        session_memory=session_memory,
        remember_across_conversations=remember,
    )
