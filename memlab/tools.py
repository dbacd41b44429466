"""The agent's tools: ``memory_search`` and ``memory_get`` with OpenClaw's JSON shapes (spec §8).

Both return plain dicts ready for ``json.dumps``; failures come back as error
payloads, never as exceptions, because an agent's tool call must always get
an answer it can read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.rerank import snippet as make_snippet
from memlab.vocab import CITATION_MODES
from memlab.workspace import MemoryFileError, read_memory_file

if TYPE_CHECKING:
    import pandas as pd

    from memlab.candidates import CandidateSet
    from memlab.index import MemoryIndex
    from memlab.pipeline import Pipeline, Ranking

SNIPPET_CHARS = 700
GET_ROOT_FILES = ("MEMORY.md", "memory.md", "dreams.md")
PATH_REQUIRED = "path required"


def citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L5-L7``, or ``path#L5`` for a one-line chunk."""
    if start_line == end_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"


def memory_search(
    index: MemoryIndex,
    query: str,
    maxResults: int | None = None,
    minScore: float | None = None,
    *,
    pipeline: Pipeline | None = None,
    citations: str = "auto",
    now: float | None = None,
) -> dict[str, Any]:
    """Answer a ``memory_search`` tool call.

    Returns ``{results: [{path, startLine, endLine, score, snippet, source,
    citation?}], provider, model, fallback, citations, mode}``; snippets are the
    first 700 UTF-16 units of the chunk (never splitting a surrogate pair),
    results sorted by score (descending) then path. When the embedding provider fails
    on the query, the keyword leg answers alone (OpenClaw's keyword-only mode) with
    ``fallback: true``, ``mode: "fts-only"`` and a ``warning``; a corrupt index is
    rebuilt from the Markdown and searched again. Citations ``auto`` (memlab
    has no chat context, so ``auto`` behaves as ``on``) and ``on`` append
    ``\\n\\nSource: path#L5-L7`` to the snippet and set ``citation``; ``off``
    leaves both out. Any failure (empty query, unusable index, provider error)
    yields ``{results: [], disabled: true, unavailable: true, error, warning,
    action}``.
    """
    from memlab.pipeline import openclaw

    try:
        if citations not in CITATION_MODES:
            raise ValueError(f"citations must be one of {', '.join(CITATION_MODES)}")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query required")
        p = pipeline or openclaw()
        overrides: dict[str, Any] = {}
        if maxResults is not None:
            overrides["max_results"] = int(maxResults)
        if minScore is not None:
            overrides["min_score"] = float(minScore)
        if overrides:
            p = p.replace(**overrides)
        outcome = search_with_fallback(index, p, query, now=now)
        df, p = outcome.frame, outcome.pipeline
        cs_mode = (
            "hybrid"
            if index.has_vectors and p.vector and p.keyword
            else ("vector" if index.has_vectors and p.vector else "fts-only")
        )
    except Exception as exc:  # the tool must answer, whatever failed
        return unavailable(exc)
    cite = citations in ("auto", "on")
    results = []
    # Column lists, not itertuples: the frame carries every explain column and
    # itertuples over it costs more than the rest of the answer.
    cols = [df[c].tolist() for c in ("text", "path", "start_line", "end_line", "score", "source")]
    for text, path, start, end, score, source in zip(*cols, strict=True):
        snip = make_snippet(text, SNIPPET_CHARS)
        item: dict[str, Any] = {
            "path": path,
            "startLine": int(start),
            "endLine": int(end),
            "score": float(score),
            "snippet": snip,
            "source": source,
        }
        if cite:
            c = citation(path, int(start), int(end))
            item["snippet"] = f"{snip}\n\nSource: {c}"
            item["citation"] = c
        results.append(item)
    results.sort(key=lambda r: (-r["score"], r["path"]))
    e = index.embedder
    out: dict[str, Any] = {
        "results": results,
        "provider": e.provider if e is not None else "none",
        "model": index.model,
        "fallback": getattr(e, "fallback_reason", None) is not None or outcome.warning is not None,
        "citations": citations,
        "mode": cs_mode,
    }
    if outcome.warning is not None:
        out["warning"] = outcome.warning
    return out


