"""Search as a pipeline of stages over a `CandidateSet`, with named presets.

Stages, each a parameter of `Pipeline` (spec sections 5–7, peers.md):

1. depth: candidates per leg = min(max_candidates, floor(max_results ×
   candidate_multiplier)); a CandidateSet retrieved deeper is cut by rank.
2. leg scores: keyword = OpenClaw's bm25-rank map |r|/(1+|r|) (``text_source=
   "bm25map"``) or |bm25| (``"bm25"``); vector = raw cosine; then a
   normalisation per leg (``memlab.fusion.normalize``).
3. fusion: ``wsum`` (OpenClaw), ``rrf``, ``combsum``, ``combmnz``,
   ``combmax``, or a single leg (``vector``, ``keyword``).
4. temporal decay (``decay="exact"|"latest"``, exponential or QMD's boost).
5. stable sort by score (ties keep insertion order: vector hits, then
   keyword-only hits), then MMR over the whole list (Jaccard or embedding).
6. selection: ``min_score``, ``max_results``, OpenClaw's relaxed keyword
   fallback, and the later "keyword-only hits fill spare slots" rule.

Modes follow OpenClaw: hybrid when both legs run; vector-only (keyword leg
off) keeps vector hits ≥ min_score with no decay or MMR (unless
``rerank_vector_only``); keyword-only (no vectors) boosts each hit by the
lexical rule of ``memlab.textquery.keyword_only_score``, applies decay but not
MMR, and returns the top results even when none pass ``min_score``.

The presets are plain `Pipeline` values: every parameter is visible in
``repr`` and ``get_params()`` and can be overridden.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.candidates import (
    CandidateSet,
    RetrievalSpec,
    candidate_depth,
    now_seconds,
    retrieve,
)
from memlab.fusion import (
    NORMALIZATIONS,
    bm25_rank_to_score_array,
    clamp_weights,
    fuse,
    normalize,
)
from memlab.rerank import apply_decay, file_timestamp, mmr_rerank, mmr_rerank_embeddings
from memlab.textquery import keyword_only_score

if TYPE_CHECKING:
    import pandas as pd

    from memlab.config import MemorySearchConfig
    from memlab.index import ChunkTable, MemoryIndex

FUSION_METHODS = ("wsum", "rrf", "combsum", "combmnz", "combmax", "vector", "keyword")
TEXT_SOURCES = ("bm25map", "bm25")
DECAY_RULES = ("off", "exact", "latest")
DECAY_KINDS = ("exponential", "qmd")
MMR_KINDS = ("off", "jaccard", "embedding")
KEYWORD_MODES = ("and", "or")
# Lower bounds of each leg's input score, for the "theoretical" normalisation.
VECTOR_LOWER = -1.0
TEXT_LOWER = 0.0


@dataclass
class Ranking:
    """The selected results of a pipeline over a CandidateSet.

    ``columns`` [Q, K]: candidate columns in result order (−1 = empty slot);
    ``scores`` [Q, K]: final scores; ``stage`` holds the per-candidate arrays
    [Q, C] of every stage (for explain); ``selected_by`` [Q, K] codes:
    0 strict, 1 relaxed keyword fallback, 2 keyword fill, 3 keyword-only top-up.
    """

    columns: np.ndarray
    scores: np.ndarray
    stage: dict[str, np.ndarray]
    selected_by: np.ndarray
    mode: str


SELECTED_BY = np.array(["strict", "relaxed", "fill", "top-up"], dtype=object)


@dataclass
class Pipeline:
    """A search system: candidate depth, leg scores, fusion, decay, MMR and selection.

    Defaults are OpenClaw's pinned behaviour (the ``openclaw`` preset). All
    parameters are validated on construction with a message naming them;
    ``get_params()``/``set_params()`` serve sweeps.
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

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        _choice("keyword_mode", self.keyword_mode, KEYWORD_MODES)
        _choice("fusion", self.fusion, FUSION_METHODS)
        _choice("text_source", self.text_source, TEXT_SOURCES)
        _choice("vector_norm", self.vector_norm, NORMALIZATIONS)
        _choice("text_norm", self.text_norm, NORMALIZATIONS)
        _choice("decay", self.decay, DECAY_RULES)
        _choice("decay_kind", self.decay_kind, DECAY_KINDS)
        _choice("mmr", self.mmr, MMR_KINDS)
        _integer("max_results", self.max_results, 1)
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

    # ------------------------------------------------------------------ params
    def get_params(self) -> dict[str, Any]:
        """All parameters as a dict (``name`` included)."""
        return asdict(self)

    def set_params(self, **params: Any) -> Pipeline:
        """Set parameters in place (validated); returns self."""
        names = {f.name for f in fields(self)}
        unknown = sorted(set(params) - names)
        if unknown:
            raise ValueError(f"unknown pipeline parameter(s) {unknown}; valid: {sorted(names)}")
        old = self.get_params()
        for k, v in params.items():
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
        names = {f.name for f in fields(self)}
        unknown = sorted(set(params) - names)
        if unknown:
            raise ValueError(f"unknown pipeline parameter(s) {unknown}; valid: {sorted(names)}")
        return replace(self, **params)

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

        ``wsum`` (OpenClaw's merge): ``memlab.fusion.clamp_weights`` — each weight
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

    def __repr__(self) -> str:
        """``Class('name', p=v, ...)``: the parameters that differ from the openclaw
        preset (a subclass's own fields: from their defaults), in field order. The
        weights are always shown when both legs run and the fusion reads them, each followed by
        ``(eff x)`` when the fusion renormalises it to another value
        (``effective_weights``), e.g. ``Pipeline('wsum', vector_weight=0.05 (eff 0.143),
        text_weight=0.3 (eff 0.857))``."""
        ref = Pipeline().get_params()
        own = {f.name: f.default for f in fields(self) if f.name not in ref}
        weighted = self.keyword and self.vector and self.fusion not in ("vector", "keyword")
        eff = dict(zip(("vector_weight", "text_weight"), self.effective_weights(), strict=True))
        parts = [repr(self.name)]
        for f in fields(self):
            k = f.name
            if k == "name":
                continue
            v = getattr(self, k)
            if k in eff and weighted:
                item = f"{k}={v!r}"
                if abs(eff[k] - float(v)) > 1e-12:
                    item += f" (eff {eff[k]:.3g})"
                parts.append(item)
            elif v != (ref[k] if k in ref else own[k]):
                parts.append(f"{k}={v!r}")
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

    def retrieval_spec(self, has_vectors: bool = True) -> RetrievalSpec:
        """What this system needs from an index (``memlab.candidates.RetrievalSpec``).

        ``has_vectors``: whether the index has an embedder. The keyword fallback, unless
        set, is OpenClaw's rule: per-keyword searches only when no vector leg runs.
        """
        vec = bool(has_vectors and self.vector)
        return RetrievalSpec(
            keyword=self.keyword,
            vector=self.vector,
            keyword_mode=self.keyword_mode,
            keyword_fallback=(not vec) if self.keyword_fallback is None else self.keyword_fallback,
            fts_tokenizer=getattr(self, "fts_tokenizer", None),
        )

    def retrieve(
        self,
        index: MemoryIndex,
        queries: list[str],
        *,
        qids: list[str] | None = None,
        times: Any = None,
        depth: int | None = None,
    ) -> CandidateSet:
        """Candidates for this system (its legs, keyword mode and depth)."""
        return retrieve(
            index,
            queries,
            qids=qids,
            depth=depth or self.depth,
            keyword=self.keyword,
            vector=self.vector,
            keyword_mode=self.keyword_mode,
            keyword_fallback=self.retrieval_spec(index.has_vectors).keyword_fallback,
            times=times,
        )

    def scores(self, cs: CandidateSet) -> dict[str, np.ndarray]:
        """Every stage's [Q, C] arrays, vectorised over queries.

        Keys: ``valid``, ``has_vec``, ``has_text``, ``vec_in``, ``text_in``,
        ``vec_norm``, ``text_norm``, ``fused``, ``decay`` (multiplier), ``final``.
        Absent values are NaN; padding and candidates beyond this system's
        depth are not ``valid``.
        """
        mode = self.mode(cs)
        d = self.depth
        has_v = cs.has_vec & (cs.vec_rank < d) if mode != "keyword" else np.zeros_like(cs.valid)
        has_t = cs.has_text & (cs.text_rank < d) if mode != "vector" else np.zeros_like(cs.valid)
        if not self.keyword:
            has_t = np.zeros_like(has_t)
        valid = has_v | has_t
        vec_in = np.where(has_v, cs.vec_score, np.nan)
        if self.text_source == "bm25map":
            text_in = np.where(has_t, bm25_rank_to_score_array(cs.text_raw), np.nan)
        else:
            text_in = np.where(has_t, np.abs(cs.text_raw), np.nan)
        vec_n = normalize(vec_in, self.vector_norm, lower=VECTOR_LOWER)
        text_n = normalize(text_in, self.text_norm, lower=TEXT_LOWER)
        if mode == "hybrid":
            fused = self._fuse(vec_n, text_n, has_v, has_t, cs, valid)
        elif mode == "vector":
            fused = np.where(has_v, vec_n, np.nan)
        else:
            fused = self._keyword_only(cs, text_n, has_t)
        # A candidate the chosen fusion cannot score (e.g. a vector-only hit under
        # keyword fusion) is not a result of this system.
        valid = valid & ~np.isnan(fused)
        fused = np.where(valid, fused, np.nan)
        mult = np.ones_like(fused)
        final = fused
        if self.decay != "off" and (mode != "vector" or self.rerank_vector_only):
            ts, evergreen = chunk_times(cs.table, self.decay)
            pos = np.where(cs.valid, cs.pos, 0)
            now = now_seconds(cs.times)[:, None]
            final, mult = apply_decay(
                fused,
                ts[pos],
                evergreen[pos],
                now,
                self.half_life_days,
                kind=self.decay_kind,
                weight=self.decay_weight,
            )
            mult = np.where(valid, mult, np.nan)
        return {
            "valid": valid,
            "has_vec": has_v,
            "has_text": has_t,
            "vec_in": vec_in,
            "text_in": text_in,
            "vec_norm": vec_n,
            "text_norm": text_n,
            "fused": fused,
            "decay": mult,
            "final": final,
        }

    def _fuse(
        self,
        vec_n: np.ndarray,
        text_n: np.ndarray,
        has_v: np.ndarray,
        has_t: np.ndarray,
        cs: CandidateSet,
        valid: np.ndarray,
    ) -> np.ndarray:
        m = self.fusion
        if m == "vector":
            return np.where(has_v, vec_n, np.nan)
        if m == "keyword":
            return np.where(has_t, text_n, np.nan)
        if m == "wsum":
            params = {
                "vector_weight": self.vector_weight,
                "text_weight": self.text_weight,
                "missing": self.missing,
            }
            return fuse("wsum", vec=vec_n, text=text_n, params=params, valid=valid)
        vr = np.where(has_v, cs.vec_rank, -1)
        tr = np.where(has_t, cs.text_rank, -1)
        if m == "rrf":
            params = {
                "k": self.rrf_k,
                "top_bonus": self.rrf_top_bonus,
                "vector_weight": self.vector_weight,
                "text_weight": self.text_weight,
            }
            return fuse("rrf", vec_rank=vr, text_rank=tr, params=params, valid=valid)
        params = {"vector_weight": self.vector_weight, "text_weight": self.text_weight}
        return fuse(m, vec=vec_n, text=text_n, params=params, valid=valid)

    def _keyword_only(self, cs: CandidateSet, text_n: np.ndarray, has_t: np.ndarray) -> np.ndarray:
        if not self.keyword_boost:
            return np.where(has_t, text_n, np.nan)
        out = np.full(text_n.shape, np.nan)
        for qi in range(len(cs)):
            cols = np.nonzero(has_t[qi])[0]
            if cols.size == 0:
                continue
            pos = cs.pos[qi, cols]
            texts = cs.texts(pos)
            for c, p, t in zip(cols, pos, texts, strict=True):
                out[qi, c] = keyword_only_score(
                    float(text_n[qi, c]), cs.queries[qi], t, str(cs.table.paths[p])
                )
        return out

    def rank(self, cs: CandidateSet) -> Ranking:
        """Sort, diversify and select: the results of every query of ``cs``."""
        st = self.scores(cs)
        mode = self.mode(cs)
        valid, final, has_t = st["valid"], st["final"], st["has_text"]
        nq, width = final.shape
        key = np.where(valid, -np.nan_to_num(final, nan=0.0), np.inf)
        order = np.argsort(key, axis=1, kind="stable")
        mmr_pos = np.full((nq, width), -1, dtype=np.int64)
        if self.mmr != "off" and (
            mode == "hybrid" or (mode == "vector" and self.rerank_vector_only)
        ):
            order = self._mmr(cs, order, valid, final)
        np.put_along_axis(mmr_pos, order, np.broadcast_to(np.arange(width), (nq, width)), axis=1)
        mmr_pos = np.where(valid, mmr_pos, -1)
        st["mmr_position"] = mmr_pos if self.mmr != "off" else np.full((nq, width), -1)

        s_valid = np.take_along_axis(valid, order, axis=1)
        s_final = np.take_along_axis(np.nan_to_num(final, nan=-np.inf), order, axis=1)
        s_text = np.take_along_axis(has_t, order, axis=1)
        passes = s_valid & (s_final >= self.min_score)
        how = np.zeros((nq, width), dtype=np.int64)
        none_pass = ~passes.any(axis=1, keepdims=True)
        if mode == "hybrid" and self.relaxed_fallback:
            _, wt = clamp_weights(self.vector_weight, self.text_weight)
            relaxed = s_valid & s_text & (s_final >= min(self.min_score, wt))
            use = none_pass & relaxed.any(axis=1, keepdims=True)
            passes = np.where(use, relaxed, passes)
            how = np.where(use, 1, how)
        elif mode == "keyword":
            passes = np.where(none_pass, s_valid, passes)
            how = np.where(none_pass, 3, how)
        chosen = passes & (np.cumsum(passes, axis=1) <= self.max_results)
        if mode == "hybrid" and self.fill_keyword_only:
            room = self.max_results - chosen.sum(axis=1, keepdims=True)
            fill = s_valid & s_text & ~chosen
            fill &= np.cumsum(fill, axis=1) <= room
            how = np.where(fill, 2, how)
            # fillers come after the strict results, in ranked order
            rank_key = np.where(chosen, 0, np.where(fill, 1, 2)) * (width + 1) + np.arange(width)
            chosen = chosen | fill
        else:
            rank_key = np.where(chosen, 0, 2) * (width + 1) + np.arange(width)
        sub = np.argsort(rank_key, axis=1, kind="stable")[:, : self.max_results]
        k = sub.shape[1]
        keep = np.take_along_axis(chosen, sub, axis=1)
        cols = np.where(keep, np.take_along_axis(order, sub, axis=1), -1)
        scores = np.where(keep, np.take_along_axis(s_final, sub, axis=1), np.nan)
        sel = np.where(keep, np.take_along_axis(how, sub, axis=1), -1)
        if k < self.max_results:
            pad = self.max_results - k
            cols = np.pad(cols, ((0, 0), (0, pad)), constant_values=-1)
            scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=np.nan)
            sel = np.pad(sel, ((0, 0), (0, pad)), constant_values=-1)
        return Ranking(columns=cols, scores=scores, stage=st, selected_by=sel, mode=mode)

    def _mmr(
        self, cs: CandidateSet, order: np.ndarray, valid: np.ndarray, final: np.ndarray
    ) -> np.ndarray:
        out = order.copy()
        for qi in range(len(cs)):
            n = int(valid[qi].sum())
            if n <= 1:
                continue
            cols = order[qi, :n]
            sc = final[qi, cols]
            pos = cs.pos[qi, cols]
            if self.mmr == "jaccard":
                perm = mmr_rerank(sc.tolist(), cs.texts(pos), self.mmr_lambda)
            else:
                perm = mmr_rerank_embeddings(sc.tolist(), cs.vectors(pos), self.mmr_lambda)
            out[qi, :n] = cols[np.asarray(perm, dtype=np.int64)]
        return out

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


