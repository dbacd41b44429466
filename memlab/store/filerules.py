"""Memory-file rules: which files of a workspace an index holds and how they are chunked.

A rule (``memlab.config.vocab.MEMORY_FILE_RULES``) is a property of the system being run:

- ``"openclaw-2026.4"`` (the default): OpenClaw as pinned 2026-04-13 —
  ``memlab.files.workspace.discover_memory_files`` and the index's ``ChunkerConfig``.
- ``"openclaw-2026.9"``: release 2026.9.6 (spec ``openclaw-current.md`` §1, §2, §8, §9) —
  ``memlab.store.release_files.list_memory_files`` (root ``MEMORY.md``, root
  ``USER.md``, ``memory/**/*.md`` without ``.openclaw-repair``, extra paths; root
  ``memory.md`` and ``DREAMS.md`` not memory) and its fixed chunker
  ``memlab.chunking.release.chunk_markdown`` (annotations stripped, per-entry
  blocks for ``MEMORY.md``/``USER.md``, chunking version in the fingerprint), each chunk
  carrying the annotations the release reads from its original lines. The index's
  ``ChunkerConfig`` is not used: the release's chunking is fixed (400/80).

The rule enters the index identity (its file name) and its fingerprint, so indexes of
the two rules live side by side and neither is ever served for the other.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.chunking.common import Chunk
from memlab.config.vocab import DEFAULT_MEMORY_FILES, MEMORY_FILE_RULES

if TYPE_CHECKING:
    from memlab.chunking import ChunkerConfig
    from memlab.files.workspace import MemoryFile

__all__ = [
    "DEFAULT_MEMORY_FILES",
    "AnnotatedChunk",
    "check_memory_files",
    "chunk_annotations",
    "chunk_file",
    "chunker_fingerprint",
    "discover_files",
    "estimate_chars_for",
    "extra_path_names",
    "identity_tag",
    "normalize_extra_entries",
    "row_id_suffix",
    "stores_annotations",
]

CURRENT = "openclaw-2026.9"


@dataclass(frozen=True, slots=True)
class AnnotatedChunk(Chunk):
    """A ``Chunk`` with the release's recall annotations (``memlab.openclaw_current``):
    importance 1–10 or None, triggers ``"a; b"`` or None, project key ``"k1; k2"``, None,
    or ``annotations.INVALID_PROJECT_KEY`` (malformed: the chunk leaves ranking)."""

    importance: int | None = None
    triggers: str | None = None
    project_key: str | None = None


def check_memory_files(value: object, name: str = "memory_files") -> str:
    """``value`` if it is one of ``MEMORY_FILE_RULES``, else ``ValueError`` naming ``name``."""
    if not isinstance(value, str) or value not in MEMORY_FILE_RULES:
        raise ValueError(f"{name} must be one of {', '.join(MEMORY_FILE_RULES)}; got {value!r}")
    return value


def estimate_chars_for(rule: str) -> Callable[[str], int]:
    """The weight (characters) a rule's chunker counts a text as: the release's (CJK
    counted as it counts them: ``memlab.chunking.release.estimate_chars``) for the 2026.9
    rule, ``memlab.chunking.estimate_chars`` otherwise."""
    if rule == CURRENT:
        from memlab.chunking.release import estimate_chars as current_chars

        return current_chars
    from memlab.chunking import estimate_chars

    return estimate_chars


def stores_annotations(rule: str) -> bool:
    """True when an index of ``rule`` stores per-chunk annotations (the 2026.9 rule)."""
    return rule == CURRENT


ExtraEntry = str | dict[str, str]


def normalize_extra_entries(
    entries: Sequence[str | os.PathLike[str] | Mapping[str, str]],
) -> tuple[ExtraEntry, ...]:
    """Configured extra paths as stored by an index: a path is its string, a
    ``{path, pattern}`` entry the dict ``{"path", "pattern"}`` (the string ``path`` when
    the pattern is empty, so such an entry and the plain path are one); duplicates dropped,
    first position kept. A mapping without a string ``path`` raises ``ValueError``."""
    out: dict[tuple[str, str], ExtraEntry] = {}
    for e in entries:
        if isinstance(e, Mapping):
            path, pattern = e.get("path"), e.get("pattern") or ""
            if not isinstance(path, str) or not isinstance(pattern, str):
                raise ValueError(f"extraPaths entry needs a string path (and pattern): {e!r}")
            value: ExtraEntry = {"path": path, "pattern": pattern} if pattern else path
            out.setdefault((path, pattern), value)
        else:
            out.setdefault((str(e), ""), str(e))
    return tuple(out.values())


def extra_path_names(entries: Sequence[str | os.PathLike[str] | Mapping[str, str]]) -> list[str]:
    """The path of each extra entry (a ``{path, pattern}`` entry's ``path``): what rules
    that know no patterns (2026.4 discovery, ``memory_get``, the watcher) read."""
    return [e["path"] if isinstance(e, Mapping) else os.fspath(e) for e in entries]


def discover_files(
    rule: str,
    workspace: Path,
    extra_paths: Sequence[str | os.PathLike[str] | Mapping[str, str]],
    *,
    default_memory: bool = True,
) -> list[MemoryFile]:
    """The memory files of ``workspace`` under ``rule``, in the rule's order (source
    ``memory``): ``discover_memory_files`` (2026.4; a ``{path, pattern}`` entry, from a QMD
    collection or a 2026.9 config, keeps the files under its path that match its glob
    pattern, ``release_files.glob_match``) or ``list_memory_files`` (2026.9, patterns
    matched). ``default_memory=False``: the extra paths only (2026.4; a QMD config's
    ``includeDefaultMemory: false``)."""
    from memlab.files.workspace import MemoryFile, discover_memory_files

    if check_memory_files(rule) != CURRENT:
        files = discover_memory_files(
            workspace, extra_path_names(extra_paths), default_memory=default_memory
        )
        return _match_patterns(files, workspace, extra_paths, default_memory)
    if not default_memory:
        raise ValueError("default_memory=False is a 2026-04 (QMD) setting, not the release's")
    from memlab.store.release_files import list_memory_files

    return [
        MemoryFile(f.path, f.abspath, "memory") for f in list_memory_files(workspace, extra_paths)
    ]


def _match_patterns(
    files: list[MemoryFile],
    workspace: Path,
    extra_paths: Sequence[str | os.PathLike[str] | Mapping[str, str]],
    default_memory: bool,
) -> list[MemoryFile]:
    """``files`` without those that only a ``{path, pattern}`` entry brought and whose
    path below that entry does not match its pattern."""
    from memlab.store.release_files import glob_match

    def root(e: Any) -> Path:
        p = Path(os.fspath(e["path"] if isinstance(e, Mapping) else e)).expanduser()
        return (p if p.is_absolute() else workspace / p).resolve()

    patterned = [
        (root(e), e["pattern"]) for e in extra_paths if isinstance(e, Mapping) and e.get("pattern")
    ]
    if not patterned:
        return files
    plain = [root(e) for e in extra_paths if not (isinstance(e, Mapping) and e.get("pattern"))]
    ws = workspace.resolve()
    default = [ws / "MEMORY.md", ws / "memory.md", ws / "memory"] if default_memory else []

    def kept(f: MemoryFile) -> bool:
        a = Path(f.abspath).resolve()
        if any(a == d or d in a.parents for d in (*default, *plain)):
            return True
        under = [(r, pat) for r, pat in patterned if a == r or r in a.parents]
        rel = lambda r: a.name if a == r else a.relative_to(r).as_posix()  # noqa: E731
        return not under or any(glob_match(rel(r), pat) for r, pat in under)

    return [f for f in files if kept(f)]


def chunk_file(rule: str, chunker: ChunkerConfig, f: MemoryFile, text: str) -> list[Chunk]:
    """The chunks an index of ``rule`` stores for file ``f`` with text ``text``.

    2026.4: ``chunker.chunk(text)``. 2026.9: ``chunk_markdown(text, f.path)`` as
    ``AnnotatedChunk``s (same texts, lines and hashes); session transcripts are cut by the
    same chunker but carry no annotations (the release reads them in memory files only).
    """
    if rule != CURRENT:
        return chunker.chunk(text)
    from memlab.chunking.release import chunk_markdown

    memory = f.source == "memory"
    return [
        AnnotatedChunk(
            c.text,
            c.start_line,
            c.end_line,
            c.hash,
            "",
            c.importance if memory else None,
            c.triggers if memory else None,
            c.project_key if memory else None,
        )
        for c in chunk_markdown(text, f.path)
    ]


def chunk_annotations(c: Chunk) -> tuple[int | None, str | None, str | None]:
    """``(importance, project_key, triggers)`` of a stored chunk; all None for a plain one."""
    if isinstance(c, AnnotatedChunk):
        return c.importance, c.project_key, c.triggers
    return None, None, None


def row_id_suffix(c: Chunk) -> str:
    """What a chunk's row id adds to OpenClaw's id: ``""`` for an unannotated chunk, else
    ``":importance|project|triggers"``. An edit of an annotation alone leaves the stripped
    text, lines and hash unchanged; without this the sync would keep the stale row."""
    imp, project, triggers = chunk_annotations(c)
    if imp is None and project is None and triggers is None:
        return ""
    return f":{'' if imp is None else imp}|{project or ''}|{triggers or ''}"


def chunker_fingerprint(rule: str, chunker: ChunkerConfig) -> str:
    """The chunking part of an index fingerprint: ``chunker.fingerprint()`` (2026.4), or
    ``"openclaw-2026.9:v5"`` with the release's ``CHUNKING_VERSION`` (2026.9)."""
    if rule != CURRENT:
        return chunker.fingerprint()
    from memlab.chunking.release import CHUNKING_VERSION

    return f"{CURRENT}:v{CHUNKING_VERSION}"


def identity_tag(rule: str) -> str:
    """What ``index_identity`` appends for ``rule``: ``""`` (2026.4, file names unchanged)
    or ``"-oc2026.9-"`` + the first 6 hex digits of sha256 of the chunker fingerprint, so a
    new chunking version of the release names a new file."""
    if rule != CURRENT:
        return ""
    from memlab.chunking.release import CHUNKING_VERSION

    h = hashlib.sha256(f"{CURRENT}:v{CHUNKING_VERSION}".encode()).hexdigest()[:6]
    return f"-oc2026.9-{h}"
