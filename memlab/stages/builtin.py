"""The built-in stages, in their declared order, each with what it reads and writes.

``BUILTIN`` is the pipeline: legs → normalize → fusion → qmd_documents → lexical_boost → decay →
importance → project → neighbor → file_context → headings → learned → identifier_tier →
prior → best_line → exact_tiers (score stages), then current_order → tie_order → mmr →
novel_lines → selection (order stages, ``memlab.stages.order``). The stages of OpenClaw
2026.9.6 (``memlab.stages.current``) are off unless their parameter is set. Every
declaration is checked at run time (``memlab.stages.views``).

Size: one value, ``BUILTIN``: twenty ``Stage`` declarations whose order is the
pipeline's, each naming what it reads and writes, so they are read and checked
(``memlab.stages.views``) side by side; the stage functions live in their own modules
(imported above).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from memlab.stages.best_line import (
    BEST_LINE_KEY,
    BEST_LINE_PARAMS,
    best_line_active,
    best_line_stage,
    check_best_line,
    novel_lines_active,
)
from memlab.stages.context import (
    NEIGHBOR_SHAPE_PARAMS,
    NEIGHBOR_WINDOW_PARAMS,
    check_neighbor_shape,
    headings_stage,
    neighbor_active,
    neighbor_stage,
)
from memlab.stages.current import (
    check_current_param,
    exact_tiers_stage,
    importance_stage,
    lexical_boost_stage,
    project_stage,
)
from memlab.stages.decay import decay_stage
from memlab.stages.declare import ArrayInfo, Stage
from memlab.stages.documents import check_qmd_documents, qmd_documents_stage
from memlab.stages.file_context import (
    FILE_CONTEXT_PARAMS,
    check_file_context,
    file_context_active,
    file_context_stage,
)
from memlab.stages.identifiers import check_identifier_tier, identifier_tier_stage
from memlab.stages.learned import check_model, learned_active, learned_stage
from memlab.stages.legs import fusion_stage, legs_stage, normalize_stage
from memlab.stages.order import (
    RESULT_KEYS,
    current_order_stage,
    mmr_stage,
    novel_lines_stage,
    selection_stage,
    tie_order_stage,
)
from memlab.stages.prior import PRIOR_PARAMS, check_prior, prior_active, prior_stage

if TYPE_CHECKING:
    from memlab.stages.views import Params

__all__ = ["BUILTIN"]


def _always(p: Params, mode: str) -> bool:
    return True


def _decay_on(p: Params, mode: str) -> bool:
    # OpenClaw: the vector-only path returns vector hits as they are, unless
    # rerank_vector_only (its later release) decays and diversifies them too.
    # OpenClaw 2026.9.6 decays in every mode (decay="openclaw-current").
    return p.decay != "off" and (
        mode != "vector" or p.rerank_vector_only or p.decay == "openclaw-current"
    )


def _mmr_on(p: Params, mode: str) -> bool:
    return p.mmr != "off" and (mode == "hybrid" or (mode == "vector" and p.rerank_vector_only))


BUILTIN: tuple[Stage, ...] = (
    Stage(
        "legs",
        legs_stage,
        _always,
        ("valid", "has_vec", "has_text", "vec_in", "text_in"),
        uses={"depth", "keyword", "mode", "text_source"},
        inputs={
            "has_text",
            "has_vec",
            "table",
            "text_rank",
            "text_raw",
            "valid",
            "vec_rank",
            "vec_score",
        },
    ),
    Stage(
        "normalize",
        normalize_stage,
        _always,
        ("vec_norm", "text_norm", "text_floor"),
        uses={"missing", "text_norm", "text_unmatched", "vector_norm"},
        reads={"text_in", "valid", "vec_in"},
    ),
    Stage(
        "fusion",
        fusion_stage,
        _always,
        ("valid", "fused", "final"),
        uses={
            "fusion",
            "keyword_boost",
            "missing",
            "mode",
            "rrf_k",
            "rrf_top_bonus",
            "text_weight",
            "vector_weight",
        },
        inputs={"pos", "queries", "table", "text_rank", "texts", "vec_rank"},
        reads={"has_text", "has_vec", "text_floor", "text_norm", "valid", "vec_norm"},
    ),
    Stage(
        "qmd_documents",
        qmd_documents_stage,
        lambda p, mode: p.qmd_documents,
        ("valid", "qmd_doc", "tie_break", "final"),
        arrays={
            "qmd_doc": ArrayInfo(
                "QMD's document score on the file's best chunk: Σ 2·w/(k + rank + 1) over the"
                " document lists + top-rank bonus",
                "qmd_doc",
            )
        },
        params={"qmd_documents": False},
        check=check_qmd_documents,
        term=("qmd_doc", "="),
        uses={"qmd_documents", "rrf_k", "rrf_top_bonus", "text_weight", "vector_weight"},
        inputs={"pos", "queries", "table", "text_rank", "texts", "vec_rank"},
        reads={"has_text", "has_vec", "valid", "vec_in"},
    ),
    Stage(
        "lexical_boost",
        lexical_boost_stage,
        lambda p, mode: p.lexical_boost and mode != "vector",
        ("has_text", "valid", "text_in", "vec_norm", "text_norm", "text_floor", "fused", "final"),
        params={"lexical_boost": False},
        check=check_current_param,
        uses={
            "fusion",
            "keyword",
            "keyword_boost",
            "lexical_boost",
            "missing",
            "mode",
            "rrf_k",
            "text_norm",
            "text_unmatched",
            "text_weight",
            "vector_norm",
            "vector_weight",
        },
        inputs={"extra", "pos", "queries", "table", "text_rank", "texts", "valid", "vec_rank"},
        reads={
            "final",
            "fused",
            "has_text",
            "has_vec",
            "text_floor",
            "text_in",
            "text_norm",
            "valid",
            "vec_in",
            "vec_norm",
        },
    ),
    Stage(
        "decay",
        decay_stage,
        _decay_on,
        ("decay", "final"),
        term=("decay", "×"),
        off=lambda st: {"decay": np.ones_like(st["fused"])},
        uses={"decay", "decay_kind", "decay_weight", "half_life_days", "rerank_vector_only"},
        inputs={"pos", "table", "times", "valid"},
        reads={"fused", "valid"},
    ),
    Stage(
        "importance",
        importance_stage,
        lambda p, mode: p.importance_boost,
        ("importance", "final"),
        arrays={"importance": ArrayInfo("importance multiplier (1 = none; §8)", "importance")},
        params={"importance_boost": False},
        check=check_current_param,
        term=("importance", "×"),
        uses={"importance_boost"},
        inputs={"pos", "table", "valid"},
        reads={"final", "valid"},
    ),
    Stage(
        "project",
        project_stage,
        lambda p, mode: p.project_boost,
        ("valid", "project", "project_out", "final"),
        arrays={
            "project": ArrayInfo("project-affinity multiplier (1 = none; §9)", "project"),
            "project_out": ArrayInfo("bool: a malformed project annotation removed it", None),
        },
        params={"project_boost": False, "active_projects": ()},
        check=check_current_param,
        term=("project", "×"),
        uses={"active_projects", "project_boost"},
        inputs={"pos", "table", "valid"},
        reads={"final", "valid"},
    ),
    Stage(
        "neighbor",
        neighbor_stage,
        neighbor_active,
        ("neighbor", "final"),
        params={**NEIGHBOR_SHAPE_PARAMS, **NEIGHBOR_WINDOW_PARAMS},
        check=check_neighbor_shape,
        term=("neighbor", "+"),
        uses={
            "neighbor_agg",
            "neighbor_assistant_prev",
            "neighbor_next",
            "neighbor_next2",
            "neighbor_prev",
            "neighbor_prev2",
            "neighbor_shape",
            "neighbor_user_next",
        },
        inputs={"pos", "table", "texts"},
        reads={"final", "valid"},
    ),
    Stage(
        "file_context",
        file_context_stage,
        file_context_active,
        ("file_context", "final"),
        arrays={
            "file_context": ArrayInfo(
                "file context term: weight × the best pre-neighbour score in the file",
                "file_context",
            )
        },
        params=FILE_CONTEXT_PARAMS,
        check=check_file_context,
        term=("file_context", "+"),
        uses={"file_context"},
        inputs={"pos", "table", "texts"},
        reads={"final", "neighbor", "valid"},
    ),
    Stage(
        "headings",
        headings_stage,
        lambda p, mode: p.drop_headings,
        ("heading_only", "valid", "final", "has_vec", "has_text", "neighbor", "file_context"),
        uses={"drop_headings"},
        inputs={"pos", "table", "texts"},
        reads={"file_context", "final", "has_text", "has_vec", "neighbor", "valid"},
    ),
    Stage(
        "learned",
        learned_stage,
        learned_active,
        ("learned", "final"),
        arrays={"learned": ArrayInfo("learned linear score − the score before it", "learned")},
        params={"learned_model": ()},
        check=check_model,
        term=("learned", "+"),
        uses={"learned_model"},
        inputs={
            "pos",
            "queries",
            "table",
            "text_rank",
            "text_raw",
            "texts",
            "vec_rank",
            "vec_score",
        },
        reads={"final", "has_text", "has_vec", "valid"},
    ),
    Stage(
        "identifier_tier",
        identifier_tier_stage,
        lambda p, mode: p.identifier_tier and mode != "vector",
        ("ids_held", "id_tier", "final"),
        arrays={
            "ids_held": ArrayInfo(
                "identifiers of the query the unit holds verbatim (textquery.identifier_terms)",
                "ids_held",
            ),
            "id_tier": ArrayInfo(
                "identifier tier: ids_held × (the query's score span + 1), so holders lead",
                "id_tier",
            ),
        },
        params={"identifier_tier": False},
        check=check_identifier_tier,
        term=("id_tier", "+"),
        uses={"identifier_tier"},
        inputs={"pos", "queries", "table", "texts"},
        reads={"final", "has_text", "valid"},
    ),
    Stage(
        "prior",
        prior_stage,
        prior_active,
        ("valid", "prior", "final"),
        arrays={
            "prior": ArrayInfo(
                "query-blind order key: file time in days (recency) or a seeded random "
                "per file (random)",
                "prior",
            )
        },
        params=PRIOR_PARAMS,
        check=check_prior,
        term=("prior", "="),
        uses={"rank_by", "rank_seed"},
        inputs={"pos", "qids", "table"},
        reads={"valid"},
    ),
    Stage(
        "best_line",
        best_line_stage,
        best_line_active,
        ("valid", BEST_LINE_KEY, "tie_break", "final"),
        arrays={
            BEST_LINE_KEY: ArrayInfo(
                "best score of the chunk's lines under the line system (NaN = none)",
                "best_line",
            ),
            "tie_break": ArrayInfo("order key for equal scores, ascending (−score before)", None),
        },
        params=BEST_LINE_PARAMS,
        check=check_best_line,
        term=(BEST_LINE_KEY, "="),
        uses={"best_line", "best_line_depth", "identifier_tier", "keyword", "vector"},
        inputs={"extra"},
        reads={"final", "valid"},
    ),
    Stage(
        "exact_tiers",
        exact_tiers_stage,
        lambda p, mode: p.exact_tiers and mode != "vector",
        ("tier", "rank_score", "final"),
        arrays={
            "tier": ArrayInfo("exact path tier 3/2/1 (0 = none); tiers lead (§5.8)", "tier"),
            "rank_score": ArrayInfo(
                "order key: a tier's (1+clamp(fused))/2 × multipliers", "rank_score"
            ),
        },
        params={"exact_tiers": False},
        check=check_current_param,
        uses={"exact_tiers"},
        inputs={"pos", "queries", "table"},
        reads={"decay", "final", "fused", "importance", "project", "valid"},
    ),
    Stage(
        "current_order",
        current_order_stage,
        lambda p, mode: p.selection_rule == "openclaw-current",
        ("order",),
        kind="order",
        uses={"mode", "selection_rule"},
        inputs={"extra", "pos", "table", "valid"},
        reads={"final", "rank_score", "tier", "valid"},
    ),
    Stage(
        "tie_order",
        tie_order_stage,
        lambda p, mode: (
            (best_line_active(p, mode) or p.qmd_documents)
            and p.selection_rule != "openclaw-current"
        ),
        ("order",),
        kind="order",
        uses={"best_line", "qmd_documents", "selection_rule"},
        reads={"final", "tie_break", "valid"},
    ),
    Stage(
        "mmr",
        mmr_stage,
        _mmr_on,
        ("order",),
        kind="order",
        uses={"mmr", "mmr_lambda", "rerank_vector_only", "selection_rule"},
        inputs={"pos", "table", "texts", "vectors"},
        reads={"final", "order", "rank_score", "tier", "valid"},
    ),
    # Chunks placed by the best line none above holds.
    Stage(
        "novel_lines",
        novel_lines_stage,
        novel_lines_active,
        ("order",),
        kind="order",
        uses={
            "best_line",
            "best_line_depth",
            "best_line_order",
            "identifier_tier",
            "keyword",
            "max_results",
            "vector",
        },
        inputs={"extra"},
        reads={"order", "valid"},
    ),
    Stage(
        "selection",
        selection_stage,
        _always,
        (*RESULT_KEYS, "mmr_position"),
        params={"selection_rule": "openclaw"},
        check=check_current_param,
        kind="order",
        uses={
            "fill_keyword_only",
            "max_results",
            "min_score",
            "mmr",
            "mode",
            "relaxed_fallback",
            "selection_rule",
            "text_weight",
            "vector_weight",
        },
        inputs={"table"},
        reads={"final", "has_text", "has_vec", "order", "valid"},
    ),
)
