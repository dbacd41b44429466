"""The named presets: each a plain `Pipeline` value (every parameter in ``repr`` and
``get_params()``, each overridable: ``preset("openclaw", min_score=0.2)``).

- ``openclaw``: OpenClaw's pinned defaults; ``openclaw-latest``: its later release
  (MMR, decay at any depth, keyword-only hits fill spare slots); ``openclaw-current``
  (alias ``openclaw-2026.9``): release 2026.9.6's ranking, as stages.
- the lab baselines ``wsum``, ``rrf``, ``vector``, ``bm25``: one shared candidate
  generation (OR keyword query), differing only in what their names say; ``qmd-like``:
  QMD's own retrieval without its models (``memlab.qmd``: its own keyword search over
  whole files, one result per file);
  ``recency`` and ``random``: query-blind orders of every unit (``memlab.stages.prior``).
- ``memlab-best`` / ``memlab-best-chunk``: memlab's tuned systems, with the
  neighbour-context, file-context and heading-filter stages and a porter-stemmed FTS5
  index; ``memlab-best-chunk`` ranks OpenClaw's chunks by their best line under
  ``memlab-best`` (``memlab.stages.best_line``). ``memlab_learned`` (not in ``PRESETS``):
  a candidate whose score is the ``learned`` stage's fitted linear model.

docs/presets.md has the table, and how each tuned setting was chosen ("How the tuned
presets were chosen"). ``from_config`` turns an OpenClaw configuration into its pipeline.

Size: one module because `PRESETS` is the one table of names (`preset`, `PRESET_ALIASES`,
the line systems registered from it) and presets build on one another: the lab baselines
share `LAB_KEYWORD_MODE`, and `memlab_best_chunk` is `memlab_best` with
`TURN_CONTEXT_OFF`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memlab.config.vocab import BEST_LINE_SYSTEMS
from memlab.pipeline.base import Pipeline
from memlab.stages.best_line import register_line_system
from memlab.stages.learned import fitted_model

if TYPE_CHECKING:
    from memlab.config import MemorySearchConfig

__all__ = [
    "CHUNK_AS_UNIT",
    "LAB_KEYWORD_MODE",
    "LEARNED_BASE",
    "PRESETS",
    "PRESET_ALIASES",
    "TURN_CONTEXT_OFF",
    "bm25_only",
    "from_config",
    "memlab_best",
    "memlab_best_chunk",
    "memlab_learned",
    "openclaw",
    "openclaw_current",
    "openclaw_latest",
    "preset",
    "qmd_like",
    "random_order",
    "recency_order",
    "rrf_preset",
    "vector_only",
    "wsum_preset",
]


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
    """QMD's hybrid query without its models (tobi/qmd ``hybridQuery``, no expansion, no
    reranker; ``memlab.qmd``): the keyword search over whole files with QMD's query
    syntax (``keyword_mode="qmd"``: every term must match, as a prefix; 20 files), the
    vector search's files (the best of the 60 nearest chunks per file; 20 files), RRF
    k = 60 over the two file lists with the original query's lists weighing 2 and the
    +0.05 / +0.02 top-rank bonus (``qmd_documents``), each file shown at its best chunk
    (the most query words); the best 40 files kept; no score threshold (min_score 0).
    Every chunk is a vector candidate (depth up to 1,000), so a file's best chunk is
    found among all of its chunks. Where it still differs from QMD: docs/presets.md."""
    p = Pipeline(
        name="qmd-like",
        keyword_mode="qmd",
        fusion="rrf",
        vector_weight=1.0,
        text_weight=1.0,
        rrf_top_bonus=True,
        min_score=0.0,
        candidate_multiplier=200.0,
        max_candidates=1000,
        keyword_fallback=False,
    ).replace(qmd_documents=True)
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


# The query-blind baselines see every unit of the memory: their vector leg is the one leg
# that returns all rows (its top k with k ≥ the rows), so their depth is every unit an
# index can hold. They read no keyword hit. Their candidate set is their own
# (``keyword_fallback=True``, a candidate key no lab baseline has when vectors run): shared,
# its depth would re-order the lab baselines' equal scores, which keep the insertion order
# (vector hits first) — measured: bm25's LoCoMo nDCG@10 moved in the 5th digit.
EVERY_UNIT = 1_000_000


def recency_order(**overrides: Any) -> Pipeline:
    """Newest first, whatever the query: every unit (as of the query's cut-off when it has
    one) ranked by its file's time (``rank_by="recency"``, ``memlab.stages.prior``); the
    units of one file tie in the vector leg's order. A baseline, not a search: it needs a
    vector index (any embedder) only to enumerate the units."""
    p = Pipeline(
        name="recency",
        keyword=False,
        keyword_mode=LAB_KEYWORD_MODE,
        keyword_fallback=True,
        min_score=-1e6,
        relaxed_fallback=False,
        candidate_multiplier=float(EVERY_UNIT),
        max_candidates=EVERY_UNIT,
    ).replace(rank_by="recency")
    return p.replace(**overrides) if overrides else p


def random_order(**overrides: Any) -> Pipeline:
    """A seeded random order of the files (``rank_by="random"``, ``rank_seed`` 0,
    ``memlab.stages.prior``): every unit, each file's units sharing one random key per
    query. The chance baseline beside `recency_order`."""
    p = recency_order(name="random", rank_by="random", min_score=-1.0)
    return p.replace(**overrides) if overrides else p


def memlab_best(**overrides: Any) -> Pipeline:
    """memlab's tuned hybrid search for conversation memory.

    Every chunk is a candidate (depth = min(1000, max_results × 200)); OR
    keyword query over non-stop-words on a porter-stemmed FTS5 index; each leg
    z-scored over the query's candidates (keyword leg: |bm25| of the chunks
    it matched; vector leg: cosine); ``0.6·z(vector) + 0.4·z(keyword)``, a
    chunk one leg missed getting 0 (that leg's mean) there; neighbour context in
    conversations between named people: the sum (``neighbor_agg="sum"``) of the
    positive terms 0.3 × the previous chunk, 0.3 × the next, 0.3 × the one two
    before and 0.1 × the one two after (``neighbor_prev2`` / ``neighbor_next2``);
    in a user–assistant file (``neighbor_shape="roles"``, read from the speaker
    labels of the lines, never from a data set's name: ``memlab.stages.shape``) a
    User line adds its reply's score (weight 1.0), an Assistant line nothing; file
    context (``file_context=1.0``, ``memlab.stages.file_context``): in a conversation
    file (at least half of its lines speaker-labelled, ``memlab.stages.shape``) every chunk
    adds its file's best pre-neighbour score, the session heading included (a
    LoCoMo daily file is one session, a BEAM log one batch); a unit the keyword query
    did not match gets the keyword leg's floor, below every match
    (``text_unmatched="floor"``), and a unit holding an identifier the query names (a
    commit, ticket, host, path, date) leads (``identifier_tier``); heading-only chunks
    dropped; no score threshold (z-scores are negative below the mean, so ``min_score``
    is −10⁶), no decay, no MMR. How each setting was chosen: docs/presets.md.
    """
    p = Pipeline(
        name="memlab-best",
        keyword_mode="or",
        keyword_fallback=False,
        min_score=-1e6,
        relaxed_fallback=False,
        candidate_multiplier=200.0,
        max_candidates=1000,
        fusion="wsum",
        vector_weight=0.6,
        text_weight=0.4,
        text_source="bm25",
        text_norm="zscore",
        vector_norm="zscore",
        neighbor_prev=0.3,
        neighbor_next=0.3,
        drop_headings=True,
        fts_tokenizer="porter",
    ).replace(
        neighbor_shape="roles",
        neighbor_user_next=1.0,
        neighbor_assistant_prev=0.0,
        neighbor_prev2=0.3,
        neighbor_next2=0.1,
        neighbor_agg="sum",
        file_context=1.0,
        text_unmatched="floor",
        identifier_tier=True,
    )
    return p.replace(**overrides) if overrides else p


# memlab-best's turn-level neighbour window and file context switched off (the one-step
# neighbour rule): memlab-best-chunk's chunk scores run without them (docs/presets.md says why).
TURN_CONTEXT_OFF: dict[str, Any] = {
    "neighbor_prev2": 0.0,
    "neighbor_next2": 0.0,
    "neighbor_agg": "max",
    "file_context": 0.0,
}


# memlab-best-chunk's overrides that give its chunk-as-unit ranking (no best-line step),
# the studies' baseline and its tie-break. The order is reset too, so its settings do not
# show a line order it cannot use.
CHUNK_AS_UNIT: dict[str, Any] = {"best_line": "", "best_line_order": "max", "min_score": 0.0}


def memlab_best_chunk(**overrides: Any) -> Pipeline:
    """OpenClaw's ~400-token chunks, each ranked by its best line under ``memlab-best``.

    ``best_line="memlab-best"`` (``memlab.stages.best_line``): ``memlab-best`` runs on the
    line index of the same files (``MemoryIndex.line_view``), and a chunk's score is the
    best score of its lines among the query's top 100 (a chunk holding none of them is not
    returned). The chunks are placed greedily by new lines (``best_line_order="novel"``,
    ``memlab.stages.best_line.novel_line_order``): the next chunk holds the best top line
    no chunk above it holds, so an overlapping chunk that owes its score to a line already
    shown waits. The line scores are z-score sums, so there is no threshold
    (``min_score`` −10⁶). Equal line scores (overlapping chunks sharing their best line) go
    to the chunk with the higher chunk score: |bm25| / the query's best and cosine
    min–max, ``0.3·vector + 0.7·keyword``, neighbour context 0.3 / 0.3 (max, no two-away
    terms, no file context: ``TURN_CONTEXT_OFF``), no speaker rule
    (``neighbor_shape="off"``: a ~400-token chunk holds several messages, so its first line
    does not name one speaker). ``memlab_best_chunk(best_line="", min_score=0.0)`` is that
    chunk-as-unit system alone (``CHUNK_AS_UNIT``). How each setting was chosen:
    docs/presets.md.
    """
    p = memlab_best(
        name="memlab-best-chunk",
        vector_norm="minmax",
        text_norm="max",
        min_score=-1e6,
        best_line="memlab-best",
        best_line_order="novel",
        vector_weight=0.3,
        text_weight=0.7,
        neighbor_prev=0.3,
        neighbor_next=0.3,
        neighbor_shape="off",
        **TURN_CONTEXT_OFF,
        # The line system (memlab-best) carries the keyword floor and the identifier tier;
        # a chunk's own score only breaks ties between equal best lines.
        text_unmatched="missing",
        identifier_tier=False,
    )
    return p.replace(**overrides) if overrides else p


# The pipeline the learned model (``memlab.stages.learned.fitted_model``) was fitted on:
# memlab-best as it was then. Its score is the model's ``prior`` feature, so these settings
# are pinned here, not derived from `memlab_best`: a later change to memlab-best must not
# change the model's input.
LEARNED_BASE: dict[str, Any] = {
    "keyword_mode": "or",
    "keyword_fallback": False,
    "min_score": -1e6,
    "relaxed_fallback": False,
    "candidate_multiplier": 200.0,
    "max_candidates": 1000,
    "fusion": "wsum",
    "vector_weight": 0.6,
    "text_weight": 0.4,
    "text_source": "bm25",
    "text_norm": "zscore",
    "vector_norm": "zscore",
    "neighbor_prev": 0.5,
    "neighbor_next": 0.3,
    "drop_headings": True,
    "fts_tokenizer": "porter",
}


def memlab_learned(**overrides: Any) -> Pipeline:
    """A candidate preset (not in ``PRESETS``): `LEARNED_BASE` (every chunk a candidate, OR
    query, porter, z-scored legs 0.6/0.4, neighbour context 0.5/0.3, heading lines dropped,
    no threshold) whose score is then replaced by the ``learned`` stage's linear model
    (``memlab.stages.learned.fitted_model``, the data file ``learned_model.json``) over the
    candidate features, that score (``prior``) among them."""
    p = Pipeline(name="memlab-learned", **LEARNED_BASE).replace(learned_model=fitted_model())
    return p.replace(**overrides) if overrides else p


def openclaw_current(**overrides: Any) -> Pipeline:
    """OpenClaw release 2026.9.6 (spec ``openclaw-current.md`` §5–§9), as stages.

    Constants: 6 results, minScore 0.35; a 200-wide window per leg (vector top 200 by
    cosine: ``candidate_multiplier`` 200, ``max_candidates`` 200; keyword:
    ``keyword_mode="openclaw-current"``, the strict AND query, up to 6 expansion terms
    when fewer than 200 non-exact hits, the filename leg with exact tiers 3/2/1);
    ``lexical_boost``: every body hit min(1, textScore + 0.45·m/Q + 0.2·m/D + 0.18 per
    query token in the path + min(len/160, 0.18)); fixed merge 0.7·vector + 0.3·keyword
    (no renormalising); ``decay="openclaw-current"``: half-life 30 days, dated
    ``memory/**/YYYY-MM-DD[-x].md``, in every mode; ``importance_boost``: ×(0.75 +
    0.05·clamp(floor n, 1, 10)); ``project_boost``: ×1.15 / ×0.9 / ×1 for
    ``active_projects`` (none by default), malformed → out; ``exact_tiers``: tiers
    lead, ordered by (1+clamp(content))/2 × multipliers, shown as the project
    multiplier; ``mmr="openclaw-current"`` λ 0.7 in hybrid mode;
    ``selection_rule="openclaw-current"``: keyword-only hits fill spare slots, nothing
    passing minScore → keyword hits ≥ 0; keyword-only mode: no MMR, ≥ minScore else ≥ 0;
    vector-only mode: ≥ minScore by score. Memory files: the release's rules
    (``memory_files="openclaw-2026.9"``); the index's FTS tokenizer (memlab's default,
    ``unicode61``, is the release's default; its ``trigram`` substring-only hits are
    not reproduced).
    """
    p = Pipeline(
        name="openclaw-current",
        keyword_mode="openclaw-current",
        max_results=6,
        min_score=0.35,
        candidate_multiplier=200.0,
        max_candidates=200,
        fusion="wsum",
        vector_weight=0.7,
        text_weight=0.3,
        decay="openclaw-current",
        half_life_days=30.0,
        mmr="openclaw-current",
        mmr_lambda=0.7,
        fill_keyword_only=True,
        keyword_boost=False,
        keyword_fallback=False,
        memory_files="openclaw-2026.9",
    ).replace(
        lexical_boost=True,
        importance_boost=True,
        project_boost=True,
        exact_tiers=True,
        selection_rule="openclaw-current",
    )
    return p.replace(**overrides) if overrides else p


PRESETS = {
    "openclaw": openclaw,
    "openclaw-latest": openclaw_latest,
    "openclaw-current": openclaw_current,
    "wsum": wsum_preset,
    "rrf": rrf_preset,
    "qmd-like": qmd_like,
    "vector": vector_only,
    "bm25": bm25_only,
    "memlab-best": memlab_best,
    "memlab-best-chunk": memlab_best_chunk,
    "recency": recency_order,
    "random": random_order,
}


# The line systems a chunk-level system may rank its chunks by (``best_line``): the presets
# of those names (``memlab.config.vocab.BEST_LINE_SYSTEMS`` owns the list).
for _name in BEST_LINE_SYSTEMS:
    register_line_system(_name, PRESETS[_name])

# Other names of a preset: one system, one row in any table (``PRESETS`` lists each
# system once, so iterating it never runs a system twice).
PRESET_ALIASES = {"openclaw-2026.9": "openclaw-current"}


def preset(name: str, **overrides: Any) -> Pipeline:
    """A named preset (``openclaw``, ``openclaw-latest``, ``openclaw-current``, ``wsum``,
    ``rrf``, ``qmd-like``, ``vector``, ``bm25``...) with optional parameter overrides;
    an alias (``PRESET_ALIASES``, e.g. ``openclaw-2026.9``) gives its system."""
    key = PRESET_ALIASES.get(name, name)
    if key not in PRESETS:
        names = ", ".join([*PRESETS, *PRESET_ALIASES])
        raise ValueError(f"unknown preset {name!r}; choose from {names}")
    return PRESETS[key](**overrides)


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
