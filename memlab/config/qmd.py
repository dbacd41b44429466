"""OpenClaw 2026-04's QMD backend settings (``memory.backend: "qmd"``, ``memory.qmd``), read
as what that agent's QMD searched, and what OpenClaw 2026.9.6's doctor makes of them.

``memory.qmd`` (OpenClaw's ``MemoryQmdConfig``): ``includeDefaultMemory`` (default true:
``MEMORY.md``, ``memory.md``, ``memory/**/*.md``), ``paths[]`` (collections ``{name, path,
pattern}``; a relative path inside the workspace, pattern ``**/*.md`` by default),
``sessions.enabled`` (transcripts), ``update.interval`` (``"5m"``) / ``update.debounceMs``
(15000), ``limits.maxResults`` (6) / ``limits.timeoutMs`` (4000), ``searchMode``
(``search``: BM25, ``vsearch``: vectors, ``query``: both, the hybrid query; memlab reads an
absent one as ``query``). The schema is strict, as OpenClaw's: an unknown key is an error
naming it with the nearest valid key; the keys memlab accepts and does not use are
``IGNORED_QMD_KEYS``. memlab ranks with ``qmd-like`` (QMD's retrieval without its models:
``memlab.qmd``) on an index of those files chunked by the heading-aware chunker at QMD's
900/135 tokens (`QmdConfig.index_overrides`), and `QmdConfig.note` says what it cannot
reproduce. `doctor_migration` is release 2026.9.6's ``openclaw doctor --fix`` of these keys
(``legacy-config-migrations.runtime.retired-memory-qmd``): collections become
``memory.search.extraPaths`` entries, ``sessions.enabled`` session memory.

Size: one set of keys, read (`QMD_SCHEMA`, `load_qmd_config`, `QmdConfig`) and migrated
(`doctor_migration`): the migration would move out if the release's doctor grew other
QMD rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlab.config.keys import check_key_tree

__all__ = [
    "IGNORED_QMD_KEYS",
    "QMD_SCHEMA",
    "QmdConfig",
    "doctor_migration",
    "is_qmd_config",
    "load_qmd_config",
    "parse_duration_ms",
]

# memory.qmd's keys: a leaf names its value type (None: accepted and not used).
QMD_SCHEMA: dict[str, Any] = {
    "includeDefaultMemory": "bool",
    "searchMode": "mode",
    "paths": "paths",
    "sessions": {"enabled": "bool", "retentionDays": None, "exportDir": None},
    "update": {
        "interval": "duration",
        "debounceMs": "count",
        "onBoot": None,
        "waitForBootSync": None,
        "embedInterval": None,
        "commandTimeoutMs": None,
        "updateTimeoutMs": None,
        "embedTimeoutMs": None,
    },
    "limits": {
        "maxResults": "posint",
        "timeoutMs": "count",
        "maxSnippetChars": None,
        "maxInjectedChars": None,
    },
    "command": None,
    "mcporter": None,
    "scope": None,
}


def _unused_keys(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The dotted paths of ``tree``'s ``None`` leaves."""
    out: list[str] = []
    for key, leaf in tree.items():
        if isinstance(leaf, Mapping):
            out += _unused_keys(leaf, f"{prefix}{key}.")
        elif leaf is None:
            out.append(prefix + key)
    return out