def ranking_frame(
    cs: CandidateSet, r: Ranking, system: str = "", *, with_text: bool = False
) -> pd.DataFrame:
    """Flatten a Ranking into the long results DataFrame (see ``Pipeline.run``).

    A ``neighbor`` column (after ``decay``) is added whenever the stages carry one
    (``memlab.presets_extra.ContextPipeline``), so that score = fused × decay + neighbor.
    """
    import pandas as pd

    qi, ki = np.nonzero(r.columns >= 0)
    cols = r.columns[qi, ki]
    pos = cs.pos[qi, cols]
    t = cs.table
    st = r.stage
    df = pd.DataFrame(
        {
            "qid": np.asarray(cs.qids, dtype=object)[qi],
            "docno": t.ids[pos] if len(pos) else np.empty(0, dtype=object),
            "score": r.scores[qi, ki],
            "rank": ki,
            "path": t.paths[pos] if len(pos) else np.empty(0, dtype=object),
            "start_line": t.start_lines[pos],
            "end_line": t.end_lines[pos],
            "source": t.sources[pos] if len(pos) else np.empty(0, dtype=object),
            "vector_score": cs.vec_score[qi, cols],
            "text_raw": cs.text_raw[qi, cols],
            "text_score": st["text_in"][qi, cols],
            "vector_norm": st["vec_norm"][qi, cols],
            "text_norm": st["text_norm"][qi, cols],
            "vector_rank": np.where(st["has_vec"][qi, cols], cs.vec_rank[qi, cols], -1),
            "text_rank": np.where(st["has_text"][qi, cols], cs.text_rank[qi, cols], -1),
            "fused": st["fused"][qi, cols],
            "decay": st["decay"][qi, cols],
            "mmr_position": st["mmr_position"][qi, cols],
            "selected_by": SELECTED_BY[np.maximum(r.selected_by[qi, ki], 0)],
            "pos": pos,
        }
    )
    if "neighbor" in st:
        # A context term added after decay (ContextPipeline): score = fused × decay + neighbor.
        df.insert(df.columns.get_loc("decay") + 1, "neighbor", st["neighbor"][qi, cols])
    df.attrs["mode"] = r.mode
    if system:
        df.insert(0, "system", system)
    if with_text:
        df["text"] = cs.texts(pos)
    return df


