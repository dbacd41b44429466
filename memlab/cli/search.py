"""``memlab search``: its options, the pipeline from a preset or ``--config``,
sync-or-warn, the results table, ``--json`` and the ``--explain`` / ``--dropped`` accounting.

The options come in three groups in ``--help``: what to search (the workspace, the query,
the corpus, the index and config options), how to rank (``--preset``, memory_search's
``--max-results`` / ``--min-score``, the decay clock ``--now``, and every other pipeline
parameter as ``--set KEY=VALUE``), what to print (``--json``, ``--explain`` ...).

Module-level imports stay light (the engine is imported inside the functions).

``cmd_search`` is one pass: arguments → config and system (``read_request``) → index and
sync → search (``answer_query``) → print (``print_answer``).

Size: one command whose parts change together: its options (``add_parser``,
``set_overrides``), its system (``build_pipeline``, ``parse_now``), its sync rule
(``memlab.cli.common.sync_for_search``) and its outputs (``print_answer``: the table, ``--json``,
``_print_explain``); a new pipeline parameter or explain column touches several at once.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from memlab.cli.common import (
    add_index_options,
    format_table,
    load_config,
    load_preset_file,
    open_index,
    parse_set,
    print_json,
    quoted,
    score_texts,
    sync_for_search,
)
from memlab.config.vocab import CITATION_MODES, OPENCLAW_CURRENT_CORPORA
from memlab.errors import CliError, nearest_name

__all__ = [
    "SearchAnswer",
    "SearchRequest",
    "add_parser",
    "add_preset_file_argument",
    "answer_query",
    "build_pipeline",
    "cmd_search",
    "fill_index_options",
    "parse_now",
    "print_answer",
    "read_request",
    "set_overrides",
]

# Ranking flags that became ``--set`` keys (``--vector-weight 0.5`` = ``--set
# vector_weight=0.5``); still accepted, hidden from the help, with a note.
MOVED_TO_SET = {
    "--vector-weight": "vector_weight",
    "--text-weight": "text_weight",
    "--candidate-multiplier": "candidate_multiplier",
}
# The ranking flags of their own (memory_search's arguments): they win over ``--set``.
RANKING_FLAGS = ("max_results", "min_score")


class _MovedToSet(argparse.Action):
    """A flag of `MOVED_TO_SET`: appended to ``--set`` as ``KEY=VALUE``, with a note."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        item = f"{self.dest}={values}"
        namespace.set = [*(getattr(namespace, "set", None) or []), item]
        print(f"memlab: note: {option_string} is now --set {item}", file=sys.stderr)


def add_parser(sub: Any) -> None:
    """Register ``search`` on the ``memlab`` subparsers, its options grouped: what to
    search, how to rank, what to print."""
    p = sub.add_parser(
        "search", help="search a workspace (syncs changed files first; --no-sync to skip)"
    )
    what = p.add_argument_group("what to search")
    what.add_argument("workspace", help="the workspace folder (MEMORY.md, memory/ ...)")
    what.add_argument("query", help="the search text (memory_search's query)")
    what.add_argument(
        "--corpus",
        choices=OPENCLAW_CURRENT_CORPORA,
        default=None,
        help="memory_search's corpus argument (plain, --explain and --json output alike):"
        " memory, sessions or all keep those hits; wiki needs the 2026.9.6 release's tools"
        " (--preset openclaw-current)",
    )
    what.add_argument(
        "--no-sync",
        action="store_true",
        help="do not sync changed files first; name the stale files on stderr instead",
    )
    rank = p.add_argument_group("how to rank")
    rank.add_argument(
        "--preset",
        default=None,
        help="openclaw (default; with --config: the config's own query settings),"
        " openclaw-latest, openclaw-current (alias openclaw-2026.9: release 2026.9.6), wsum,"
        " rrf, qmd-like, vector, bm25, memlab-best, memlab-best-chunk",
    )
    add_preset_file_argument(rank)
    rank.add_argument(
        "--max-results",
        type=int,
        dest="max_results",
        metavar="N",
        help="memory_search's maxResults (default: the preset's or the config's)",
    )
    rank.add_argument(
        "--min-score",
        type=float,
        dest="min_score",
        metavar="SCORE",
        help="memory_search's minScore (default: the preset's or the config's)",
    )
    rank.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other pipeline parameter, over the preset (repeatable): e.g."
        " vector_weight=0.5, text_weight=0.5, candidate_multiplier=8, mmr=jaccard,"
        " decay=exact (docs/presets.md, Parameters; an unknown key lists them all)",
    )
    rank.add_argument(
        "--now",
        default=None,
        metavar="WHEN",
        help="the clock for temporal decay: Unix seconds, YYYY-MM-DD or an ISO datetime"
        " (default: now)",
    )
    for flag, key in MOVED_TO_SET.items():
        rank.add_argument(
            flag,
            dest=key,
            type=float,
            action=_MovedToSet,
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )
    out = p.add_argument_group(
        "what to print", "default: a table (rank, score, path#lines, snippet)"
    )
    out.add_argument("--json", action="store_true", help="the memory_search tool's JSON")
    out.add_argument(
        "--citations",
        choices=CITATION_MODES,
        default="auto",
        help="with --json: each result's citation (OpenClaw's memory citations setting;"
        " default auto)",
    )
    out.add_argument(
        "--explain",
        action="store_true",
        help="every term of every score (they add up) and how many candidates were dropped",
    )
    out.add_argument(
        "--dropped",
        "--all",
        dest="dropped",
        action="store_true",
        help="with --explain (implied): list every dropped candidate, its scores and why",
    )
    out.add_argument("--width", type=int, default=80, help="snippet width in the table")
    add_index_options(p, "what to search: the index and the config (each flag wins over --config)")
    p.set_defaults(func=cmd_search)