@dataclass
class SearchOutcome:
    """One search as ``search_with_fallback`` ran it.

    ``frame``: the results (``Pipeline.run`` columns with text); ``pipeline``: the
    system that produced them (keyword-only after a provider failure); ``candidates``
    and ``ranking``: what ``memlab.pipeline.explain`` needs to account for every
    candidate; ``warning``: why a fallback was taken (None when none was).
    """

    frame: pd.DataFrame
    pipeline: Pipeline
    candidates: CandidateSet
    ranking: Ranking
    warning: str | None = None


def search_with_fallback(
    index: MemoryIndex, pipeline: Pipeline, query: str, *, now: float | None = None
) -> SearchOutcome:
    """The one search path of ``memory_search`` and ``memlab search`` (plain, --explain,
    --json): retrieve, rank, and on failure fall back as OpenClaw does.

    A corrupt index is rebuilt from the Markdown and the search run again; an
    ``EmbeddingError`` on the query (provider down, wrong dimensions...) of a hybrid
    system re-runs it keyword-only (``pipeline.replace(vector=False)``, OpenClaw's mode
    without a provider) with ``warning = "embedding provider failed, keyword-only
    results: <error>"``. A vector-only system has no keyword leg to fall back on: the
    error is raised. ``now``: the clock for decay, Unix seconds (None = now).
    """
    from memlab.embed import EmbeddingError
    from memlab.index import IndexCorruptError
    from memlab.pipeline import ranking_frame

    def run(p: Pipeline) -> SearchOutcome:
        cs = p.retrieve(index, [query], qids=["q"], times=None if now is None else [now])
        r = p.rank(cs)
        return SearchOutcome(ranking_frame(cs, r, p.name, with_text=True), p, cs, r)

    try:
        try:
            return run(pipeline)
        except IndexCorruptError:
            index.sync()  # moves the corrupt file aside and rebuilds it from the Markdown
            return run(pipeline)
    except EmbeddingError as exc:
        if not (pipeline.keyword and pipeline.vector):
            raise
        out = run(pipeline.replace(vector=False))
        out.warning = f"embedding provider failed, keyword-only results: {exc}"
        return out


def unavailable(exc: BaseException) -> dict[str, Any]:
    """OpenClaw's failure payload for ``memory_search``."""
    return {
        "results": [],
        "disabled": True,
        "unavailable": True,
        "error": f"{type(exc).__name__}: {exc}",
        "warning": "memory search is unavailable; answer without recalled memory",
        "action": "check the memory index (memlab status WORKSPACE) and the embedding provider",
    }


def resolve_memory_path(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
) -> tuple[Path, str] | None:
    """Resolve a ``memory_get`` path to (absolute file, display path), or None if refused.

    Allowed: after lexical normalisation the path lies inside the workspace
    and is ``MEMORY.md``, ``memory.md``, ``dreams.md`` or under ``memory/``, or
    lies inside an extra path; it ends in ``.md``; no component from the
    workspace (or extra path) down is a symlink. Refused: empty or non-string
    paths, NUL bytes, backslashes (Windows separators), ``..`` escapes. Paths
    are never URL-decoded: ``%2e%2e`` is a literal name, not a traversal.
    """
    found = _resolve(workspace, path, extra_paths)
    return None if found is None else (found[0], found[1])


def _resolve(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
) -> tuple[Path, str, Path] | None:
    """(file, display path, folder the file is opened beneath) or None (see above)."""
    found = _resolve_or_refuse(workspace, path, extra_paths)
    return None if isinstance(found, str) else found


def memory_path_refusal(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
) -> str | None:
    """Which ``memory_get`` rule ``path`` breaks, in words; None when it is allowed.

    The tool answers every refusal with OpenClaw's ``path required`` (spec §8);
    this names the first rule broken, in the order checked: empty, NUL byte,
    backslash, not ``.md``, outside the workspace and every extra path, inside
    the workspace but not ``MEMORY.md``/``memory.md``/``dreams.md`` or under
    ``memory/``, a symlink on the way.
    """
    found = _resolve_or_refuse(workspace, path, extra_paths)
    return found if isinstance(found, str) else None