def explain_weights(pipeline: Pipeline) -> tuple[float, float]:
    """The weights the fusion actually applies to (vector_norm, text_norm).

    ``wsum``: OpenClaw's clamp-and-renormalise (``clamp_weights``: 0.7/0.3 stays,
    0.5/0.25 → 0.667/0.333, 0/0 → 0.7/0.3); ``rrf`` and ``comb*``: the weights as given
    (not renormalised); ``vector``/``keyword``: (1, 0) / (0, 1).
    """
    if pipeline.fusion == "vector":
        return 1.0, 0.0
    if pipeline.fusion == "keyword":
        return 0.0, 1.0
    return pipeline.effective_weights()


def explain_formula(pipeline: Pipeline, mode: str) -> str:
    """The score's formula with this system's effective weights, e.g. ``"fused =
    0.700·vector_norm + 0.300·text_norm; score = fused × decay"`` (``+ neighbor`` for a
    system with a context term; ``other`` is what the fusion adds beyond the two terms:
    RRF's top-rank bonus, the keyword-only boost)."""
    wv, wt = explain_weights(pipeline)
    if mode == "keyword":
        fused = "fused = text_norm + other (keyword-only boost)"
    elif mode == "vector":
        fused = "fused = vector_norm (vector-only mode)"
    elif pipeline.fusion == "wsum":
        fused = f"fused = {wv:.3f}·vector_norm + {wt:.3f}·text_norm"
        if pipeline.missing:
            fused += f" (a leg that missed counts {pipeline.missing:g})"
    elif pipeline.fusion == "rrf":
        fused = (
            f"fused = {wv:g}/({pipeline.rrf_k:g} + vector_rank + 1)"
            f" + {wt:g}/({pipeline.rrf_k:g} + text_rank + 1)"
            + (" + other (top-rank bonus)" if pipeline.rrf_top_bonus else "")
        )
    else:
        fused = f"fused = {pipeline.fusion}({wv:g}·vector_norm, {wt:g}·text_norm)"
    decayed = pipeline.decay != "off" and (mode != "vector" or pipeline.rerank_vector_only)
    score = "score = fused" + (" × decay" if decayed else "")
    if getattr(pipeline, "neighbor_prev", 0) or getattr(pipeline, "neighbor_next", 0):
        score += " + neighbor"
    return f"{fused}; {score}"


