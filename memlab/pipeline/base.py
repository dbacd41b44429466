"""`Pipeline`: a search system as a pipeline of declared stages over a `CandidateSet`.

`Pipeline` holds a system's parameters; its stages are plain functions run in
the order ``memlab.stages.STAGES`` declares (spec sections 5–7, peers.md):

1. depth: candidates per leg = min(max_candidates, floor(max_results ×
   candidate_multiplier)); a CandidateSet retrieved deeper is cut by rank.
2. ``legs`` / ``normalize``: keyword = OpenClaw's bm25-rank map |r|/(1+|r|)
   (``text_source="bm25map"``) or |bm25| (``"bm25"``); vector = raw cosine;
   then a normalisation per leg (``memlab.retrieval.fusion.normalize``).
3. ``fusion``: ``wsum`` (OpenClaw), ``rrf``, ``combsum``, ``combmnz``,
   ``combmax``, or a single leg (``vector``, ``keyword``).
4. ``decay``: temporal decay (``decay="exact"|"latest"``, exponential or QMD's boost).
5. ``neighbor`` / ``headings``: neighbour context (``neighbor_prev``,
   ``neighbor_next``) and the heading filter (``drop_headings``), off by default.
6. ``mmr``: stable sort by score (ties keep insertion order: vector hits, then
   keyword-only hits), then MMR over the whole list (Jaccard or embedding).
7. ``selection``: ``min_score``, ``max_results``, OpenClaw's relaxed keyword
   fallback, the later "keyword-only hits fill spare slots" rule
   (``memlab.stages.selection.select_rows``, shared with the fast sweep).

Modes follow OpenClaw: hybrid when both legs run; vector-only (keyword leg
off) keeps vector hits ≥ min_score with no decay or MMR (unless
``rerank_vector_only``); keyword-only (no vectors) boosts each hit by the
lexical rule of ``memlab.retrieval.textquery.keyword_only_score``, applies decay but not
MMR, and returns the top results even when none pass ``min_score``.

The presets live in ``memlab.pipeline.presets``; the result frames and explain traces in
``memlab.pipeline.explain``. ``memlab.pipeline`` (the package) exports ``Pipeline`` and
the ``Ranking`` it returns (``memlab.stages.declare``).

Size: one class, `Pipeline`: its 35 fields, their checks (`_validate`,
`check_integer`, `check_finite`) and the parameters sweeps set (`get_params`,
`set_params`, `_split`, `__getattr__`) must agree field by field; `retrieve`,
`scores` and `rank` delegate to `memlab.retrieval.candidates` and `memlab.stages`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from memlab.config.vocab import (
    DECAY_KINDS,
    DECAY_RULES,
    DEFAULT_MEMORY_FILES,
    FTS_TOKENIZERS,
    FUSION_METHODS,
    KEYWORD_MODES,
    MEMORY_FILE_RULES,
    MMR_KINDS,
    NORMALIZATIONS,
    TEXT_SOURCES,
    TEXT_UNMATCHED,
    WEIGHTED_FUSIONS,
)
from memlab.errors import nearest_name
from memlab.pipeline.explain import ranking_frame
from memlab.retrieval.candidates import CandidateSet, RetrievalSpec, candidate_depth, retrieve
from memlab.retrieval.fusion import clamp_weights
from memlab.stages import (
    RESERVED_PARAMS,
    active_stages,
    run_stages,
    stage_param_check,
    stage_param_defaults,
)
from memlab.stages.best_line import check_best_line_pipeline, line_arrays, line_system_factory
from memlab.stages.declare import Ranking
from memlab.stages.order import RESULT_KEYS

if TYPE_CHECKING:
    import pandas as pd

    from memlab.store import MemoryIndex

__all__ = ["MIN_MAX_RESULTS", "Pipeline", "check_finite", "check_integer"]

# The fewest results a search may ask for: the rule of `max_results`, of `--max-results`
# and of the tools' `maxResults` (memlab.tools.check_search_arguments).
MIN_MAX_RESULTS = 1


@dataclass
class Pipeline:
    """A search system: candidate depth, leg scores, fusion, decay, context, MMR, selection.

    Defaults are OpenClaw's pinned behaviour (the ``openclaw`` preset); every
    stage beyond it is off by default. All parameters are validated on
    construction with a message naming them; ``get_params()``/``set_params()``
    serve sweeps. Context parameters: ``neighbor_prev``/``neighbor_next``
    (weights in [0, 1] of the previous / next chunk's score, ``memlab.stages.context``),
    ``drop_headings`` (heading-only chunks are not results), ``fts_tokenizer``
    (the FTS5 tokenizer of the index the system was tuned on; None = the index's
    own), ``memory_files`` (which files are memory and how they are chunked, one of
    ``MEMORY_FILE_RULES``: OpenClaw 2026-04 or release 2026.9; the system runs on an index
    of that rule, ``memlab.store.filerules``). ``stage_params``: the values of registered stages' parameters
    (``memlab.stages.register_stage``) that differ from their defaults; read and
    set them by name like any other parameter.
    """

    name: str = "openclaw"
    keyword: bool = True
    vector: bool = True
    keyword_mode: str = "and"
    max_results: int = 6
    min_score: float = 0.35
    candidate_multiplier: float = 4.0
    max_candidates: int = 200
    fusion: str = "wsum"
    vector_weight: float = 0.7
    text_weight: float = 0.3
    missing: float = 0.0
    text_source: str = "bm25map"
    vector_norm: str = "none"
    text_norm: str = "none"
    text_unmatched: str = "missing"
    rrf_k: float = 60.0
    rrf_top_bonus: bool = False
    decay: str = "off"
    decay_kind: str = "exponential"
    half_life_days: float = 30.0
    decay_weight: float = 0.15
    mmr: str = "off"
    mmr_lambda: float = 0.7
    relaxed_fallback: bool = True
    fill_keyword_only: bool = False
    keyword_boost: bool = True
    keyword_fallback: bool | None = None
    rerank_vector_only: bool = False
    neighbor_prev: float = 0.0
    neighbor_next: float = 0.0
    drop_headings: bool = False
    fts_tokenizer: str | None = None
    memory_files: str = DEFAULT_MEMORY_FILES
    stage_params: dict[str, Any] = field(default_factory=dict)

    # True for a subclass that defines methods of its own: it may compute scores the
    # declared stages do not describe (``active_stages`` then names a "subclass" stage).
    custom_stages: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        _choice("keyword_mode", self.keyword_mode, KEYWORD_MODES)
        _choice("fusion", self.fusion, FUSION_METHODS)
        _choice("text_source", self.text_source, TEXT_SOURCES)
        _choice("vector_norm", self.vector_norm, NORMALIZATIONS)
        _choice("text_norm", self.text_norm, NORMALIZATIONS)
        _choice("text_unmatched", self.text_unmatched, TEXT_UNMATCHED)
        _choice("decay", self.decay, DECAY_RULES)
        _choice("decay_kind", self.decay_kind, DECAY_KINDS)
        _choice("mmr", self.mmr, MMR_KINDS)
        _integer("max_results", self.max_results, MIN_MAX_RESULTS)
        _integer("max_candidates", self.max_candidates, 1)
        _unit("vector_weight", self.vector_weight)
        _unit("text_weight", self.text_weight)
        _unit("mmr_lambda", self.mmr_lambda)
        _unit("decay_weight", self.decay_weight)
        _finite("min_score", self.min_score)
        _finite("missing", self.missing)
        _finite("half_life_days", self.half_life_days)
        _finite("candidate_multiplier", self.candidate_multiplier)
        if self.candidate_multiplier <= 0:
            raise ValueError(f"candidate_multiplier must be > 0, got {self.candidate_multiplier}")
        _finite("rrf_k", self.rrf_k)
        if self.rrf_k <= 0:
            raise ValueError(f"rrf_k must be > 0, got {self.rrf_k}")
        if not (self.keyword or self.vector):
            raise ValueError("a pipeline needs at least one leg (keyword or vector)")
        for name in ("neighbor_prev", "neighbor_next"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        if not isinstance(self.drop_headings, bool):
            raise ValueError(f"drop_headings must be True or False, got {self.drop_headings!r}")
        if self.fts_tokenizer is not None and self.fts_tokenizer not in FTS_TOKENIZERS:
            raise ValueError(
                f"fts_tokenizer must be None or one of {', '.join(FTS_TOKENIZERS)}; "
                f"got {self.fts_tokenizer!r}"
            )
        _choice("memory_files", self.memory_files, MEMORY_FILE_RULES)
        known = stage_param_defaults()
        unknown = sorted(set(self.stage_params) - set(known))
        if unknown:
            raise ValueError(f"unknown stage parameter(s) {unknown}; registered: {sorted(known)}")
        for k, v in self.stage_params.items():
            stage_param_check(k, v)
        check_best_line_pipeline(self)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the instance lacks: a registered stage's parameter.
        defaults = stage_param_defaults()
        if name in defaults and "stage_params" in self.__dict__:
            return self.__dict__["stage_params"].get(name, defaults[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ------------------------------------------------------------------ params
    def get_params(self) -> dict[str, Any]:
        """All parameters as a dict (``name`` included; registered stages' parameters by
        name, ``stage_params`` itself not)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "stage_params"}
        for k, default in stage_param_defaults().items():
            out[k] = self.stage_params.get(k, default)
        return out

    def _split(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` as dataclass fields: registered stages' parameters folded into
        ``stage_params`` (a default value dropped, so equal systems compare equal)."""
        names = {f.name for f in fields(self)} - {"stage_params"}
        defaults = stage_param_defaults()
        shadow = sorted(names & set(defaults))  # a stage registered before this module loaded
        if shadow:
            raise ValueError(f"registered stage parameter(s) {shadow} are Pipeline fields")
        unknown = sorted(set(params) - names - set(defaults))
        if unknown:
            valid = sorted(names | set(defaults))
            close = [(u, nearest_name(u, valid)) for u in unknown]
            if len(unknown) == 1:
                hint = close[0][1] or ""
            else:
                hint = ", ".join(f"{c} for {u}" for u, c in close if c)
            raise ValueError(
                f"unknown pipeline parameter(s) {unknown}"
                + (f" (did you mean {hint}?)" if hint else "")
                + f"; valid: {valid}"
            )
        out = {k: v for k, v in params.items() if k in names}
        staged = {k: v for k, v in params.items() if k in defaults}
        if staged:
            sp = {**self.stage_params, **staged}
            out["stage_params"] = {k: v for k, v in sp.items() if v != defaults.get(k, object())}
        return out

    def set_params(self, **params: Any) -> Pipeline:
        """Set parameters in place (validated; on error nothing changes); returns self."""
        new = self._split(params)
        old = {f.name: getattr(self, f.name) for f in fields(self)}
        for k, v in new.items():
            setattr(self, k, v)
        try:
            self._validate()
        except ValueError:
            for k, v in old.items():
                setattr(self, k, v)
            raise
        return self

    def replace(self, **params: Any) -> Pipeline:
        """A validated copy with some parameters changed."""
        return replace(self, **self._split(params))

    def at_k(self, k: int) -> Pipeline:
        """This system asked for at least k results (max_results raised to k, depth with it)."""
        if self.max_results >= k:
            return self
        return self.replace(max_results=int(k))

    @property
    def depth(self) -> int:
        """Candidates per leg: min(max_candidates, floor(max_results × candidate_multiplier))."""
        return max(
            1, candidate_depth(self.max_results, self.candidate_multiplier, self.max_candidates)
        )

    def diff(self, other: Pipeline | None = None) -> dict[str, Any]:
        """Parameters that differ from ``other`` (default: the openclaw preset)."""
        base = (other or Pipeline()).get_params()
        return {k: v for k, v in self.get_params().items() if k != "name" and base.get(k) != v}

    def effective_weights(self) -> tuple[float, float]:
        """The (vector, text) weights the fusion actually applies.

        ``wsum`` (OpenClaw's merge): ``memlab.retrieval.fusion.clamp_weights`` — each weight
        clamped to [0, 1], the pair renormalised to sum 1 (both 0 → 0.7 / 0.3),
        so (0.05, 0.3) mixes as (0.143, 0.857). RRF and the comb* fusions
        multiply each leg by its weight as given (no renormalisation), and the
        single-leg fusions read no weight: for them the pair is returned as set.
        """
        if self.fusion == "wsum":
            return clamp_weights(self.vector_weight, self.text_weight)
        return float(self.vector_weight), float(self.text_weight)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # @dataclass on a subclass would generate a field-by-field __repr__ over
        # this one; giving the subclass ours first makes the decorator keep it
        # (it never replaces a __repr__ the class itself defines).
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = Pipeline.__repr__  # type: ignore[method-assign]
        own = [k for k, v in cls.__dict__.items() if callable(v) and not k.startswith("__")]
        cls.custom_stages = bool(own) or cls.custom_stages

    def __repr__(self) -> str:
        """``Class('name', p=v, ...)``: the parameters that differ from the openclaw
        preset (a subclass's own fields: from their defaults; a registered stage's: from
        its default), in field order. The weights are always shown when both legs run
        and the fusion reads them, each followed by ``(eff x)`` when the fusion
        renormalises it to another value (``effective_weights``), e.g.
        ``Pipeline('wsum', vector_weight=0.05 (eff 0.143), text_weight=0.3 (eff 0.857))``."""
        ref = Pipeline().get_params()
        own = {f.name: f.default for f in fields(self) if f.name not in ref}
        weighted = self.keyword and self.vector and self.fusion in WEIGHTED_FUSIONS
        eff = dict(zip(("vector_weight", "text_weight"), self.effective_weights(), strict=True))
        parts = [repr(self.name)]
        for f in fields(self):
            k = f.name
            if k in ("name", "stage_params"):
                continue
            v = getattr(self, k)
            if k in eff and weighted:
                item = f"{k}={v!r}"
                if abs(eff[k] - float(v)) > 1e-12:
                    item += f" (eff {eff[k]:.3g})"
                parts.append(item)
            elif v != (ref[k] if k in ref else own[k]):
                parts.append(f"{k}={v!r}")
        parts += [f"{k}={v!r}" for k, v in self.stage_params.items()]
        return f"{type(self).__name__}({', '.join(parts)})"

    # ------------------------------------------------------------------ running
    def mode(self, cs: CandidateSet) -> str:
        """``hybrid``, ``vector`` (keyword leg off) or ``keyword`` (no vectors)."""
        has_vectors = cs.table.vectors is not None and self.vector
        if has_vectors and self.keyword:
            return "hybrid"
        if has_vectors:
            return "vector"
        return "keyword"

    def active_stages(self, mode: str = "hybrid") -> tuple[str, ...]:
        """The stages this system runs in ``mode``, in order (``memlab.stages.STAGES``),
        e.g. ``("legs", "normalize", "fusion", "selection")`` for openclaw; a subclass
        with methods of its own adds ``"subclass"``."""
        names = active_stages(self, mode)
        return (*names, "subclass") if type(self).custom_stages else names

    def retrieval_spec(self, has_vectors: bool = True) -> RetrievalSpec:
        """What this system needs from an index (``memlab.retrieval.candidates.RetrievalSpec``).

        ``has_vectors``: whether the index has an embedder. The keyword fallback, unless
        set, is OpenClaw's rule: per-keyword searches only when no vector leg runs.
        """
        vec = bool(has_vectors and self.vector)
        return RetrievalSpec(
            keyword=self.keyword,
            vector=self.vector,
            keyword_mode=self.keyword_mode,
            keyword_fallback=(not vec) if self.keyword_fallback is None else self.keyword_fallback,
            fts_tokenizer=self.fts_tokenizer,
            memory_files=self.memory_files,
        )

    def retrieve(
        self,
        index: MemoryIndex,
        queries: list[str],
        *,
        qids: list[str] | None = None,
        times: Any = None,
        depth: int | None = None,
        query_vectors: np.ndarray | None = None,
        line_index: MemoryIndex | None = None,
        cutoffs: Any = None,
    ) -> CandidateSet:
        """Candidates for this system (its legs, keyword mode and depth); ``query_vectors``
        [Q, d]: the queries' embeddings when already computed (else embedded here).

        With ``best_line`` set, the line system (``line_system``) is also run on the
        index's line view (``MemoryIndex.line_view``, the same files one line per row,
        same embedder, so the query vectors are reused) and each candidate chunk's best
        line score (and, for ``best_line_order="novel"``, the lines it holds) is put in
        ``extra`` (``memlab.stages.best_line.line_arrays``). ``line_index``: a line-per-row
        index of the same files to run the line system on instead of the line view (a
        lab's line lab already holds one: ``Lab.line_index``), checked by
        ``check_line_index`` (ValueError; also when ``best_line`` is off).

        ``cutoffs`` [Q] (Unix seconds, NaN = none): the memory as of each query
        (``memlab.retrieval.candidates.retrieve``): only older units are candidates. The line system
        runs with the same cut-offs, so its top ``best_line_depth`` lines are taken among
        past lines only and a future line never takes a past line's place.
        """
        cs = retrieve(
            index,
            queries,
            qids=qids,
            depth=depth or self.depth,
            keyword=self.keyword,
            vector=self.vector,
            keyword_mode=self.keyword_mode,
            keyword_fallback=self.retrieval_spec(index.has_vectors).keyword_fallback,
            times=times,
            query_vectors=query_vectors,
            cutoffs=cutoffs,
        )
        if self.best_line:
            line_p = self.line_system()
            if line_index is None:
                line_index = self.line_index(index, line_p)
            else:
                self.check_line_index(line_index, index, line_p)
            lcs = line_p.retrieve(
                line_index,
                queries,
                qids=qids,
                times=times,
                query_vectors=cs.query_vectors,
                cutoffs=cutoffs,
            )
            cs.extra.update(line_arrays(self, cs, line_p, lcs))
        elif line_index is not None:
            raise ValueError(f"{self.name}: a line_index was given but best_line is off")
        return cs

    def line_tokenizer(self, chunk_tokenizer: str, line_system: Pipeline | None = None) -> str:
        """The FTS5 tokenizer this system's line system runs on beside a chunk index
        tokenized with ``chunk_tokenizer``: the line system's own ``fts_tokenizer``, else
        (None) the chunk index's — the one rule ``line_index``, ``check_line_index`` and
        the lab (``Lab.line_index``, ``Lab.with_best_line``) all follow, so a line system
        without a tokenizer of its own (``bm25``) scores the same lines everywhere.
        ``line_system``: ``self.line_system()`` when the caller has built it already."""
        line_p = line_system or self.line_system()
        return line_p.fts_tokenizer or chunk_tokenizer

    def line_index(self, index: MemoryIndex, line_system: Pipeline | None = None) -> MemoryIndex:
        """The line view of ``index`` that this system's line system runs on
        (``MemoryIndex.line_view`` with ``line_tokenizer``; built and synced on first use:
        the MCP server calls this at start so no tool call waits for it).
        ``line_system``: ``self.line_system()`` when the caller has built it already."""
        return index.line_view(self.line_tokenizer(index.fts_tokenizer, line_system))

    def check_line_index(
        self, line_index: MemoryIndex, index: MemoryIndex, line_system: Pipeline | None = None
    ) -> None:
        """ValueError (naming every difference) unless ``line_index`` holds what this
        system's line system would find in ``index``'s line view: one line per row
        (``ChunkerConfig("line")``), the FTS5 tokenizer ``line_tokenizer`` gives for
        ``index``, and ``index``'s workspace, sources, memory-file rule and embedder
        (``identity_key``: the query vectors of ``index`` are reused on it). ``line_system``:
        ``self.line_system()`` when the caller has built it already."""
        tok = self.line_tokenizer(index.fts_tokenizer, line_system)

        def model(ix: MemoryIndex) -> str | None:
            # identity_key: model, weights and options (what the index fingerprint names)
            return None if ix.embedder is None else str(ix.embedder.identity_key)

        problems = []
        if line_index.chunker.kind != "line":
            problems.append(f"it chunks with {line_index.chunker.kind!r}, not one line per row")
        if line_index.fts_tokenizer != tok:
            problems.append(f"its FTS5 tokenizer is {line_index.fts_tokenizer!r}, not {tok!r}")
        same = {
            "workspace": (line_index.workspace, index.workspace),
            "sources": (tuple(line_index.sources), tuple(index.sources)),
            "memory_files": (line_index.memory_files, index.memory_files),
            "embedder": (model(line_index), model(index)),
        }
        problems += [
            f"its {k} is {a!r}, the chunk index's {b!r}" for k, (a, b) in same.items() if a != b
        ]
        if problems:
            raise ValueError(
                f"{self.name}: line_index {line_index.db_path}: " + "; ".join(problems)
            )

    def line_system(self) -> Pipeline:
        """The line-level system ``best_line`` names (the preset of that name, registered
        by ``memlab.pipeline.presets``: ``memlab.stages.best_line.line_system_factory``), returning
        its top ``best_line_depth`` lines, with a leg only where this system has it too (a
        chunk system fallen back to keyword-only ranks by keyword-only lines) and the
        identifier tier when either has it (a chunk ranked by its lines is tiered by them:
        the chunk's own tier is replaced with its score)."""
        if not self.best_line:
            raise ValueError(f"{self.name}: best_line is off, so there is no line system")
        line = line_system_factory(self.best_line)()
        return line.replace(
            max_results=self.best_line_depth,
            identifier_tier=line.identifier_tier or self.identifier_tier,
            vector=line.vector and self.vector,
            keyword=line.keyword and self.keyword,
        )

    def scores(self, cs: CandidateSet) -> dict[str, np.ndarray]:
        """Every score stage's [Q, C] arrays, vectorised over queries (``run_stages``).

        Keys (``memlab.stages.STAGE_ARRAYS``): ``valid``, ``has_vec``, ``has_text``,
        ``vec_in``, ``text_in``, ``vec_norm``, ``text_norm``, ``fused``, ``decay``
        (multiplier), ``final``; ``neighbor`` / ``heading_only`` when those stages
        run. Absent values are NaN; padding and candidates beyond this system's
        depth are not ``valid``.
        """
        return run_stages(self, cs, "score")

    def rank(self, cs: CandidateSet, scores: dict[str, np.ndarray] | None = None) -> Ranking:
        """Sort, diversify and select: the results of every query of ``cs``.

        The score stages (``scores``), then the order stages (``memlab.stages.order``):
        the stable sort by ``final`` (ties in insertion order) or the release's order
        (exact tiers first, ties by path and lines), MMR when on, the new-line order,
        then ``selection`` (min_score, max_results, relaxed fallback and keyword fill in
        hybrid mode, top-up in keyword-only mode). ``scores``: this system's score-stage
        arrays over ``cs`` when computed already (taken over, not copied).
        """
        st = run_stages(self, cs, "order", self.scores(cs) if scores is None else scores)
        st.pop("order", None)
        cols, scores, sel = (st.pop(k) for k in RESULT_KEYS)
        return Ranking(columns=cols, scores=scores, stage=st, selected_by=sel, mode=self.mode(cs))

    def run(self, cs: CandidateSet, *, with_text: bool = False) -> pd.DataFrame:
        """Results as a DataFrame: ``qid, docno, score, rank`` plus every component.

        Components: path, start_line, end_line, source, vector_score (cosine),
        text_raw (bm25), text_score (the keyword leg's input score),
        vector_norm, text_norm, vector_rank, text_rank, fused, decay, mmr_position,
        selected_by, pos (table position). ``with_text`` adds the chunk text.
        """
        r = self.rank(cs)
        return ranking_frame(cs, r, self.name, with_text=with_text)

    def search(
        self,
        index: MemoryIndex,
        query: str,
        *,
        now: float | None = None,
        with_text: bool = True,
    ) -> pd.DataFrame:
        """One query end to end: retrieve, then ``run`` (``now`` in Unix seconds)."""
        cs = self.retrieve(index, [query], qids=["q"], times=None if now is None else [now])
        return self.run(cs, with_text=with_text)


RESERVED_PARAMS.update(f.name for f in fields(Pipeline))


# ---------------------------------------------------------------------- validation
def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_finite(name: str, value: Any) -> None:
    """ValueError ``NAME must be a finite number, got V`` unless ``value`` is an int or a
    float (not a bool) that is neither NaN nor ±inf."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def _unit(name: str, value: Any) -> None:
    _finite(name, value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def check_integer(name: str, value: Any, minimum: int) -> None:
    """ValueError ``NAME must be an integer >= MINIMUM, got V`` unless ``value`` is an int
    (not a bool, not a float such as 2.0) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


# The names Pipeline._validate reads (one rule with the public checks above).
_finite, _integer = check_finite, check_integer
