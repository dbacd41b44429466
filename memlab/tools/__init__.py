"""The agent's tools: ``memory_search`` and ``memory_get`` with OpenClaw's JSON shapes (spec §8).

Both return plain dicts ready for ``json.dumps``; failures come back as error
payloads, never as exceptions, because an agent's tool call must always get
an answer it can read. This module answers as OpenClaw 2026-04 does (with memlab's
``corpus`` filter for the MCP server: ``search_corpus``); ``memlab.tools.release`` as
release 2026.9.6 does; ``memlab.tools.variants`` picks one by the system's memory-file
rule, so the command line and the server hold no branch of their own.

Size: the two tools of spec §8: ``memory_search`` (``check_search_arguments``,
``search_with_fallback``, ``result_items``) and ``memory_get`` (``resolve_memory_path``,
``memory_path_refusal``, ``get_report``). They would split cleanly; not done, as
``memlab.tools.release`` and ``memlab.server`` import both halves from here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.config.vocab import CITATION_MODES, DEFAULT_MEMORY_FILES, MCP_CORPORA, MEMORY_FILE_RULES
from memlab.files.workspace import MemoryFileError, read_memory_file
from memlab.retrieval.rerank import snippet as make_snippet

if TYPE_CHECKING:
    import pandas as pd

    from memlab.pipeline import Pipeline, Ranking
    from memlab.retrieval.candidates import CandidateSet
    from memlab.store import MemoryIndex

SNIPPET_CHARS = 700
GET_ROOT_FILES = ("MEMORY.md", "memory.md", "dreams.md")
# The root files memory_get opens, per memory-file rules (``vocab.MEMORY_FILE_RULES``): the one
# owner of that rule. 2026-04: exactly these names. Release 2026.9.6 (spec §11): MEMORY.md,
# USER.md and dreams.md in any case; root memory.md is refused (the doctor merges it).
GET_ROOT_FILES_BY_RULES: dict[str, tuple[str, ...]] = {
    "openclaw-2026.4": GET_ROOT_FILES,
    "openclaw-2026.9": ("MEMORY.md", "USER.md", "dreams.md"),
}
# Of those, the ones a rule opens in any case (lower-cased): release 2026.9.6's dreams.md.
GET_ROOT_FILES_ANY_CASE: dict[str, tuple[str, ...]] = {"openclaw-2026.9": ("dreams.md",)}
if set(GET_ROOT_FILES_BY_RULES) != set(MEMORY_FILE_RULES):  # a new rule needs its root files
    raise RuntimeError(
        f"memlab/tools/__init__.py GET_ROOT_FILES_BY_RULES keys {sorted(GET_ROOT_FILES_BY_RULES)} "
        f"must be vocab.MEMORY_FILE_RULES: {', '.join(MEMORY_FILE_RULES)}"
    )
PATH_REQUIRED = "path required"


def citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L5-L7``, or ``path#L5`` for a one-line chunk."""
    if start_line == end_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"


class SearchArgumentError(ValueError):
    """A ``memory_search`` argument outside its allowed range: the caller's mistake, not an
    outage. ``argument`` names it as the caller spelled it (``maxResults``, ``--max-results``).

    The MCP server answers it with the protocol's tool error (``isError``), the command line
    with exit code 2; it never becomes the ``unavailable`` payload, which tells an agent
    that memory is down.
    """

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument


# How each surface names the arguments of memory_search: the tools (MCP, Python) and the
# command line (`memlab search QUERY --max-results N --min-score S`).
TOOL_ARGUMENT_NAMES = {"query": "query", "maxResults": "maxResults", "minScore": "minScore"}
CLI_ARGUMENT_NAMES = {"query": "QUERY", "maxResults": "--max-results", "minScore": "--min-score"}