def explain(
    pipeline: Pipeline, cs: CandidateSet, ranking: Ranking | None = None, *, with_text: bool = False
) -> pd.DataFrame:
    """Every candidate of every query of ``cs`` with each term of its score and its fate.

    Columns: ``qid, docno, path, start_line, end_line, source``, the leg inputs
    (``vector_score``, ``text_raw``, ``vector_rank``, ``text_rank``, ``vector_norm``,
    ``text_norm``), the terms ``vector_term`` + ``text_term`` + ``other`` = ``fused``
    (``explain_weights``; ``other`` = what the fusion adds beyond the two weighted terms:
    RRF's top bonus, the keyword-only boost), ``decay`` (multiplier) and ``decayed`` =
    fused × decay, ``neighbor`` (context term, 0 without one), ``score`` = decayed +
    neighbor (NaN for a candidate this system cannot score), ``mmr_position``, ``rank``
    (0-based result rank, −1 when dropped), ``fate`` (``returned``/``dropped``) and
    ``reason``: how it was selected (strict, relaxed, fill, top-up) or why it was dropped
    — beyond this system's depth, found only by a leg it does not use, heading-only,
    below minScore (after decay ×m when decay pushed it under), below the relaxed
    keyword threshold, not a keyword hit under the relaxed fallback, or beyond
    maxResults. Rows per query: returned in rank order, then dropped by score.
    ``ranking``: a ``pipeline.rank(cs)`` already computed (else computed here).
    """
    import pandas as pd

    r = ranking if ranking is not None else pipeline.rank(cs)
    st = r.stage
    mode = r.mode
    nq, width = cs.valid.shape
    d = pipeline.depth
    wv, wt = explain_weights(pipeline)
    has_v, has_t = st["has_vec"], st["has_text"]
    vn, tn, fused = st["vec_norm"], st["text_norm"], st["fused"]
    if mode == "hybrid" and pipeline.fusion == "wsum":
        v_term = np.where(st["valid"], wv * np.where(has_v, vn, pipeline.missing), np.nan)
        t_term = np.where(st["valid"], wt * np.where(has_t, tn, pipeline.missing), np.nan)
    elif mode == "hybrid" and pipeline.fusion == "rrf":
        k = pipeline.rrf_k
        v_term = np.where(has_v, wv / (k + cs.vec_rank + 1.0), 0.0)
        t_term = np.where(has_t, wt / (k + cs.text_rank + 1.0), 0.0)
    elif mode == "hybrid" and pipeline.fusion in ("vector", "keyword"):
        v_term = np.where(has_v, vn, 0.0) * wv
        t_term = np.where(has_t, tn, 0.0) * wt
    elif mode == "vector":
        v_term, t_term = np.where(has_v, vn, np.nan), np.zeros(fused.shape)
    elif mode == "keyword":
        v_term, t_term = np.zeros(fused.shape), np.where(has_t, tn, np.nan)
    else:  # comb*: not a sum of two weighted terms; the whole fused value is "other"
        v_term, t_term = np.zeros(fused.shape), np.zeros(fused.shape)
    valid = st["valid"]
    v_term = np.where(valid, v_term, np.nan)
    t_term = np.where(valid, t_term, np.nan)
    other = fused - v_term - t_term
    mult = np.where(valid, np.nan_to_num(st["decay"], nan=1.0), np.nan)
    decayed = fused * mult
    neighbor = np.where(valid, np.nan_to_num(st.get("neighbor", np.zeros(fused.shape))), np.nan)
    score = st["final"]
    heads = st.get("heading_only", np.zeros(fused.shape, dtype=bool))

    rank = np.full((nq, width), -1, dtype=np.int64)
    how = np.full((nq, width), -1, dtype=np.int64)
    qi_r, ki_r = np.nonzero(r.columns >= 0)
    rank[qi_r, r.columns[qi_r, ki_r]] = ki_r
    how[qi_r, r.columns[qi_r, ki_r]] = r.selected_by[qi_r, ki_r]
    relaxed_rows = (r.selected_by == 1).any(axis=1)
    _, wt_clamped = clamp_weights(pipeline.vector_weight, pipeline.text_weight)
    ms = pipeline.min_score

    reasons = np.empty((nq, width), dtype=object)
    for qi in range(nq):
        for c in range(width):
            if not cs.valid[qi, c]:
                continue
            if rank[qi, c] >= 0:
                reasons[qi, c] = str(SELECTED_BY[how[qi, c]])
                continue
            reasons[qi, c] = _drop_reason(
                pipeline,
                mode,
                d,
                bool(valid[qi, c]),
                bool(heads[qi, c]),
                bool(cs.has_vec[qi, c]),
                int(cs.vec_rank[qi, c]),
                bool(cs.has_text[qi, c]),
                int(cs.text_rank[qi, c]),
                float(fused[qi, c]),
                float(mult[qi, c]),
                float(score[qi, c]),
                ms,
                bool(relaxed_rows[qi]),
                wt_clamped,
                bool(has_t[qi, c]),
            )
    qi, ci = np.nonzero(cs.valid)
    pos = cs.pos[qi, ci]
    t = cs.table
    obj = np.empty(0, dtype=object)
    df = pd.DataFrame(
        {
            "qid": np.asarray(cs.qids, dtype=object)[qi],
            "docno": t.ids[pos] if len(pos) else obj,
            "path": t.paths[pos] if len(pos) else obj,
            "start_line": t.start_lines[pos],
            "end_line": t.end_lines[pos],
            "source": t.sources[pos] if len(pos) else obj,
            "vector_score": cs.vec_score[qi, ci],
            "vector_rank": np.where(cs.has_vec[qi, ci], cs.vec_rank[qi, ci], -1),
            "vector_norm": vn[qi, ci],
            "vector_term": v_term[qi, ci],
            "text_raw": cs.text_raw[qi, ci],
            "text_rank": np.where(cs.has_text[qi, ci], cs.text_rank[qi, ci], -1),
            "text_norm": tn[qi, ci],
            "text_term": t_term[qi, ci],
            "other": other[qi, ci],
            "fused": fused[qi, ci],
            "decay": mult[qi, ci],
            "decayed": decayed[qi, ci],
            "neighbor": neighbor[qi, ci],
            "score": score[qi, ci],
            "mmr_position": st["mmr_position"][qi, ci],
            "rank": rank[qi, ci],
            "fate": np.where(rank[qi, ci] >= 0, "returned", "dropped"),
            "reason": reasons[qi, ci] if len(qi) else obj,
            "pos": pos,
        }
    )
    if with_text:
        df["text"] = cs.texts(pos)
    # Returned first (in rank order), then dropped by score (unscorable last).
    key = np.where(df["rank"] >= 0, df["rank"], width + 1).astype(float)
    df["_k1"] = df["fate"] != "returned"
    df["_k2"] = np.where(df["rank"] >= 0, key, -np.nan_to_num(df["score"], nan=-np.inf))
    qorder = {q: i for i, q in enumerate(cs.qids)}
    df["_k0"] = df["qid"].map(qorder)
    df = df.sort_values(["_k0", "_k1", "_k2"], kind="stable").drop(columns=["_k0", "_k1", "_k2"])
    df = df.reset_index(drop=True)
    df.attrs["mode"] = mode
    df.attrs["formula"] = explain_formula(pipeline, mode)
    df.attrs["weights"] = (wv, wt)
    return df


