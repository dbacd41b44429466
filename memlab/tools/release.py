"""The agent's tools as OpenClaw 2026.9.6 answers them (spec ``openclaw-current.md`` §11).

``memory_search`` gains the ``corpus`` argument (``memory``, ``wiki``, ``all``,
``sessions``) and per-result ``vectorScore``/``textScore`` (hybrid), ``importance``,
``triggers``, ``projectKey`` and ``corpus``; ``memory_get`` reads a bounded window (120
lines, 12,000 UTF-16 units by default) with a ``from=N`` continuation notice, opens
``USER.md`` and refuses root ``memory.md``, and answers with a ``status``.

Which rules apply is a property of the system being run: ``memlab.tools.variants`` reads
the pipeline's ``memory_files`` (``vocab.MEMORY_FILE_RULES``); ``openclaw-2026.9`` takes
the functions here, anything else the 2026-04 ones of :mod:`memlab.tools` (unchanged). Which
files ``memory_get`` may open has one owner, ``memlab.tools.get_root_file_allowed``.
memlab registers no compiled-wiki supplements, so ``wiki`` is always "not registered",
as the release reports it when no plugin supplies one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memlab.chunking.annotations import strip_annotations
from memlab.chunking.release import utf16_prefix
from memlab.config.vocab import (
    CITATION_MODES,
    OPENCLAW_CURRENT_CORPORA,
    OPENCLAW_CURRENT_GET_CORPORA,
)
from memlab.files.workspace import MemoryFileError, read_memory_file
from memlab.retrieval.rerank import snippet as make_snippet
from memlab.retrieval.textquery import utf16_len
from memlab.tools import (
    SearchArgumentError,
    answer_fields,
    check_search_arguments,
    citation,
    in_corpus,
    memory_path_refusal,
    missing_file_problem,
    resolve_memory_path,
    search_with_fallback,
    unavailable,
    with_limits,
)

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline
    from memlab.store import MemoryIndex

__all__ = [
    "DEFAULT_GET_LINES",
    "DEFAULT_GET_MAX_CHARS",
    "RELEASE_RULES",
    "continuation_notice",
    "corpus_answer",
    "get_report",
    "memory_get",
    "memory_search",
    "read_window",
]

RELEASE_RULES = "openclaw-2026.9"
DEFAULT_GET_LINES = 120
DEFAULT_GET_MAX_CHARS = 12_000
SNIPPET_CHARS = 700
NOT_ALLOWED = "path is not an allowed Markdown memory file"
NOT_ALLOWED_CODE = "MEMORY_PATH_NOT_ALLOWED"
READ_FAILED_CODE = "MEMORY_READ_FAILED"
WIKI_NOT_REGISTERED = "Wiki corpus is not registered; results do not cover that requested corpus."
# The release's names of the three ranking modes (Pipeline.mode: hybrid / vector / keyword).
MODES = {"hybrid": "hybrid", "vector": "vector-only", "keyword": "keyword-only"}


def continuation_notice(next_from: int | None, suggest_read: bool = False) -> str:
    """The notice appended to a truncated ``memory_get`` excerpt.

    ``"\\n\\n[More content available. Use from=N to continue.]"`` when a next line exists;
    ``"\\n\\n[More content available. Requested excerpt exceeded the default maxChars
    budget.]"`` when one line alone overflowed the budget (``next_from`` None). With
    ``suggest_read`` (a workspace file whose single line was cut) the sentence
    ``" If you need the full raw line, use read on the source file."`` goes before the
    closing bracket.
    """
    base = (
        f"[More content available. Use from={next_from} to continue."
        if next_from is not None
        else "[More content available. Requested excerpt exceeded the default maxChars budget."
    )
    tail = " If you need the full raw line, use read on the source file." if suggest_read else ""
    return f"\n\n{base}{tail}]"


def read_window(
    content: str,
    path: str,
    from_: int | None = None,
    lines: int | None = None,
    *,
    max_chars: int = DEFAULT_GET_MAX_CHARS,
    default_lines: int = DEFAULT_GET_LINES,
    suggest_read: bool = True,
) -> dict[str, Any]:
    """The release's bounded excerpt of ``content``: ``{status: "ok", text, path, from,
    lines, truncated?, nextFrom?}``.

    Lines are ``content.split("\\n")`` without a final empty one; ``from`` defaults to 1,
    ``lines`` to ``default_lines`` (120). Whole lines are kept while the joined text stays
    within ``max_chars`` UTF-16 units (the first line always: a first line longer than the
    budget is cut to it, never splitting a surrogate pair, and gets the no-``from`` notice).
    ``truncated`` when lines were dropped for the budget or the file goes on past the
    window; ``nextFrom`` = from + lines kept, unless one line was cut. The notice
    (:func:`continuation_notice`) is appended to a non-empty truncated text; ``lines``
    counts the lines kept. Past the end: ``text ""``, ``lines 0``, not truncated.
    """
    file_lines = content.split("\n")
    if file_lines and file_lines[-1] == "":
        file_lines.pop()
    start = max(1, int(from_ if from_ is not None else 1))
    count = max(1, int(lines if lines is not None else default_lines))
    selected = file_lines[start - 1 : start - 1 + count]
    more_remain = start - 1 + len(selected) < len(file_lines)
    budget = max(1, int(max_chars))
    kept, chars = 0, 0
    for line in selected:
        nxt = chars + utf16_len(line) + (1 if kept else 0)
        if kept and nxt > budget:
            break
        kept, chars = kept + 1, nxt
    text = utf16_prefix("\n".join(selected[:kept]), budget)
    one_line_cut = chars > budget
    next_from = start + kept if not one_line_cut and (more_remain or kept < len(selected)) else None
    truncated = one_line_cut or kept < len(selected) or more_remain
    if truncated and (text or one_line_cut):
        text += continuation_notice(next_from, one_line_cut and suggest_read)
    out: dict[str, Any] = {"status": "ok", "text": text, "path": path, "from": start}
    out["lines"] = kept
    if truncated:
        out["truncated"] = True
    if next_from is not None:
        out["nextFrom"] = next_from
    return out


def _read_error(path: str, error: str, code: str = READ_FAILED_CODE) -> dict[str, Any]:
    return {"path": path, "text": "", "status": "error", "code": code, "error": error}


def _corpora(*attempts: dict[str, Any]) -> dict[str, Any]:
    """Per-corpus outcomes (wiki last) and, for a lone unregistered wiki, its warning."""
    ordered = sorted(attempts, key=lambda a: a["corpus"] == "wiki")
    warnings = [
        f"{'Memory' if a['corpus'] == 'memory' else 'Wiki'} corpus {a['outcome']}: {a['error']}"
        for a in ordered
        if "error" in a
    ]
    if len(ordered) == 1 and ordered[0]["outcome"] == "not-registered":
        warnings.append(WIKI_NOT_REGISTERED)
    out: dict[str, Any] = {"corpora": ordered}
    if warnings:
        out["warning"] = " ".join(warnings)
    errors = [a["error"] for a in ordered if "error" in a]
    if errors:
        out["error"] = "; ".join(errors)
    return out


def _read_memory(
    workspace: str | os.PathLike[str],
    path: str,
    from_: int | None,
    lines: int | None,
    extra_paths: Sequence[str | os.PathLike[str]],
    max_chars: int,
) -> dict[str, Any]:
    """The memory corpus's answer: ok window, not_found, or error with code."""
    if not isinstance(path, str) or not path.strip():
        return _read_error(path if isinstance(path, str) else "", "path required")
    found = resolve_memory_path(workspace, path, extra_paths, rules=RELEASE_RULES)
    if found is None:
        return _read_error(path, NOT_ALLOWED, NOT_ALLOWED_CODE)
    abspath, display = found
    if not os.path.lexists(abspath):
        return {"status": "not_found", "text": "", "path": display}
    # A workspace file (not an extra path) may suggest reading a cut line in full; its read
    # checks every folder below the workspace for symlinks (a folder swapped after the check).
    inside = not display.startswith("../") and not os.path.isabs(display)
    root = os.path.realpath(os.path.expanduser(workspace)) if inside else None
    try:
        text = read_memory_file(abspath, display, root=root).text
    except MemoryFileError as exc:
        return _read_error(display, exc.reason)
    return read_window(text, display, from_, lines, max_chars=max_chars, suggest_read=inside)


