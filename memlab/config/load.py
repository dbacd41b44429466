"""A settings file of either OpenClaw, read by one entry point.

``openclaw.json`` comes in two layouts: 2026-04's ``agents.defaults.memorySearch``
(``memlab.config.load_openclaw_config``) and release 2026.9.6's ``memory.search``
(``memlab.config.release.load_current_config``). `load_search_config` reads either
(``memlab.config.release.file_shape`` tells them apart) and `config_system` gives the system
the file describes, so the command line and the server hold no branch on the release.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.config import MemorySearchConfig, load_openclaw_config, provider_problem
from memlab.config.release import (
    CurrentSearchConfig,
    file_shape,
    legacy_note,
    load_current_config,
)

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline

__all__ = ["config_files_rule", "config_system", "index_settings", "load_search_config"]


def load_search_config(
    path: str | os.PathLike[str], agent: str | None = None, *, check_provider: bool = True
) -> tuple[MemorySearchConfig | CurrentSearchConfig, str | None]:
    """The settings of ``path`` (with ``agent``'s override) and a note for the reader, or
    None. A ``memory.search`` file → ``CurrentSearchConfig``; any other →
    ``MemorySearchConfig``, with the note of how the release's doctor migrates
    ``agents.defaults.memorySearch`` (``legacy_note``). ``check_provider``: a provider
    memlab cannot build (``provider_problem``, naming the file and the key) is a
    ValueError, as every problem of the file is."""
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


def _migration_note(path: str | os.PathLike[str]) -> str | None:
    import json5

    try:
        data = json5.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError, json.JSONDecodeError):
        return None
    note = legacy_note(data)
    return f"{Path(path).expanduser()}: {note}" if note else None


def config_files_rule(cfg: Any) -> str | None:
    """The memory-file rule (``vocab.MEMORY_FILE_RULES``) a settings object implies: the
    release's files for a ``memory.search`` file, None (the caller's default) otherwise."""
    return "openclaw-2026.9" if isinstance(cfg, CurrentSearchConfig) else None


def index_settings(cfg: Any) -> MemorySearchConfig:
    """The index options of a settings object as a ``MemorySearchConfig``
    (``memlab.config.index_options`` reads that shape; the release's are translated)."""
    return cfg.index_config() if isinstance(cfg, CurrentSearchConfig) else cfg


def config_system(cfg: Any, overrides: dict[str, Any]) -> Pipeline:
    """The system a settings object describes, with ``overrides`` applied: a 2026-04 file's
    query settings (``presets.from_config``: weights, maxResults, minScore, MMR, decay);
    for a ``memory.search`` file the ``openclaw-current`` preset with the settings it still
    reads (maxResults, minScore: the rest of its ranking is fixed)."""
    from memlab.presets import from_config, preset

    if isinstance(cfg, CurrentSearchConfig):
        return preset("openclaw-current", **{**cfg.pipeline_overrides(), **overrides})
    return from_config(cfg).replace(**overrides)