def _drop_reason(
    p: Pipeline,
    mode: str,
    depth: int,
    valid: bool,
    heading: bool,
    found_v: bool,
    vrank: int,
    found_t: bool,
    trank: int,
    fused: float,
    mult: float,
    score: float,
    min_score: float,
    relaxed: bool,
    wt: float,
    used_t: bool,
) -> str:
    """Why one retrieved candidate is not a result (see ``explain``)."""
    if heading:
        return "heading-only chunk (drop_headings)"
    if not valid:
        in_v = found_v and vrank < depth and mode != "keyword"
        in_t = found_t and trank < depth and mode != "vector" and p.keyword
        deep = (found_v and vrank >= depth) or (found_t and trank >= depth)
        if deep and not in_v and not in_t:
            legs = (("vector", found_v, vrank), ("keyword", found_t, trank))
            ranks = ", ".join(f"{leg} rank {r + 1}" for leg, f, r in legs if f)
            return f"beyond the depth {depth} ({ranks})"
        if found_t and not found_v and (mode == "vector" or not p.keyword):
            return "found only by the keyword leg, which this system does not use"
        if found_v and not found_t and mode == "keyword":
            return "found only by the vector leg, which this system does not use"
        return f"the {p.fusion} fusion cannot score a candidate found by one leg only"
    if relaxed:
        if not used_t:
            return "relaxed keyword fallback (nothing passed minScore) keeps keyword hits only"
        if score < min(min_score, wt):
            return f"below the relaxed threshold {min(min_score, wt):g}"
        return f"beyond maxResults {p.max_results}"
    if mode != "keyword" and score < min_score:
        fill = " (no spare slot for a keyword fill)" if p.fill_keyword_only and used_t else ""
        if mult < 1.0 and fused >= min_score:  # decay alone pushed it under the threshold
            return f"below minScore {min_score:g} after decay ×{mult:.4g} (fused {fused:.3f}){fill}"
        return f"below minScore {min_score:g}{fill}"
    return f"beyond maxResults {p.max_results}"