def _resolve_or_refuse(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
) -> tuple[Path, str, Path] | str:
    """(file, display path, folder the file is opened beneath), or the rule it breaks."""
    if not isinstance(path, str) or not path.strip():
        return "the path is empty"
    if "\x00" in path:
        return "the path contains a NUL byte"
    if "\\" in path:
        return "the path contains a backslash (use / between folders)"
    ws = Path(os.path.realpath(Path(workspace).expanduser()))
    raw = Path(path)  # no "~" expansion: a tool path is relative or absolute, nothing else
    cand = Path(os.path.normpath(raw if raw.is_absolute() else ws / raw))
    if cand.suffix != ".md":
        return "not a .md file (memory_get reads Markdown memory files only)"
    inside_ws = False
    roots: list[tuple[Path, bool]] = [(ws, False)]
    for extra in extra_paths:
        e = Path(extra).expanduser()
        e = Path(os.path.normpath(e if e.is_absolute() else ws / e))
        roots.append((e, True))
    for root, is_extra in roots:
        try:
            rel = cand.relative_to(root)
        except ValueError:
            continue
        parts = rel.parts
        inside_ws = inside_ws or not is_extra
        if not is_extra and not (
            (len(parts) == 1 and parts[0] in GET_ROOT_FILES)
            or (len(parts) >= 2 and parts[0] == "memory")
        ):
            continue
        if is_extra and root.suffix == ".md" and rel != Path("."):
            continue
        if _has_symlink(root, parts) or (is_extra and root.is_symlink()):
            return "a symlink (memory_get does not follow symlinks, in the path or its folders)"
        display = Path(os.path.relpath(cand, ws)).as_posix()
        # The read re-checks every folder below this one without following symlinks, so a
        # folder swapped for a symlink after this check cannot redirect it.
        beneath = root.parent if is_extra and rel == Path(".") else root
        return cand, display, beneath
    if inside_ws:
        return (
            f"inside the workspace {ws} but not {', '.join(GET_ROOT_FILES[:-1])} or"
            f" {GET_ROOT_FILES[-1]} nor under memory/ (an extra path, --extra PATH, allows more)"
        )
    return f"outside the workspace {ws} and every extra path (--extra PATH allows one)"


def _has_symlink(root: Path, parts: tuple[str, ...]) -> bool:
    p = root
    for part in parts:
        p = p / part
        if p.is_symlink():
            return True
    return False


def memory_get(
    workspace: str | os.PathLike[str],
    path: str,
    from_: int | None = None,
    lines: int | None = None,
    *,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
) -> dict[str, Any]:
    """Answer a ``memory_get`` tool call: ``{text, path}`` or ``{error, path}``.

    ``from_`` is 1-based; ``lines`` is how many lines to return (default: to
    the end); neither → the whole file; past the end → ``""``. A missing file
    → ``{text: "", path}`` with no error. A path outside the memory files (see
    ``resolve_memory_path``) → ``{error: "path required", path}``; an
    unreadable or non-UTF-8 file → ``{error: <reason>, path}``.
    """
    resolved = _resolve(workspace, path, extra_paths)
    if resolved is None:
        return {"error": PATH_REQUIRED, "path": path if isinstance(path, str) else ""}
    abspath, display, beneath = resolved
    if from_ is not None and (isinstance(from_, bool) or not isinstance(from_, int) or from_ < 1):
        return {"error": "from must be an integer >= 1", "path": display}
    if lines is not None and (isinstance(lines, bool) or not isinstance(lines, int) or lines < 0):
        return {"error": "lines must be an integer >= 0", "path": display}
    if not os.path.lexists(abspath):
        return {"text": "", "path": display}
    try:
        text = read_memory_file(abspath, display, root=beneath).text
    except MemoryFileError as exc:
        return {"error": exc.reason, "path": display}
    if from_ is None and lines is None:
        return {"text": text, "path": display}
    all_lines = text.split("\n")
    start = (from_ or 1) - 1
    end = len(all_lines) if lines is None else start + lines
    return {"text": "\n".join(all_lines[start:end]), "path": display}
