"""The stages of a search, in their declared order, and the arrays they read and write.

A stage is a plain function ``stage(pipeline, cs, arrays) -> {key: array}``:
it reads the named [query × candidate] arrays computed so far and returns the
ones it writes (a new key, or a new value of ``valid`` / ``final`` ...).
`Pipeline.scores` runs the score stages of `STAGES` that are on, in order;
`Pipeline.rank` then runs the two rank stages (MMR, selection:
``memlab.stages.selection``). ``STAGE_ARRAYS`` declares every key, with its
meaning and its column in the results frame (``memlab.pipeline.explain``), so the
stage dict, the results frame, explain and the plots use one name per array.

Order (``STAGES``): legs → normalize → fusion → lexical_boost → decay → importance
→ project → neighbor → file_context → headings → learned → identifier_tier → prior
→ best_line → exact_tiers | mmr → novel_lines
→ selection
(the stages of OpenClaw 2026.9.6, ``memlab.stages.current``, are off unless their parameter
is set).
``Pipeline.active_stages(mode)`` names those a system runs;
the fast sweep (``memlab.eval.fastsweep``) reads it to decide whether it can
reproduce a system.

A new behaviour is a new stage and a parameter, off by default, never a
`Pipeline` subclass: ``register_stage(Stage(...))`` adds a stage (its arrays,
its parameters with their defaults, and how it enters the score for
``explain``); ``tests/test_stages.py`` adds a toy "length prior" in ~20 lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

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
from memlab.stages.file_context import (
    FILE_CONTEXT_PARAMS,
    check_file_context,
    file_context_active,
    file_context_stage,
)
from memlab.stages.identifiers import check_identifier_tier, identifier_tier_stage
from memlab.stages.learned import check_model, learned_active, learned_stage
from memlab.stages.legs import fusion_stage, legs_stage, normalize_stage
from memlab.stages.prior import PRIOR_PARAMS, check_prior, prior_active, prior_stage

if TYPE_CHECKING:
    from memlab.candidates import CandidateSet
    from memlab.pipeline import Pipeline

__all__ = [
    "REORDERING_STAGES",
    "STAGES",
    "STAGE_ARRAYS",
    "ArrayInfo",
    "Stage",
    "active_stages",
    "register_stage",
    "registered",
    "run_stages",
    "stage_param_defaults",
    "unregister_stage",
]

StageFn = Callable[["Pipeline", "CandidateSet", Mapping[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class ArrayInfo:
    """One named [Q, C] array: what it holds and its results-frame column (None = none)."""

    meaning: str
    column: str | None


# Every key a stage writes. ``column``: the name in ``ranking_frame`` / ``explain``.
STAGE_ARRAYS: dict[str, ArrayInfo] = {
    "valid": ArrayInfo("bool: a candidate this system scores (within depth, fusable, kept)", None),
    "has_vec": ArrayInfo("bool: found by the vector leg within this system's depth", None),
    "has_text": ArrayInfo("bool: found by the keyword leg within this system's depth", None),
    "vec_in": ArrayInfo("vector leg input: cosine (NaN = not found)", "vector_score"),
    "text_in": ArrayInfo(
        "keyword leg input: |r|/(1+|r|) or |bm25| (NaN = not found)", "text_score"
    ),
    "vec_norm": ArrayInfo("vector leg after its normalisation", "vector_norm"),
    "text_norm": ArrayInfo("keyword leg after its normalisation", "text_norm"),
    "text_floor": ArrayInfo(
        "keyword leg value of a candidate the keyword query did not match (text_unmatched)",
        None,
    ),
    "fused": ArrayInfo("the fusion's score (NaN = not scorable)", "fused"),
    "decay": ArrayInfo("temporal decay multiplier (1 = none; NaN = not valid)", "decay"),
    "neighbor": ArrayInfo("context term added after decay (0 = no neighbour)", "neighbor"),
    "heading_only": ArrayInfo("bool: a heading-only chunk the heading filter removed", None),
    "final": ArrayInfo("the score results are sorted by", "score"),
    "mmr_position": ArrayInfo(
        "position after MMR re-ordering (−1 = MMR off / not valid)", "mmr_position"
    ),
}


@dataclass(frozen=True)
class Stage:
    """A declared stage.

    ``run``: the stage function (None for the rank stages, run by ``Pipeline.rank``);
    ``active(pipeline, mode)``: whether it runs (mode ``hybrid``/``vector``/``keyword``);
    ``writes``: the keys it returns; ``arrays``: the new keys it declares
    (added to ``STAGE_ARRAYS`` on registration); ``params``: the parameters it
    adds to every `Pipeline`, with their defaults (which must turn it off);
    ``check(name, value)``: raises ValueError on a bad parameter value;
    ``term``: how it changes the score, for explain: (key, ``"×"``, ``"+"`` or ``"="``)
    applied to the running score (``"="``: the score becomes ``st[key]``); ``off``: arrays
    written when it does not run.
    """

    name: str
    run: StageFn | None
    active: Callable[[Pipeline, str], bool]
    writes: tuple[str, ...] = ()
    arrays: Mapping[str, ArrayInfo] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[str, Any], None] | None = None
    term: tuple[str, str] | None = None
    off: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]] | None = None


def _always(p: Pipeline, mode: str) -> bool:
    return True


def _decay_on(p: Pipeline, mode: str) -> bool:
    # OpenClaw: the vector-only path returns vector hits as they are, unless
    # rerank_vector_only (its later release) decays and diversifies them too.
    # OpenClaw 2026.9.6 decays in every mode (decay="openclaw-current").
    return p.decay != "off" and (
        mode != "vector" or p.rerank_vector_only or p.decay == "openclaw-current"
    )


def _mmr_on(p: Pipeline, mode: str) -> bool:
    return p.mmr != "off" and (mode == "hybrid" or (mode == "vector" and p.rerank_vector_only))


_BUILTIN: tuple[Stage, ...] = (
    Stage("legs", legs_stage, _always, ("valid", "has_vec", "has_text", "vec_in", "text_in")),
    Stage("normalize", normalize_stage, _always, ("vec_norm", "text_norm", "text_floor")),
    Stage("fusion", fusion_stage, _always, ("valid", "fused", "final")),
    Stage(
        "lexical_boost",
        lexical_boost_stage,
        lambda p, mode: p.lexical_boost and mode != "vector",
        ("has_text", "valid", "text_in", "vec_norm", "text_norm", "text_floor", "fused", "final"),
        params={"lexical_boost": False},
        check=check_current_param,
    ),
    Stage(
        "decay",
        decay_stage,
        _decay_on,
        ("decay", "final"),
        term=("decay", "×"),
        off=lambda st: {"decay": np.ones_like(st["fused"])},
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
    ),
    Stage(
        "neighbor",
        neighbor_stage,
        neighbor_active,
        ("neighbor", "final"),
        params={**NEIGHBOR_SHAPE_PARAMS, **NEIGHBOR_WINDOW_PARAMS},
        check=check_neighbor_shape,
        term=("neighbor", "+"),
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
    ),
    Stage(
        "headings",
        headings_stage,
        lambda p, mode: p.drop_headings,
        ("heading_only", "valid", "final", "has_vec", "has_text"),
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
    ),
    Stage("mmr", None, _mmr_on, ("mmr_position",)),
    # Re-orders only, in Pipeline.rank: chunks placed by the best line none above holds.
    Stage("novel_lines", None, novel_lines_active, ()),
    Stage(
        "selection",
        None,
        _always,
        (),
        params={"selection_rule": "openclaw"},
        check=check_current_param,
    ),
)
BUILTIN_NAMES = frozenset(s.name for s in _BUILTIN)
# The rank steps that re-order the list after scoring, so that a ranking's scores need not
# fall down it (e.g. a TREC run export must not re-sort by them).
REORDERING_STAGES: frozenset[str] = frozenset({"mmr", "novel_lines"})
for _s in _BUILTIN:
    STAGE_ARRAYS.update(_s.arrays)
# The declared order; registered stages are inserted into it (``register_stage``).
STAGES: list[Stage] = list(_BUILTIN)
# Parameter names a registered stage may not take: `Pipeline`'s own fields (filled in
# by ``memlab.pipeline.base``, which imports this module, not the other way round).
RESERVED_PARAMS: set[str] = set()


def register_stage(stage: Stage, *, after: str = "headings") -> Stage:
    """Add a score stage after the stage named ``after`` (default: after the heading filter).

    Its ``arrays`` join ``STAGE_ARRAYS``; its ``params`` become parameters of
    every `Pipeline` (``get_params``, ``replace``, sweeps), stored in
    ``Pipeline.stage_params`` when they differ from their defaults. A name
    already taken (a stage, an array key, a `Pipeline` field or another stage's
    parameter) is a ValueError.
    """
    if stage.run is None:
        raise ValueError(f"stage {stage.name!r} needs a run function")
    if any(s.name == stage.name for s in STAGES):
        raise ValueError(f"a stage named {stage.name!r} exists already")
    taken = set(stage_param_defaults()) | RESERVED_PARAMS
    clash = sorted((set(stage.params) & taken) | (set(stage.arrays) & set(STAGE_ARRAYS)))
    if clash:
        raise ValueError(f"stage {stage.name!r}: names already taken: {clash}")
    names = [s.name for s in STAGES]
    if after not in names:
        raise ValueError(f"no stage {after!r} to insert after; stages: {names}")
    STAGES.insert(names.index(after) + 1, stage)
    STAGE_ARRAYS.update(stage.arrays)
    return stage


def unregister_stage(name: str) -> None:
    """Remove a registered stage and its arrays (built-in stages cannot be removed)."""
    if name in BUILTIN_NAMES:
        raise ValueError(f"{name!r} is a built-in stage")
    for i, s in enumerate(STAGES):
        if s.name == name:
            del STAGES[i]
            for key in s.arrays:
                STAGE_ARRAYS.pop(key, None)
            return
    raise ValueError(f"no registered stage {name!r}")


@contextmanager
def registered(stage: Stage, *, after: str = "headings") -> Iterator[Stage]:
    """``register_stage`` for the length of a ``with`` block."""
    register_stage(stage, after=after)
    try:
        yield stage
    finally:
        unregister_stage(stage.name)


def stage_param_defaults() -> Mapping[str, Any]:
    """Every parameter of the registered stages with its default (read-only)."""
    out: dict[str, Any] = {}
    for s in STAGES:
        out.update(s.params)
    return MappingProxyType(out)


def stage_param_check(name: str, value: Any) -> None:
    """Validate a registered stage's parameter with that stage's ``check``."""
    for s in STAGES:
        if name in s.params and s.check is not None:
            s.check(name, value)


def active_stages(p: Pipeline, mode: str = "hybrid") -> tuple[str, ...]:
    """Names of the stages ``p`` runs in ``mode``, in order."""
    return tuple(s.name for s in STAGES if s.active(p, mode))


def run_stages(p: Pipeline, cs: CandidateSet) -> dict[str, np.ndarray]:
    """Every score stage that is on, in order, over ``cs``: the stage arrays [Q, C].

    Each stage gets the arrays so far and returns those it writes; a stage
    that is off writes its ``off`` arrays (decay: multiplier 1) or nothing.
    """
    mode = p.mode(cs)
    st: dict[str, np.ndarray] = {}
    for s in STAGES:
        if s.run is None:
            continue
        if s.active(p, mode):
            st.update(s.run(p, cs, st))
        elif s.off is not None:
            st.update(s.off(st))
    return st


def score_terms(p: Pipeline, mode: str) -> list[tuple[str, str]]:
    """The (key, op) of every stage on in ``mode`` that changes the score after fusion,
    in order: score = fused, then ``× st[key]``, ``+ st[key]`` or ``= st[key]`` per term
    (explain)."""
    return [s.term for s in STAGES if s.term is not None and s.active(p, mode)]