def chunk_times(table: ChunkTable, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-chunk (timestamp seconds or NaN, evergreen) under a decay rule (``file_timestamp``
    once per (path, source, mtime)), kept with the table (``ChunkTable.derived``)."""

    def compute(t: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
        by_path: dict[tuple[str, str, float], tuple[float, bool]] = {}
        ts = np.full(len(t), np.nan)
        ev = np.zeros(len(t), dtype=bool)
        for i, (p, src, m) in enumerate(zip(t.paths, t.sources, t.mtimes, strict=True)):
            key = (p, src, m)
            if key not in by_path:
                stamp, e = file_timestamp(str(p), float(m) if m else None, rule, source=str(src))
                by_path[key] = (math.nan if stamp is None else stamp, e)
            ts[i], ev[i] = by_path[key]
        return ts, ev

    return table.derived(("times", rule), compute)


# ---------------------------------------------------------------------- presets
def openclaw(**overrides: Any) -> Pipeline:
    """OpenClaw's pinned defaults: weighted sum 0.7/0.3, minScore 0.35, 6 results,
    multiplier 4, relaxed keyword fallback, decay and MMR off."""
    return (
        Pipeline(name="openclaw").replace(**overrides) if overrides else Pipeline(name="openclaw")
    )


def openclaw_latest(**overrides: Any) -> Pipeline:
    """OpenClaw after the pin: MMR (Jaccard, λ 0.7) and decay (30 days, dated files at
    any depth) on, keyword-only hits fill spare slots, decay/MMR on the vector-only path."""
    p = Pipeline(
        name="openclaw-latest",
        decay="latest",
        mmr="jaccard",
        fill_keyword_only=True,
        rerank_vector_only=True,
    )
    return p.replace(**overrides) if overrides else p


# The lab baselines (vector, bm25, wsum, rrf, qmd-like) share one candidate generation:
# both legs, an OR keyword query over the question's non-stop words, OpenClaw's depth
# (max_results × candidate_multiplier per leg). Any two of them therefore differ only in
# what their names say (the leg or the fusion); the openclaw presets are whole systems as
# OpenClaw ships them (AND keyword query, minScore 0.35). docs/presets.md has the table.
LAB_KEYWORD_MODE = "or"


def wsum_preset(**overrides: Any) -> Pipeline:
    """OpenClaw's weighted sum 0.7·cosine + 0.3·|r|/(1+|r|) on the lab's shared candidates
    (OR keyword query), with no score threshold (min_score −1: a fused score is ≥ −0.7)."""
    p = Pipeline(name="wsum", keyword_mode=LAB_KEYWORD_MODE, min_score=-1.0)
    return p.replace(**overrides) if overrides else p


def rrf_preset(**overrides: Any) -> Pipeline:
    """Reciprocal rank fusion Σ 1/(60 + rank + 1), equal weights, on the lab's shared
    candidates (OR keyword query). RRF scores lie in (0, 2/61], so a score threshold
    means nothing: min_score is 0."""
    p = Pipeline(
        name="rrf",
        keyword_mode=LAB_KEYWORD_MODE,
        fusion="rrf",
        vector_weight=1.0,
        text_weight=1.0,
        min_score=0.0,
    )
    return p.replace(**overrides) if overrides else p


def qmd_like(**overrides: Any) -> Pipeline:
    """QMD's fusion without its LLM stages: RRF k = 60, the original query's lists
    weighted 2.0, +0.05 / +0.02 top-rank bonus; min_score 0; the lab's shared
    candidates (OR keyword query)."""
    p = Pipeline(
        name="qmd-like",
        keyword_mode=LAB_KEYWORD_MODE,
        fusion="rrf",
        vector_weight=1.0,
        text_weight=1.0,
        rrf_top_bonus=True,
        min_score=0.0,
    )
    # Weights of 2.0 on both original lists scale every RRF term equally; memlab's
    # weights live in [0, 1], so 1.0/1.0 gives the same ranking (the bonus is then
    # relatively twice as strong as in QMD: documented in docs/presets.md).
    return p.replace(**overrides) if overrides else p


def vector_only(**overrides: Any) -> Pipeline:
    """The vector leg alone (cosine order), no threshold: a lab baseline. Its keyword
    mode is the lab's (OR) although it reads no keyword hit, so that in an experiment it
    ranks the very candidate set the other lab baselines rank."""
    p = Pipeline(name="vector", keyword=False, keyword_mode=LAB_KEYWORD_MODE, min_score=-1.0)
    return p.replace(**overrides) if overrides else p


def bm25_only(**overrides: Any) -> Pipeline:
    """Plain BM25: the keyword leg alone with an OR query over the query's keywords
    (FTS5 bm25 order), no boost, no fallback and no threshold: a lab baseline."""
    p = Pipeline(
        name="bm25",
        vector=False,
        keyword_mode=LAB_KEYWORD_MODE,
        keyword_boost=False,
        keyword_fallback=False,
        min_score=0.0,
    )
    return p.replace(**overrides) if overrides else p


def _extra(factory: str, **overrides: Any) -> Pipeline:
    """A preset of ``memlab.presets_extra`` (imported on first use: it imports this module)."""
    from memlab import presets_extra

    return getattr(presets_extra, factory)(**overrides)


PRESETS = {
    "openclaw": openclaw,
    "openclaw-latest": openclaw_latest,
    "wsum": wsum_preset,
    "rrf": rrf_preset,
    "qmd-like": qmd_like,
    "vector": vector_only,
    "bm25": bm25_only,
    "memlab-best": lambda **kw: _extra("memlab_best", **kw),
    "memlab-best-chunk": lambda **kw: _extra("memlab_best_chunk", **kw),
}


def preset(name: str, **overrides: Any) -> Pipeline:
    """A named preset (``openclaw``, ``openclaw-latest``, ``wsum``, ``rrf``,
    ``qmd-like``, ``vector``, ``bm25``...) with optional parameter overrides."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    return PRESETS[name](**overrides)


def from_config(config: MemorySearchConfig, name: str = "openclaw-config") -> Pipeline:
    """The pipeline an OpenClaw configuration describes (weights clamped as OpenClaw does)."""
    wv = min(1.0, max(0.0, float(config.vector_weight)))
    wt = min(1.0, max(0.0, float(config.text_weight)))
    return Pipeline(
        name=name,
        keyword=config.hybrid_enabled,
        max_results=config.max_results,
        min_score=config.min_score,
        candidate_multiplier=config.candidate_multiplier,
        vector_weight=wv,
        text_weight=wt,
        decay="exact" if config.decay_enabled else "off",
        half_life_days=config.half_life_days,
        mmr="jaccard" if config.mmr_enabled else "off",
        mmr_lambda=config.mmr_lambda,
    )


# ---------------------------------------------------------------------- validation
def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def _finite(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def _unit(name: str, value: Any) -> None:
    _finite(name, value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def _integer(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