# The keys of OpenClaw's QMD settings memlab accepts and does not use (they change which
# binary runs, how it is spawned or who may read results, not what is ranked).
IGNORED_QMD_KEYS: tuple[str, ...] = tuple(_unused_keys(QMD_SCHEMA))
SEARCH_MODES = ("search", "vsearch", "query")
DEFAULT_PATTERN = "**/*.md"
# QMD's chunks: 900 tokens, 15% overlap (135), cut at Markdown break points.
QMD_CHUNK_TOKENS, QMD_CHUNK_OVERLAP = 900, 135
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration_ms(value: Any) -> int:
    """A duration as OpenClaw writes one, in milliseconds: ``"5m"`` → 300000, ``"30s"``,
    ``"1h"``, ``"250ms"``, ``"2d"``; a bare number (or numeric string) is milliseconds.
    Anything else is a ``ValueError``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return int(value)
    m = _DURATION.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"must be a duration such as 5m, 30s or 1500 (ms), got {value!r}")
    return int(float(m.group(1)) * _UNIT_MS[(m.group(2) or "ms").lower()])


def _leaf(kind: str, value: Any) -> str | None:
    num = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "mode":
        return None if value in SEARCH_MODES else f"must be one of {', '.join(SEARCH_MODES)}"
    if kind == "posint":
        return (
            None if num and float(value).is_integer() and value >= 1 else "must be an integer >= 1"
        )
    if kind == "count":
        return (
            None if num and float(value).is_integer() and value >= 0 else "must be an integer >= 0"
        )
    if kind == "duration":
        try:
            parse_duration_ms(value)
        except ValueError as exc:
            return str(exc).split(", got")[0]
        return None
    if kind == "paths":
        if not isinstance(value, list):
            return "must be an array of {name, path, pattern} collections"
        for i, entry in enumerate(value):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
                return f"[{i}] must be an object with a string path"
            extra = sorted(set(entry) - {"name", "path", "pattern"})
            if extra:
                return f"[{i}] has unknown key {extra[0]} (only name, path and pattern)"
            for k in ("name", "pattern"):
                if k in entry and not isinstance(entry[k], str):
                    return f"[{i}].{k} must be a string"
        return None
    raise AssertionError(kind)


@dataclass(frozen=True)
class QmdConfig:
    """One agent's QMD backend settings (see the module docstring) and the 2026-04
    ``memorySearch`` of the same file (``search``: the embedding provider memlab uses)."""

    file: Path
    search: Any  # memlab.config.MemorySearchConfig
    include_default_memory: bool = True
    collections: tuple[dict[str, str], ...] = ()
    sessions: bool = False
    search_mode: str | None = None
    interval_ms: int = 300_000
    debounce_ms: int = 15_000
    max_results: int = 6
    timeout_ms: int = 4000
    citations: str = "auto"
    agent_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def fts_tokenizer(self) -> str:
        """The index's tokenizer: the ``memorySearch``'s (QMD's own keyword search builds
        its document table with ``porter unicode61`` whatever this is)."""
        return str(self.search.fts_tokenizer)

    def extra_entries(self) -> tuple[dict[str, str], ...]:
        """The collections as extra paths ``{path, pattern}``."""
        return tuple({"path": c["path"], "pattern": c["pattern"]} for c in self.collections)

    def index_config(self) -> Any:
        """These settings as a ``MemorySearchConfig`` for the index: the ``memorySearch``'s
        provider and model, the collections as extra paths with their patterns, sessions
        as a source, QMD's 900/135-token chunks, ``limits.maxResults``."""
        return self.search.replace(
            extra_paths=self.extra_entries(),
            sources=("memory", "sessions") if self.sessions else ("memory",),
            chunk_tokens=QMD_CHUNK_TOKENS,
            chunk_overlap=QMD_CHUNK_OVERLAP,
            max_results=self.max_results,
            citations=self.citations,
        )

    def index_overrides(self) -> dict[str, Any]:
        """Index options no ``MemorySearchConfig`` holds: the heading-aware chunker (QMD's
        break-point scores) and, with ``includeDefaultMemory: false``, no default memory."""
        return {"chunker_kind": "heading", "default_memory": self.include_default_memory}

    def pipeline_overrides(self) -> dict[str, Any]:
        """The ``qmd-like`` parameters these settings change: ``max_results`` and, by
        ``searchMode``, one leg off (``search``: keyword only; ``vsearch``: vector only)."""
        out: dict[str, Any] = {"max_results": self.max_results}
        if self.search_mode == "search":
            out["vector"] = False
        elif self.search_mode == "vsearch":
            out["keyword"] = False
        return out

    def note(self) -> str:
        """What memlab says on stderr of such a config: what it searches and ranks with,
        and what it cannot reproduce offline."""
        where = [
            *(
                ["the default memory (MEMORY.md, memory.md, memory/**/*.md)"]
                if self.include_default_memory
                else []
            ),
            *(f"collection {c['name']} ({c['path']}, {c['pattern']})" for c in self.collections),
            *(["session transcripts"] if self.sessions else []),
        ]
        mode = self.search_mode or "query (not set: read as the hybrid query)"
        return (
            f"{self.file}: memory.backend is qmd: memlab searches "
            + (", ".join(where) or "nothing (includeDefaultMemory is false and no paths)")
            + f" with qmd-like, QMD's retrieval without its models (searchMode {mode});"
            " QMD's query expansion and reranker (local models) are not reproduced offline,"
            " the embedder is memlab's, limits.timeoutMs is not applied (docs/presets.md,"
            " qmd-like)"
        )