def check_search_arguments(
    query: Any,
    maxResults: Any = None,
    minScore: Any = None,
    *,
    names: dict[str, str] = TOOL_ARGUMENT_NAMES,
) -> None:
    """The one rule for ``memory_search``'s arguments, wherever they come from (the MCP
    tool, ``memlab search``, Python): raises ``SearchArgumentError`` naming the first bad one.

    ``query``: a string holding a non-blank character (an empty or blank query is refused
    everywhere, the same way); ``maxResults``: None or an integer >= ``MIN_MAX_RESULTS`` (1),
    the pipeline's ``max_results`` rule; ``minScore``: None or a finite number, the
    pipeline's ``min_score`` rule. ``names`` spells the arguments as the caller knows them.
    """
    from memlab.pipeline.base import MIN_MAX_RESULTS, check_finite, check_integer

    if not isinstance(query, str) or not query.strip():
        shown = query if isinstance(query, str) else type(query).__name__
        raise SearchArgumentError(
            names["query"],
            f"{names['query']} must be a non-empty text (a word to search for), got {shown!r}",
        )
    checks = (
        ("maxResults", maxResults, lambda n, v: check_integer(n, v, MIN_MAX_RESULTS)),
        ("minScore", minScore, check_finite),
    )
    for key, value, check in checks:
        if value is None:
            continue
        try:
            check(names[key], value)
        except ValueError as exc:
            raise SearchArgumentError(names[key], str(exc)) from None


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
    leaves both out. A bad argument (an empty query, ``maxResults`` below 1, a minScore
    that is not a finite number: ``check_search_arguments``) raises
    ``SearchArgumentError``: it is the caller's mistake, not an outage. Any failure (an
    unusable index, a provider error without a keyword leg to fall back on) yields
    ``{results: [], disabled: true, unavailable: true, error, warning, action}``.
    """
    from memlab.pipeline.presets import openclaw

    check_search_arguments(query, maxResults, minScore)
    try:
        if citations not in CITATION_MODES:
            raise ValueError(f"citations must be one of {', '.join(CITATION_MODES)}")
        p = with_limits(pipeline or openclaw(), maxResults, minScore)
        outcome = search_with_fallback(index, p, query, now=now)
        p = outcome.pipeline
        cs_mode = (
            "hybrid"
            if index.has_vectors and p.vector and p.keyword
            else ("vector" if index.has_vectors and p.vector else "fts-only")
        )
    except Exception as exc:  # the tool must answer, whatever failed
        return unavailable(exc)
    results = result_items(outcome.candidates, outcome.ranking, citations in ("auto", "on"))
    out = {"results": results, **answer_fields(index, outcome, citations, cs_mode)}
    if outcome.notice is not None:
        out["warning"] = outcome.notice
    return out


def search_corpus(
    index: MemoryIndex,
    query: str,
    maxResults: int | None = None,
    minScore: float | None = None,
    corpus: str | None = None,
    *,
    pipeline: Pipeline | None = None,
    citations: str = "auto",
    now: float | None = None,
) -> dict[str, Any]:
    """``memory_search`` with memlab's ``corpus`` argument (``vocab.MCP_CORPORA``):
    ``memory`` / ``sessions`` keep the results of that source only (``in_corpus``, after
    selection, so fewer than ``maxResults`` may come back from an index holding both; an
    index without that source adds a ``warning`` saying so); ``all`` or None keep every
    source. Another corpus raises ``SearchArgumentError``, as a bad argument does."""
    check_search_arguments(query, maxResults, minScore)
    if corpus is not None and corpus not in MCP_CORPORA:
        raise SearchArgumentError(
            "corpus", f"corpus must be one of {', '.join(MCP_CORPORA)}, got {corpus!r}"
        )
    res = memory_search(
        index, query, maxResults, minScore, pipeline=pipeline, citations=citations, now=now
    )
    if corpus in ("memory", "sessions"):
        res["results"] = [r for r in res["results"] if in_corpus(corpus, r.get("source", ""))]
        # A corpus that answered has something to search: only an empty answer is explained
        # (which looks at the transcript folder: no file-system work on every call).
        if not res["results"]:
            from memlab.tools.corpora import empty_corpus_note

            note = empty_corpus_note(index, corpus)
            if note:
                res["warning"] = "; ".join(filter(None, [res.get("warning"), note]))
    return res


def in_corpus(corpus: str | None, source: str) -> bool:
    """Whether a hit of ``source`` (``memory``/``sessions``) is kept for ``corpus``: ``memory``
    and ``sessions`` keep their own source only; None and ``all`` keep every hit. The filter
    runs after the ranking, so a corpus can return fewer than maxResults hits."""
    return corpus not in ("memory", "sessions") or source == corpus


def with_limits(pipeline: Pipeline, maxResults: int | None, minScore: float | None) -> Pipeline:
    """``pipeline`` with a tool call's ``maxResults`` → ``max_results`` (int) and
    ``minScore`` → ``min_score`` (float) applied; None leaves a setting as it is, and with
    neither the pipeline itself is returned."""
    overrides: dict[str, Any] = {}
    if maxResults is not None:
        overrides["max_results"] = int(maxResults)
    if minScore is not None:
        overrides["min_score"] = float(minScore)
    return pipeline.replace(**overrides) if overrides else pipeline


def answer_fields(
    index: MemoryIndex, outcome: SearchOutcome, citations: str, mode: str
) -> dict[str, Any]:
    """The fields of a ``memory_search`` answer after ``results``: ``{provider, model,
    fallback, citations, mode}``. ``provider`` is ``"none"`` without an embedder;
    ``fallback`` is true when the embedder runs a fallback (``fallback_reason`` set) or the
    search fell back to keyword-only (``outcome.warning`` set)."""
    e = index.embedder
    fell_back = getattr(e, "fallback_reason", None) is not None or outcome.warning is not None
    return {
        "provider": e.provider if e is not None else "none",
        "model": index.model,
        "fallback": fell_back,
        "citations": citations,
        "mode": mode,
    }


def result_items(cs: CandidateSet, ranking: Ranking, cite: bool) -> list[dict[str, Any]]:
    """The ``results`` of a ``memory_search`` answer: one ``{path, startLine, endLine,
    score, snippet, source, citation?}`` per returned chunk, sorted by score (descending)
    then path (stable: ties on both keep rank order).

    Built from the ranking's arrays (``memlab.pipeline.explain.result_rows``, the row owner
    that ``ranking_frame`` reads too), not from a results DataFrame: the frame costs more
    than the rest of a warm answer. Only the returned chunks' texts are fetched. ``cite``:
    ``snippet`` gains ``\\n\\nSource: path#L5-L7`` and ``citation`` is set.
    """
    from memlab.pipeline.explain import result_rows

    rows = result_rows(cs, ranking)
    texts = cs.texts(rows["pos"])
    cols = [rows[c].tolist() for c in ("path", "start_line", "end_line", "score", "source")]
    results = []
    for text, path, start, end, score, source in zip(texts, *cols, strict=True):
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
    return results


@dataclass
class SearchOutcome:
    """One search as ``search_with_fallback`` ran it.

    ``pipeline``: the system that produced the results (keyword-only after a provider
    failure); ``candidates`` and ``ranking``: the results as arrays, and what
    ``memlab.pipeline.explain`` needs to account for every candidate; ``warning``: why a
    fallback was taken (None when none was); ``note``: why the keyword leg could not find
    what was asked, when the index is the cause (``textquery.keyword_leg_note``: a short word
    under the trigram tokenizer), else None; ``frame``: the results as a DataFrame
    (``Pipeline.run`` columns with text), built on first access only — the MCP server's
    answer is made from the arrays (``result_items``) and never pays for it.
    """

    pipeline: Pipeline
    candidates: CandidateSet
    ranking: Ranking
    warning: str | None = None
    note: str | None = None

    @property
    def notice(self) -> str | None:
        """The warning and the note, for the tool's ``warning`` field (None when neither)."""
        return "; ".join(filter(None, [self.warning, self.note])) or None

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """``ranking_frame`` of this search, with the returned chunks' texts."""
        from memlab.pipeline.explain import ranking_frame

        return ranking_frame(self.candidates, self.ranking, self.pipeline.name, with_text=True)


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
    error is raised. ``note``: ``textquery.keyword_leg_note`` of the query on this index.
    ``now``: the clock for decay, Unix seconds (None = now).
    """
    from memlab.embed import EmbeddingError
    from memlab.retrieval.textquery import keyword_leg_note
    from memlab.store import IndexCorruptError

    def run(p: Pipeline) -> SearchOutcome:
        cs = p.retrieve(index, [query], qids=["q"], times=None if now is None else [now])
        note = keyword_leg_note(query, index.fts_tokenizer, p.keyword_mode) if p.keyword else None
        return SearchOutcome(p, cs, p.rank(cs), note=note)

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


def keyword_index_note(cause: str) -> str:
    """The notice of an answer from a keyword-only index (``MemoryIndex.keyword_only``)
    because no index with the provider's vectors exists yet: the keyword-only fallback's
    words (``search_with_fallback``) and ``cause``."""
    return (
        f"embedding provider failed, keyword-only results: no index with its vectors yet"
        f" ({cause}); answered from a keyword-only index of the same files"
    )


def mark_fallback(res: dict[str, Any], why: str | None) -> dict[str, Any]:
    """A ``memory_search`` answer marked as a fallback answer (``fallback: true``, ``why``
    first in its ``warning``) when ``why`` is set; the unavailable payload and answers
    without ``results`` are left alone."""
    if why is not None and "results" in res and not res.get("unavailable"):
        res["fallback"] = True
        res["warning"] = "; ".join(filter(None, [why, res.get("warning")]))
    return res


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
    *,
    rules: str = DEFAULT_MEMORY_FILES,
) -> tuple[Path, str] | None:
    """Resolve a ``memory_get`` path to (absolute file, display path), or None if refused.

    Allowed: after lexical normalisation the path lies inside the workspace
    and is ``MEMORY.md``, ``memory.md``, ``dreams.md`` or under ``memory/``, or
    lies inside an extra path; it ends in ``.md``; no component from the
    workspace (or extra path) down is a symlink. Refused: empty or non-string
    paths, NUL bytes, backslashes (Windows separators), ``..`` escapes. Paths
    are never URL-decoded: ``%2e%2e`` is a literal name, not a traversal.
    ``rules`` (``vocab.MEMORY_FILE_RULES``) chooses the root files
    (:func:`get_root_file_allowed`: release 2026.9 opens ``USER.md``, refuses ``memory.md``).
    """
    found = _resolve(workspace, path, extra_paths, rules)
    return None if found is None else (found[0], found[1])


def _resolve(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
    rules: str = DEFAULT_MEMORY_FILES,
) -> tuple[Path, str, Path] | None:
    """(file, display path, folder the file is opened beneath) or None (see above)."""
    found = _resolve_or_refuse(workspace, path, extra_paths, rules)
    return None if isinstance(found, str) else found


def memory_path_refusal(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
    *,
    rules: str = DEFAULT_MEMORY_FILES,
) -> str | None:
    """Which ``memory_get`` rule ``path`` breaks, in words; None when it is allowed.

    The tool answers every refusal with OpenClaw's ``path required`` (spec §8);
    this names the first rule broken, in the order checked: empty, NUL byte,
    backslash, not ``.md``, outside the workspace and every extra path, inside
    the workspace but not ``MEMORY.md``/``memory.md``/``dreams.md`` or under
    ``memory/``, a symlink on the way.
    """
    found = _resolve_or_refuse(workspace, path, extra_paths, rules)
    return found if isinstance(found, str) else None


def _resolve_or_refuse(
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
    rules: str = DEFAULT_MEMORY_FILES,
) -> tuple[Path, str, Path] | str:
    """(file, display path, folder the file is opened beneath), or the rule it breaks."""
    get_root_file_allowed("MEMORY.md", rules)  # an unknown rule name fails here, named
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
            (len(parts) == 1 and get_root_file_allowed(parts[0], rules))
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
        roots_ok = GET_ROOT_FILES_BY_RULES[rules]
        return (
            f"inside the workspace {ws} but not {', '.join(roots_ok[:-1])} or"
            f" {roots_ok[-1]} nor under memory/ (an extra path, --extra PATH, allows more)"
        )
    return f"outside the workspace {ws} and every extra path (--extra PATH allows one)"


def get_root_file_allowed(name: str, rules: str = DEFAULT_MEMORY_FILES) -> bool:
    """Whether ``memory_get`` under ``rules`` opens the workspace-root file ``name``.

    ``openclaw-2026.4``: ``name`` is one of ``GET_ROOT_FILES`` (exact case);
    ``openclaw-2026.9``: ``MEMORY.md`` or ``USER.md`` (exact case) or ``dreams.md`` in any
    case. Unknown ``rules`` → ``ValueError`` naming the allowed ones.
    """
    if rules not in GET_ROOT_FILES_BY_RULES:
        raise ValueError(
            f"memory_files must be one of {', '.join(GET_ROOT_FILES_BY_RULES)}, got {rules!r}"
        )
    return name in GET_ROOT_FILES_BY_RULES[rules] or name.lower() in GET_ROOT_FILES_ANY_CASE.get(
        rules, ()
    )


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


def missing_file_problem(display: str, workspace: str | os.PathLike[str]) -> str:
    """What ``memlab get`` says of a memory file that does not exist: its path, the
    workspace, and the command that lists the files there (both tools' reports)."""
    ws = Path(workspace).expanduser()
    return f"{display}: the file does not exist in {ws} (memlab files {ws} lists them)"


def get_report(
    res: dict[str, Any],
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
    from_: int | None,
    lines: int | None,
) -> tuple[str | None, str | None]:
    """What a person reads of a ``memory_get`` answer (``memlab get``): ``(problem,
    note)``. Problem: a refused path with the rule it broke (``memory_path_refusal``), a
    bad ``--from``/``--lines`` (named as the flag), a read error, a file that does not
    exist; None when the text is the answer. Note: why nothing printed past a file's end."""
    problem: str | None = None
    if "error" in res:
        refusal = memory_path_refusal(workspace, path, extra_paths)
        if res["error"] == PATH_REQUIRED and refusal:
            problem = f"{path or repr(path)}: refused: {refusal}"
        elif res["error"].startswith(("from ", "lines ")):  # name the flag, not the tool field
            got = from_ if res["error"].startswith("from") else lines
            problem = f"--{res['error']}, got {got}"
        else:
            problem = f"{res['path']}: {res['error']}"
    elif res["text"] == "":
        found = resolve_memory_path(workspace, path, extra_paths)
        if found is not None and not os.path.lexists(found[0]):
            problem = missing_file_problem(res["path"], workspace)
    note = None
    if problem is None and res["text"] == "" and from_ is not None:
        # OpenClaw answers "" past the end of a file; a person is told why nothing printed.
        note = f"{res['path']} has no line {from_}"
    return problem, note