def add_preset_file_argument(p: Any, what: str = "the system") -> None:
    """``--preset-file FILE`` on a parser or group: a preset file (``memlab export --target
    mcp``) as ``what``, checked before anything else runs."""
    p.add_argument(
        "--preset-file",
        default=None,
        metavar="FILE",
        help=f"{what}: a preset file (JSON, written by memlab export --target mcp): its base"
        " preset and every parameter, checked as strictly as --set; its index options"
        " (chunker, embedder) fill the flags not given; not with --preset",
    )


def set_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The pipeline parameters ``args`` sets: its ``--set`` items (`parse_set`), then the
    ranking flags of their own (`RANKING_FLAGS`), which win. A key that is no parameter of
    a `Pipeline` is a ``CliError`` naming it, the closest key and every allowed key."""
    from memlab.pipeline import Pipeline

    overrides = parse_set(getattr(args, "set", None) or [])
    allowed = sorted(Pipeline().get_params())
    for key in overrides:
        if key not in allowed:
            close = nearest_name(key, allowed)
            raise CliError(
                f"--set {key}: not a pipeline parameter"
                + (f" (did you mean {close}?)" if close else "")
                + f"; allowed keys: {', '.join(allowed)}"
            )
    for name in RANKING_FLAGS:
        v = getattr(args, name, None)
        if v is not None:
            overrides[name] = v
    return overrides


def build_pipeline(args: argparse.Namespace, cfg: Any = None, preset_file: Any = None) -> Any:
    """The system ``memlab search`` runs: ``--preset-file`` (``preset_file``, else read here:
    `memlab.cli.common.load_preset_file`), ``--preset`` (default ``openclaw``), or, with
    ``--config`` and no ``--preset``, the config's own query settings
    (``pipeline.from_config``) — for an OpenClaw 2026.9.6 config (``memory.search``) the
    ``openclaw-current`` preset with its maxResults/minScore; then `set_overrides` (the
    ``--set`` items, then ``--max-results`` / ``--min-score``, which win). An unknown key
    or an invalid value is a ``CliError`` (exit 2)."""
    from memlab.pipeline.presets import preset

    pf = preset_file if preset_file is not None else load_preset_file(args)
    overrides = set_overrides(args)
    try:
        if pf is not None:
            return pf.pipeline.replace(**overrides) if overrides else pf.pipeline
        if args.preset is None and getattr(args, "config", None):
            # the system the file describes (memlab.config.load.config_system): a 2026-04
            # file's query settings, or the release itself for a memory.search file
            from memlab.config.load import config_system

            return config_system(cfg if cfg is not None else load_config(args), overrides)
        return preset(args.preset or "openclaw", **overrides)
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def parse_now(raw: str) -> float:
    """``--now``: Unix seconds (``1736467200``), an ISO date (``2025-01-10``, midnight UTC)
    or an ISO datetime (``2025-01-10T09:30``, ``...+02:00``; naive = UTC) → Unix seconds."""
    from datetime import UTC, datetime

    try:
        return float(raw)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise CliError(
            f"--now {raw!r} is not a date: give Unix seconds, YYYY-MM-DD or an ISO datetime"
            " (YYYY-MM-DDTHH:MM[:SS][+HH:MM])"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)  # dated memory files are midnight UTC too
    return dt.timestamp()


def _cell(c: str, v: Any) -> str:
    """One explain cell: ``-`` for an absent value (NaN, rank −1), floats to 4 places."""
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if c in ("vector_rank", "text_rank", "mmr_position"):
        return "-" if int(v) < 0 else str(int(v))
    if c == "tier":  # path_specificity 0–3, a float in the frame only because of NaN
        return str(int(v))
    if c == "decay" and isinstance(v, float) and 0 < v < 1e-3:
        return f"{v:.3g}"  # a multiplier like 1.2e-07 must not print as 0.0000
    return f"{v:.4f}" if isinstance(v, float) else str(v)


@dataclass
class SearchRequest:
    """What ``memlab search`` was asked, read once from its arguments (`read_request`): the
    checked query, the system to run (preset file, preset or config, then ``--set``), the
    config both the system and the index read, the clock and the output wanted."""

    query: str
    pipeline: Any
    config: Any
    corpus: str | None
    now: float | None
    explaining: bool  # --explain or --dropped
    dropped: bool
    json: bool
    citations: Any
    width: int


@dataclass
class SearchAnswer:
    """What one search found (`answer_query`), for `print_answer`: the tool's own JSON
    answer (``tool``: ``--json`` without explain, or a corpus answer with ``--json``), the
    answer of a corpus that searches nothing (``corpus``), or the result frame with its
    explanation; the system that answered (after any fallback) and the index searched."""

    pipeline: Any
    searched: Any
    tool: dict[str, Any] | None = None
    corpus: dict[str, Any] | None = None
    frame: Any = None
    explained: Any = None
    warning: str | None = None
    note: str | None = None


def fill_index_options(args: argparse.Namespace, pipeline: Any) -> None:
    """The index options the command line left unset, taken from the system: its FTS
    tokenizer (a preset tuned on its own tokenizer, ``memlab-best``: porter) and its
    memory-file rule (``openclaw-current``: the 2026.9 release's files). What ``memlab
    search`` and ``memlab mcp`` both do before opening the index."""
    spec = pipeline.retrieval_spec()
    if spec.fts_tokenizer and args.fts_tokenizer is None:
        args.fts_tokenizer = spec.fts_tokenizer
    if getattr(args, "memory_files", None) is None:
        args.memory_files = spec.memory_files


def read_request(args: argparse.Namespace) -> SearchRequest:
    """Arguments → `SearchRequest`: the query and limits checked by the tools' rule (with
    the command line's names), then the preset file, the config (read once) and the
    system; the system's FTS tokenizer and memory-file rule fill the index options not
    given (``memlab-best``: porter; ``openclaw-current``: the release's files). Every
    problem is a ``CliError`` before any index is opened."""
    from memlab.tools import CLI_ARGUMENT_NAMES, SearchArgumentError, check_search_arguments

    try:  # the tools' rule, with the command line's names for the arguments
        check_search_arguments(
            args.query, args.max_results, args.min_score, names=CLI_ARGUMENT_NAMES
        )
    except SearchArgumentError as exc:
        raise CliError(str(exc)) from None
    pf = load_preset_file(args)  # checked first: before the config, before any index
    cfg = load_config(args)  # read once: the pipeline and the index both use it
    pipeline = build_pipeline(args, cfg, pf)
    fill_index_options(args, pipeline)
    return SearchRequest(
        query=args.query,
        pipeline=pipeline,
        config=cfg,
        corpus=getattr(args, "corpus", None),
        now=parse_now(args.now) if args.now is not None else None,
        explaining=bool(args.explain or args.dropped),
        dropped=bool(args.dropped),
        json=bool(args.json),
        citations=args.citations,
        width=args.width,
    )


def answer_query(index: Any, req: SearchRequest, no_sync: bool) -> SearchAnswer:
    """Index and sync → search → `SearchAnswer`, inside the open ``index``: sync or warn
    (`memlab.cli.common.sync_for_search`, which may hand back a keyword-only index and system), the
    corpus rule of the system's tools (``memlab.tools.variants``: a corpus the tools do
    not take is a ``CliError``; one that searches nothing answers as the tool does), then
    one search with OpenClaw's fallbacks (``memlab.tools.search_with_fallback``) and, when
    asked, every candidate's account (``memlab.pipeline.explain``), restricted to the
    corpus."""
    from memlab.pipeline.explain import explain
    from memlab.tools import SearchArgumentError, in_corpus, mark_fallback, search_with_fallback
    from memlab.tools.variants import tool_variant

    searched, pipeline, why = sync_for_search(index, no_sync, req.pipeline)
    corpus = req.corpus
    variant = tool_variant(pipeline)  # the tools of the system's memory-file rule
    if corpus is not None and corpus not in variant.corpora:
        raise CliError(
            f"--corpus {corpus}: {pipeline.name} answers with the {variant.rules} tools,"
            f" whose memory_search takes {', '.join(variant.corpora)}; " + corpus_hint(corpus)
        )
    try:
        early = variant.corpus_answer(searched, corpus)
    except SearchArgumentError as exc:
        raise CliError(str(exc)) from None
    if req.json and (early is not None or not req.explaining):
        # the tool's own answer (with --explain too when the corpus searches nothing: no
        # candidates to explain)
        tool = variant.search(
            searched,
            req.query,
            None,
            None,
            corpus,
            pipeline=pipeline,
            citations=req.citations,
            now=req.now,
        )
        return SearchAnswer(pipeline, searched, tool=mark_fallback(tool, why))
    if early is not None:
        return SearchAnswer(pipeline, searched, corpus=early)
    out = search_with_fallback(searched, pipeline, req.query, now=req.now)
    warning = why if why is not None else out.warning  # the keyword-only index answered
    ex = explain(out.pipeline, out.candidates, out.ranking) if req.explaining else None
    df = out.frame
    if corpus is not None:
        df = df[[in_corpus(corpus, s) for s in df["source"]]]
        if ex is not None:
            outside = ex["source"].map(lambda s: not in_corpus(corpus, s)).astype(bool)
            other = (ex["fate"] == "returned") & outside
            ex.loc[other, "fate"] = "dropped"
            ex.loc[other, "reason"] = f"not in corpus {corpus}"
    return SearchAnswer(
        out.pipeline, searched, frame=df, explained=ex, warning=warning, note=out.note
    )


def cmd_search(args: argparse.Namespace) -> int:
    """Search a workspace in one pass: arguments → config and system (`read_request`) →
    index and sync → search (`answer_query`) → print (`print_answer`)."""
    req = read_request(args)
    index = open_index(args, req.config)
    if not req.pipeline.keyword and not index.has_vectors:
        raise CliError(
            f"{req.pipeline.name} reads only the vector leg, but this index has no embedder"
            " (--embedder none): choose an embedder, or a preset with a keyword leg"
            " (openclaw, bm25, ...)"
        )
    with index:
        answer = answer_query(index, req, args.no_sync)
    return print_answer(answer, req)


def print_answer(answer: SearchAnswer, req: SearchRequest) -> int:
    """Print a `SearchAnswer`: the tool's JSON; a corpus that searches nothing as the tool
    answers it; ``--json --explain``'s candidates; else the results table (or "no results"
    with why: an empty corpus, or the threshold) followed by the ``--explain`` tables.
    Notes (a fallback, the keyword leg's note) go to stderr. Returns the exit code, 0."""
    from memlab.retrieval.rerank import snippet
    from memlab.stages.floor import keeps_every_score
    from memlab.tools.corpora import empty_corpus_note

    p = answer.pipeline
    if answer.tool is not None:
        if answer.tool.get("warning"):
            print(f"memlab: note: {answer.tool['warning']}", file=sys.stderr)
        print_json(answer.tool)
        return 0
    if answer.corpus is not None:
        # plain and --explain output answer a corpus as the system's tool does
        # (memlab.tools.variants owns the rules): wiki and a sessions corpus the index
        # does not hold search nothing; memory/sessions keep their own hits
        return _print_corpus_answer(answer.corpus, req.query, p.name, req.corpus or "")
    df, ex = answer.frame, answer.explained
    # the note on the keyword leg goes into the "no results" line when nothing came back
    for said in (answer.warning, answer.note if not df.empty else None):
        if said:
            print(f"memlab: note: {said}", file=sys.stderr)
    if req.json:
        assert ex is not None
        rows = ex if req.dropped else ex[ex["fate"] == "returned"]
        print_json(
            {
                "system": p.name,
                "mode": ex.attrs["mode"],
                "formula": ex.attrs["formula"],
                "fallback": answer.warning is not None,
                **({"warning": answer.warning} if answer.warning else {}),
                # NaN (a leg that did not find the chunk) as null: valid JSON.
                "candidates": rows.drop(columns=["pos"])
                .astype(object)
                .where(rows.drop(columns=["pos"]).notna(), None)
                .to_dict(orient="records"),
            }
        )
        return 0
    if df.empty:
        hints = [p.name]
        empty = empty_corpus_note(answer.searched, req.corpus)
        if empty:  # nothing to search in that corpus: no threshold advice
            hints.append(empty)
        elif not keeps_every_score(p):  # one rule for "no threshold" (memlab.stages.floor)
            fix = "try --min-score 0" if p.min_score > 0 else "try a lower --min-score"
            hints.append(f"minScore {p.min_score:g}: {fix}")
        if answer.note:
            hints.append(answer.note)
        print(f"no results for {quoted(req.query)} ({'; '.join(hints)})")
    else:
        rows = []
        scores = score_texts(df["score"].tolist())  # enough digits to tell scores apart
        for r, score in zip(df.itertuples(index=False), scores, strict=True):
            line = " ".join(snippet(r.text, 200).split())
            rows.append(
                {
                    "#": r.rank + 1,
                    "score": score,
                    "where": f"{r.path}#L{r.start_line}-L{r.end_line}",
                    "snippet": line[: req.width] + ("…" if len(line) > req.width else ""),
                }
            )
        print(format_table(rows, ["#", "score", "where", "snippet"]))
    if ex is not None:
        _print_explain(ex, p, req.dropped)
    return 0


def corpus_hint(corpus: str) -> str:
    """Which presets answer with tools that take ``corpus`` (``memlab.tools.variants``)."""
    from memlab.pipeline.presets import PRESETS
    from memlab.tools.variants import TOOL_VARIANTS

    rules = {v.rules for v in TOOL_VARIANTS.values() if corpus in v.corpora}
    names = [n for n, make in PRESETS.items() if make().memory_files in rules]
    return f"choose one of {', '.join(names)} with --preset" if names else "no preset takes it"


def _print_corpus_answer(early: dict[str, Any], query: str, name: str, corpus: str) -> int:
    """Plain and ``--explain`` output for a corpus that searches nothing (``corpus_answer``):
    "no results" with the tool's error (or warning) on stdout, the warning and the action
    on stderr; exit 0, as ``--json`` (the tool answers, it does not fail)."""
    why = early.get("error") or early.get("warning", "")
    if early.get("warning"):
        print(f"memlab: note: {early['warning']}", file=sys.stderr)
    if early.get("action"):
        print(f"memlab: hint: {early['action']}", file=sys.stderr)
    print(f"no results for {quoted(query)} ({name}; corpus {corpus}: {why})")
    return 0


def _print_explain(ex: Any, p: Any, dropped: bool) -> None:
    """The ``--explain`` tables: every term of every returned score (they add up:
    score = (vector_term + text_term + other) × decay + neighbor), then the dropped
    candidates with their reason (``--dropped``) or how many there are."""
    print(f"\nexplain ({p.name}; mode {ex.attrs['mode']}): {ex.attrs['formula']}")
    cols = ["vector_score", "vector_rank", "vector_norm", "vector_term"]
    cols += ["text_raw", "text_rank", "text_norm", "text_term"]
    if (ex["other"].fillna(0).abs() > 1e-12).any():
        cols.append("other")
    cols += ["fused", "decay"]
    if getattr(p, "neighbor_prev", 0) or getattr(p, "neighbor_next", 0):
        cols.append("neighbor")
    # the other stages' columns (importance, project, tier ...): explain puts them
    # between neighbor and score
    names = list(ex.columns)
    stage_cols = names[names.index("neighbor") + 1 : names.index("score")]
    cols += [*stage_cols, "score", "mmr_position"]
    kept = ex[ex["fate"] == "returned"]
    erows = []
    for r in kept.to_dict(orient="records"):
        d = {"#": int(r["rank"]) + 1, **{c: _cell(c, r[c]) for c in cols}}
        d["selected_by"] = r["reason"]
        erows.append(d)
    if erows:
        print(format_table(erows, ["#", *cols, "selected_by"]))
    diff = p.diff()
    print("settings: " + (", ".join(f"{k}={v}" for k, v in diff.items()) or "openclaw defaults"))
    gone = ex[ex["fate"] == "dropped"]
    if not dropped:
        if len(gone):
            print(f"{len(gone)} candidate(s) dropped (--dropped lists them with the reason)")
        return
    print(f"\ndropped ({len(gone)} of {len(ex)} candidates):")
    dcols = ["vector_term", "text_term", "fused", "decay"]
    if "neighbor" in cols:
        dcols.append("neighbor")
    dcols += [*stage_cols, "score"]
    drows = [
        {
            "where": f"{r['path']}#L{r['start_line']}-L{r['end_line']}",
            **{c: _cell(c, r[c]) for c in dcols},
            "reason": r["reason"],
        }
        for r in gone.to_dict(orient="records")
    ]
    if drows:
        print(format_table(drows, ["where", *dcols, "reason"]))