def is_qmd_config(data: Any) -> bool:
    """True when a parsed ``openclaw.json`` selects the QMD backend (``memory.backend:
    "qmd"``)."""
    memory = data.get("memory") if isinstance(data, Mapping) else None
    return isinstance(memory, Mapping) and memory.get("backend") == "qmd"


def _collection_name(entry: Mapping[str, Any], i: int, agent: str) -> str:
    name = entry.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    stem = Path(str(entry["path"]).rstrip("/")).name or f"path{i}"
    return f"{stem}-{agent}"


def load_qmd_config(path: str | os.PathLike[str], agent_id: str | None = None) -> QmdConfig:
    """The QMD settings of an ``openclaw.json`` whose ``memory.backend`` is ``qmd``; every
    problem is a ``ValueError`` naming the file and the key: ``memory`` may hold only
    ``backend``, ``citations`` and ``qmd``; ``memory.qmd`` must fit `QMD_SCHEMA` (unknown
    key → named with the nearest valid one); ``agents.defaults.memorySearch`` (and the
    agent's) is read as the 2026-04 reader reads it (``memlab.config.load_openclaw_config``)
    for the embedder; its ``qmd.extraCollections`` join the collections."""
    import json5

    from memlab.config import load_openclaw_config
    from memlab.config.vocab import CITATION_MODES

    p = Path(path).expanduser()
    data = json5.loads(p.read_text(encoding="utf-8"))
    try:
        memory = data["memory"]
        problems: list[str] = []
        for key in memory:
            if key not in ("backend", "citations", "qmd"):
                problems.append(f"unknown key memory.{key} (valid keys: backend, citations, qmd)")
        if memory.get("citations", "auto") not in CITATION_MODES:
            problems.append(f"memory.citations must be one of {', '.join(CITATION_MODES)}")
        qmd = memory.get("qmd") or {}
        check_key_tree(qmd, QMD_SCHEMA, "memory.qmd", problems, leaf_problem=_leaf)
        if problems:
            raise ValueError("; ".join(problems) + " (OpenClaw's memory.qmd schema is strict)")
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from exc
    search = load_openclaw_config(p, agent_id)  # errors name the file already
    agent = agent_id or "main"
    entries = list(qmd.get("paths") or [])
    for src in _extra_collections(data, agent_id):
        entries.append(src)
    collections = []
    for i, e in enumerate(entries):
        pattern = (e.get("pattern") or "").strip() or DEFAULT_PATTERN
        collections.append(
            {"name": _collection_name(e, i, agent), "path": e["path"].strip(), "pattern": pattern}
        )
    update, limits = qmd.get("update") or {}, qmd.get("limits") or {}
    return QmdConfig(
        file=p,
        search=search,
        include_default_memory=bool(qmd.get("includeDefaultMemory", True)),
        collections=tuple(collections),
        sessions=bool((qmd.get("sessions") or {}).get("enabled", False)),
        search_mode=qmd.get("searchMode"),
        interval_ms=parse_duration_ms(update.get("interval", "5m")),
        debounce_ms=int(update.get("debounceMs", 15_000)),
        max_results=int(limits.get("maxResults", 6)),
        timeout_ms=int(limits.get("timeoutMs", 4000)),
        citations=memory.get("citations", "auto"),
        agent_id=agent_id,
        raw=data,
    )


def _extra_collections(data: Mapping[str, Any], agent_id: str | None) -> list[Mapping[str, Any]]:
    """``memorySearch.qmd.extraCollections`` of the defaults and of the agent (entries with a
    string path)."""
    agents = data.get("agents") if isinstance(data.get("agents"), Mapping) else {}
    scopes = [(agents.get("defaults") or {}).get("memorySearch") or {}]
    if agent_id is not None:
        for a in agents.get("list") or []:
            if isinstance(a, Mapping) and a.get("id") == agent_id:
                scopes.append(a.get("memorySearch") or {})
    out = []
    for scope in scopes:
        extra = (
            (scope.get("qmd") or {}).get("extraCollections") if isinstance(scope, Mapping) else None
        )
        out += [e for e in extra or [] if isinstance(e, Mapping) and isinstance(e.get("path"), str)]
    return out


