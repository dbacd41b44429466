"""The agent's tools per memory-file rule: one `ToolVariant` for each of ``MEMORY_FILE_RULES``.

A system's ``memory_files`` names the OpenClaw whose files it reads, and so whose tools
answer for it: ``openclaw-2026.4`` → ``memlab.tools`` (2026-04, with memlab's corpus
filter), ``openclaw-2026.9`` → ``memlab.tools.release`` (release 2026.9.6). The command
line and the MCP server ask `tool_variant` and call what it holds; neither branches on
the release itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from memlab import tools
from memlab.config.vocab import (
    DEFAULT_MEMORY_FILES,
    MCP_CORPORA,
    MEMORY_FILE_RULES,
    OPENCLAW_CURRENT_CORPORA,
    OPENCLAW_CURRENT_GET_CORPORA,
)
from memlab.tools import release

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline
    from memlab.store import MemoryIndex

__all__ = ["TOOL_VARIANTS", "ToolVariant", "tool_variant"]

Answer = dict[str, Any]


@dataclass(frozen=True)
class ToolVariant:
    """The tools of one memory-file rule.

    ``search(index, query, maxResults, minScore, corpus, *, pipeline, citations, now)``:
    the ``memory_search`` answer (a bad argument raises ``SearchArgumentError``);
    ``corpora``: the ``corpus`` values it takes. ``corpus_answer(index, corpus)``: the
    answer given without searching (a corpus with nothing to search), or None.
    ``get(workspace, path, from_, lines, *, extra_paths, corpus)``: the ``memory_get``
    answer; ``get_corpora``: its ``corpus`` values (() = it takes none). ``refused(answer)``:
    whether a ``memory_get`` answer refuses the path; ``get_report(answer, workspace,
    path, extra_paths, from_, lines)``: (problem, note) as ``memlab get`` prints them.
    """

    rules: str
    search: Callable[..., Answer]
    corpora: tuple[str, ...]
    corpus_answer: Callable[[MemoryIndex, str | None], Answer | None]
    get: Callable[..., Answer]
    get_corpora: tuple[str, ...]
    refused: Callable[[Answer], bool]
    get_report: Callable[..., tuple[str | None, str | None]]


def _get_2026_04(
    workspace: str | os.PathLike[str],
    path: str,
    from_: int | None = None,
    lines: int | None = None,
    *,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
    corpus: str | None = None,
) -> Answer:
    """``memlab.tools.memory_get``; the 2026-04 tool takes no corpus (a ValueError)."""
    if corpus is not None:
        raise ValueError("the 2026-04 memory_get takes no corpus")
    return tools.memory_get(workspace, path, from_, lines, extra_paths=extra_paths)


TOOL_VARIANTS: MappingProxyType[str, ToolVariant] = MappingProxyType(
    {
        "openclaw-2026.4": ToolVariant(
            rules="openclaw-2026.4",
            search=tools.search_corpus,
            corpora=MCP_CORPORA,
            corpus_answer=lambda index, corpus: None,  # every corpus is searched
            get=_get_2026_04,
            get_corpora=(),
            refused=lambda res: res.get("error") == tools.PATH_REQUIRED,
            get_report=tools.get_report,
        ),
        "openclaw-2026.9": ToolVariant(
            rules="openclaw-2026.9",
            search=release.memory_search,
            corpora=OPENCLAW_CURRENT_CORPORA,
            corpus_answer=release.corpus_answer,
            get=release.memory_get,
            get_corpora=OPENCLAW_CURRENT_GET_CORPORA,
            refused=lambda res: res.get("code") == release.NOT_ALLOWED_CODE,
            get_report=release.get_report,
        ),
    }
)
if set(TOOL_VARIANTS) != set(MEMORY_FILE_RULES):  # a new rule needs its tools
    raise RuntimeError(
        f"memlab/tools/variants.py TOOL_VARIANTS keys {sorted(TOOL_VARIANTS)} must be "
        f"vocab.MEMORY_FILE_RULES: {', '.join(MEMORY_FILE_RULES)}"
    )


def tool_variant(system: Pipeline | str | None) -> ToolVariant:
    """The tools that answer for ``system``: a pipeline (its ``memory_files``), a rule
    name, or None (``DEFAULT_MEMORY_FILES``)."""
    rules = system if isinstance(system, str) else getattr(system, "memory_files", None)
    return TOOL_VARIANTS[rules or DEFAULT_MEMORY_FILES]