def memory_get(
    workspace: str | os.PathLike[str],
    path: str,
    from_: int | None = None,
    lines: int | None = None,
    *,
    extra_paths: Sequence[str | os.PathLike[str]] = (),
    corpus: str | None = None,
    max_chars: int = DEFAULT_GET_MAX_CHARS,
) -> dict[str, Any]:
    """Answer a release ``memory_get`` call (spec §11).

    Allowed: ``MEMORY.md``, ``USER.md``, ``dreams.md`` (any case), ``memory/**`` and extra
    paths, ``.md`` only; root ``memory.md`` and anything else → ``{path, text: "", status:
    "error", code: "MEMORY_PATH_NOT_ALLOWED", error: "path is not an allowed Markdown
    memory file"}``. Missing → ``{status: "not_found", text: "", path}``; found → the
    window of :func:`read_window`. ``from``/``lines`` must be integers ≥ 1 (else an error
    status). ``corpus``: ``memory`` or None read the file; ``wiki`` → ``{path, text: "",
    corpora: [{corpus: "wiki", outcome: "not-registered"}], warning}``; ``all`` → the file's
    answer plus ``corpora`` for memory and wiki; another value → an error status.
    """
    shown = path if isinstance(path, str) else ""
    if corpus is not None and corpus not in OPENCLAW_CURRENT_GET_CORPORA:
        allowed = ", ".join(OPENCLAW_CURRENT_GET_CORPORA)
        return _read_error(shown, f"corpus must be one of: {allowed}")
    for name, value in (("from", from_), ("lines", lines)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            return _read_error(shown, f"{name} must be an integer >= 1, got {value!r}")
    wiki = {"corpus": "wiki", "outcome": "not-registered"}
    if corpus == "wiki":
        return {"path": shown, "text": "", **_corpora(wiki)}
    res = _read_memory(workspace, path, from_, lines, extra_paths, max_chars)
    if corpus != "all":
        return res
    if res["status"] == "error":
        memory = {"corpus": "memory", "outcome": "unavailable", "error": res["error"]}
        return {"status": "error", "path": shown, "text": "", **_corpora(memory, wiki)}
    return {**res, **_corpora({"corpus": "memory", "outcome": "ok"}, wiki)}


def _sessions_disabled() -> dict[str, Any]:
    out = unavailable(RuntimeError("Session transcript search is not enabled."))
    out["error"] = "Session transcript search is not enabled."
    out["warning"] = "session transcripts are not indexed for this workspace"
    out["action"] = "index the sessions source (memory.search.sources) or search corpus=memory"
    return out


def corpus_answer(index: MemoryIndex, corpus: str | None) -> dict[str, Any] | None:
    """The answer ``memory_search`` gives for ``corpus`` without searching, or None to search.

    ``wiki`` → ``{results: [], corpora: [wiki not-registered], warning}`` (no ``citations``:
    the caller adds it); ``sessions`` on an index without the sessions source → the
    unavailable payload with error "Session transcript search is not enabled."; None,
    ``memory``, ``all`` and ``sessions`` on an index that holds sessions → None. Another
    value raises ``ValueError`` naming the allowed corpora. One owner for ``memory_search``
    and ``memlab search``'s plain, ``--explain`` and ``--json`` output.
    """
    if corpus is not None and corpus not in OPENCLAW_CURRENT_CORPORA:
        raise SearchArgumentError(
            "corpus",
            f"corpus must be one of: {', '.join(OPENCLAW_CURRENT_CORPORA)}, got {corpus!r}",
        )
    if corpus == "wiki":
        return {"results": [], **_corpora({"corpus": "wiki", "outcome": "not-registered"})}
    if corpus == "sessions" and "sessions" not in index.sources:
        return _sessions_disabled()
    return None


def memory_search(
    index: MemoryIndex,
    query: str,
    maxResults: int | None = None,
    minScore: float | None = None,
    corpus: str | None = None,
    *,
    pipeline: Pipeline,
    citations: str = "auto",
    now: float | None = None,
) -> dict[str, Any]:
    """Answer a release ``memory_search`` call (spec §11).

    ``{results: [{path, startLine, endLine, score, vectorScore, textScore, snippet,
    source, importance?, triggers?, projectKey?, corpus, citation?}], provider, model,
    fallback, citations, mode, corpora?, warning?}`` in the ranking's order;
    ``vectorScore``/``textScore`` only in hybrid mode (a leg that missed the chunk: 0);
    ``importance``/``triggers``/``projectKey`` only when the chunk carries them;
    ``corpus`` = the result's source; ``mode`` hybrid, keyword-only or vector-only.
    Snippets: the first 700 UTF-16 units with annotation comments removed; citations
    ``on``/``auto`` append ``"\\n\\nSource: path#L5-L7"`` after trimming the snippet's end.
    ``corpus``: None/``all``/``memory`` search the memory files (``memory`` keeps memory
    hits only, ``all`` adds ``corpora`` for memory and the unregistered wiki);
    ``sessions`` keeps session hits, or answers unavailable when the index holds no
    sessions; ``wiki`` → no results with the not-registered warning. A bad argument (another
    corpus, an empty query, ``maxResults`` below 1: ``memlab.tools.check_search_arguments``)
    raises ``SearchArgumentError``; any other failure → the unavailable payload
    (``memlab.tools.unavailable``).
    """
    check_search_arguments(query, maxResults, minScore)
    early = corpus_answer(index, corpus)  # an unknown corpus: SearchArgumentError
    try:
        if citations not in CITATION_MODES:
            raise ValueError(f"citations must be one of {', '.join(CITATION_MODES)}")
        if early is not None:
            if corpus == "wiki":  # the release's key order: results, citations, corpora
                early = {"results": [], "citations": citations, **early}
            return early
        p = with_limits(pipeline, maxResults, minScore)
        outcome = search_with_fallback(index, p, query, now=now)
    except Exception as exc:  # the tool must answer, whatever failed
        return unavailable(exc)
    df = outcome.frame
    mode = MODES.get(df.attrs.get("mode", ""), "keyword-only")
    table = outcome.candidates.table
    notes = {
        "importance": getattr(table, "importance", None),
        "triggers": getattr(table, "triggers", None),
        "projectKey": getattr(table, "project_keys", None),
    }
    cite = citations in ("auto", "on")
    results = []
    cols = ("path", "start_line", "end_line", "score", "vector_score", "text_score")
    rows = zip(*(df[c].tolist() for c in (*cols, "text", "source", "pos")), strict=True)
    for path, start, end, score, vec, txt, text, source, pos in rows:
        if not in_corpus(corpus, source):
            continue
        item: dict[str, Any] = {
            "path": path,
            "startLine": int(start),
            "endLine": int(end),
            "score": float(score),
        }
        if mode == "hybrid":
            item["vectorScore"] = 0.0 if vec != vec else float(vec)  # NaN: the leg missed it
            item["textScore"] = 0.0 if txt != txt else float(txt)
        item["snippet"] = strip_annotations(make_snippet(text, SNIPPET_CHARS))
        item["source"] = source
        for key, column in notes.items():
            value = None if column is None else column[int(pos)]
            if key == "importance" and value is not None and value == value:
                item[key] = int(value)  # the release's 1–10 integer (NaN: none, left out)
            elif key != "importance" and isinstance(value, str) and value.strip():
                item[key] = value.strip()
        item["corpus"] = source
        if cite:
            c = citation(path, int(start), int(end))
            item["snippet"] = f"{item['snippet'].rstrip()}\n\nSource: {c}"
            item["citation"] = c
        results.append(item)
    out = {"results": results, **answer_fields(index, outcome, citations, mode)}
    if corpus == "all":
        out.update(
            _corpora(
                {"corpus": "memory", "outcome": "ok"},
                {"corpus": "wiki", "outcome": "not-registered"},
            )
        )
    if outcome.notice is not None:
        out["warning"] = outcome.notice
    return out


def get_report(
    res: dict[str, Any],
    workspace: str | os.PathLike[str],
    path: str,
    extra_paths: Sequence[str | os.PathLike[str]],
    from_: int | None,
    lines: int | None,
) -> tuple[str | None, str | None]:
    """What a person reads of a release ``memory_get`` answer (``memlab get``): ``(problem,
    note)``. Problem: a refused path with the rule it broke (``memory_path_refusal`` under
    the release's rules), an error status, a file that does not exist, a corpus that found
    nothing; None when the text is the answer. Note: why nothing printed past a file's
    end (the window's ``from``)."""
    status = res.get("status")
    problem: str | None = None
    if status == "error" and res.get("code") == NOT_ALLOWED_CODE:
        why = memory_path_refusal(workspace, path, extra_paths, rules=RELEASE_RULES)
        problem = f"{path or repr(path)}: refused ({res['error']}): {why}"
    elif status == "error":
        problem = f"{res['path']}: {res['error']}"
    elif status == "not_found":
        problem = missing_file_problem(res["path"], workspace)
    elif status is None:
        problem = res.get("warning") or f"{path}: nothing found"
    note = None
    if problem is None and res["text"] == "":
        note = f"{res['path']} has no line {res['from']}"
    return problem, note