def doctor_migration(data: Any) -> tuple[dict[str, Any], list[str]]:
    """What OpenClaw 2026.9.6's ``openclaw doctor --fix`` makes of the QMD settings of a
    parsed config (its ``migrateRetiredMemoryQmd``, top level): the resulting
    ``memory.search`` object and the changes it reports, in its words.

    ``memory.qmd.sessions.enabled`` (then ``memory.search.qmd``'s) → ``experimental.
    sessionMemory: true`` unless set, and ``sessions`` added to ``sources``
    (``["memory", "sessions"]`` when unset or empty); ``memory.qmd.paths[]`` and
    ``memory.search.qmd.extraCollections[]`` → ``extraPaths`` entries (``{path, pattern}``,
    the path alone without a pattern; trimmed; empty paths and duplicates dropped; the
    existing entries normalised the same way when any is added); ``memory.backend``,
    ``memory.qmd`` and ``memory.search.qmd`` removed. Checked against the release under
    node (tests/test_qmd_config.py). The rest of the migration (``agents.defaults.
    memorySearch`` → ``memory.search``) is ``memlab.config.release.legacy_note``'s."""
    missing = object()
    if not isinstance(data, Mapping):
        return {}, []
    memory = data.get("memory") if isinstance(data.get("memory"), Mapping) else {}
    raw_search = memory.get("search")
    search = dict(raw_search) if isinstance(raw_search, Mapping) else {}
    qmd = memory.get("qmd") if isinstance(memory.get("qmd"), Mapping) else {}
    search_qmd = search.pop("qmd", missing)
    sq = search_qmd if isinstance(search_qmd, Mapping) else {}
    changes: list[str] = []
    for where, block in (("memory.qmd", qmd), ("memory.search.qmd", sq)):
        sessions = block.get("sessions")
        if not (isinstance(sessions, Mapping) and sessions.get("enabled") is True):
            continue
        changed = False
        exp = search.get("experimental", missing)
        record = isinstance(exp, Mapping)
        if (record or exp is missing) and (not record or "sessionMemory" not in exp):
            search["experimental"] = {**(exp if record else {}), "sessionMemory": True}
            changed = True
        sources = search.get("sources", missing)
        if sources is missing or sources == []:
            search["sources"], changed = ["memory", "sessions"], True
        elif isinstance(sources, list) and "sessions" not in sources:
            search["sources"], changed = [*sources, "sessions"], True
        if changed:
            changes.append(
                f"Migrated {where}.sessions.enabled → memory.search.experimental.sessionMemory"
                " and memory.search.sources."
            )
    entries: list[Any] = []
    for e in [*(qmd.get("paths") or []), *(sq.get("extraCollections") or [])]:
        path = e.get("path") if isinstance(e, Mapping) else None
        path = path.strip() if isinstance(path, str) else ""
        if path:
            pattern = e.get("pattern").strip() if isinstance(e.get("pattern"), str) else ""
            entries.append({"path": path, "pattern": pattern} if pattern else path)
    if entries:
        raw = search.get("extraPaths")
        kept = [
            e
            for e in (raw if isinstance(raw, list) else [])
            if isinstance(e, str) or (isinstance(e, Mapping) and isinstance(e.get("path"), str))
        ]
        existing = _normalize_extra(kept)
        seen = {_entry_key(e) for e in existing}
        added = 0
        for e in entries:
            if _entry_key(e) not in seen:
                seen.add(_entry_key(e))
                existing.append(e)
                added += 1
        if added:
            search["extraPaths"] = existing
            changes.append(
                f"Migrated {added} external QMD path{'' if added == 1 else 's'} from"
                " memory.qmd.paths and memory.search.qmd.extraCollections →"
                " memory.search.extraPaths."
            )
    if "backend" in memory or "qmd" in memory or search_qmd is not missing:
        changes.append(
            "Removed retired QMD memory configuration; builtin memory is now the only memory"
            " engine."
        )
    return search, changes


def _normalize_extra(entries: list[Any]) -> list[Any]:
    """The release's ``normalizeConfiguredMemoryExtraPaths``: paths and patterns trimmed,
    empty paths dropped, one entry per (path, pattern) at its first position."""
    out: dict[str, Any] = {}
    for e in entries:
        path = (e if isinstance(e, str) else e["path"]).strip()
        pattern = "" if isinstance(e, str) else (e.get("pattern") or "").strip()
        if path:
            key = f"{path}\0{pattern}"
            out[key] = {"path": path, "pattern": pattern} if pattern else path
    return list(out.values())


def _entry_key(entry: Any) -> str:
    if isinstance(entry, str):
        return f"{entry}\0"
    return f"{entry.get('path')}\0{(entry.get('pattern') or '').strip()}"
