"""The stages of a search: the registry, in declared order, and how they are run.

A stage is a plain function ``stage(pipeline, cs, arrays) -> {key: array}`` declared with
`Stage` (``memlab.stages.declare``): the parameters (``uses``), candidate fields
(``inputs``) and arrays (``reads``) it reads, the arrays it writes, and whether it
computes scores (kind ``score``) or turns them into the ranked list and the results
(kind ``order``: ``memlab.stages.order``). It runs on views that answer only what it
declared (``memlab.stages.views``), so the declarations are the truth: the fast sweep
reads them to compute once what the settings of a sweep share (``shared_stages``).
``STAGE_ARRAYS`` names every array, with its meaning and its column in the results frame
(``memlab.pipeline.explain``).

Order (``STAGES``, from ``memlab.stages.builtin``): legs → normalize → fusion →
lexical_boost → decay → importance → project → neighbor → file_context → headings →
learned → identifier_tier → prior → best_line → exact_tiers, then current_order →
tie_order → mmr → novel_lines → selection. `Pipeline.scores` runs the score stages that
are on, `Pipeline.rank` all of them; ``Pipeline.active_stages(mode)`` names those a
system runs.

A new behaviour is a new stage and a parameter, off by default, never a
`Pipeline` subclass: ``register_stage(Stage(...))`` adds a score stage (its arrays,
its parameters with their defaults, what it reads, and how it enters the score for
``explain``); ``tests/test_stages.py`` adds a toy "length prior" in ~20 lines.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.stages.builtin import BUILTIN
from memlab.stages.declare import STAGE_ARRAYS, ArrayInfo, Stage

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = [
    "REORDERING_STAGES",
    "STAGES",
    "STAGE_ARRAYS",
    "ArrayInfo",
    "Stage",
    "active_stages",
    "params_read",
    "register_stage",
    "registered",
    "run_stages",
    "shared_stages",
    "stage_param_defaults",
    "unregister_stage",
]

BUILTIN_NAMES = frozenset(s.name for s in BUILTIN)
# The rank steps that re-order the list after scoring, so that a ranking's scores need not
# fall down it (e.g. a TREC run export must not re-sort by them).
REORDERING_STAGES: frozenset[str] = frozenset({"mmr", "novel_lines"})
# The stages that end a search (the ordering stages): score stages are registered before.
ORDER_STAGES = frozenset(s.name for s in BUILTIN if s.kind == "order")
for _s in BUILTIN:
    STAGE_ARRAYS.update(_s.arrays)
# The declared order; registered stages are inserted into it (``register_stage``).
STAGES: list[Stage] = list(BUILTIN)
# The `Pipeline` methods a stage may call (named in its ``uses``) and the parameters each
# reads: the fast sweep needs parameters (``params_read``).
DERIVED_USES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "mode": ("keyword", "vector"),
        "depth": ("max_results", "candidate_multiplier", "max_candidates"),
    }
)
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
    if stage.kind != "score":
        raise ValueError(f"stage {stage.name!r}: only score stages can be registered")
    if any(s.name == stage.name for s in STAGES):
        raise ValueError(f"a stage named {stage.name!r} exists already")
    taken = set(stage_param_defaults()) | RESERVED_PARAMS
    clash = sorted((set(stage.params) & taken) | (set(stage.arrays) & set(STAGE_ARRAYS)))
    if clash:
        raise ValueError(f"stage {stage.name!r}: names already taken: {clash}")
    names = [s.name for s in STAGES]
    if after not in names or after in ORDER_STAGES:
        scoring = [n for n in names if n not in ORDER_STAGES]
        raise ValueError(f"no score stage {after!r} to insert after; score stages: {scoring}")
    STAGES.insert(names.index(after) + 1, stage)
    STAGE_ARRAYS.update(stage.arrays)
    _PARAM_DEFAULTS.clear()
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
            _PARAM_DEFAULTS.clear()
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


# stage_param_defaults, built once per set of stages (register_stage/unregister_stage reset
# it): a pipeline reads a stage parameter through it on every attribute access, many
# times per search.
_PARAM_DEFAULTS: list[Mapping[str, Any]] = []


def stage_param_defaults() -> Mapping[str, Any]:
    """Every parameter of the registered stages with its default (read-only)."""
    if not _PARAM_DEFAULTS:
        out: dict[str, Any] = {}
        for s in STAGES:
            out.update(s.params)
        _PARAM_DEFAULTS.append(MappingProxyType(out))
    return _PARAM_DEFAULTS[0]


def stage_param_check(name: str, value: Any) -> None:
    """Validate a registered stage's parameter with that stage's ``check``."""
    for s in STAGES:
        if name in s.params and s.check is not None:
            s.check(name, value)


def active_stages(p: Params, mode: str = "hybrid") -> tuple[str, ...]:
    """Names of the stages ``p`` runs in ``mode``, in order."""
    return tuple(s.name for s in STAGES if s.is_active(p, mode))


def run_stages(
    p: Params,
    cs: CandidateSet,
    kind: str = "score",
    st: dict[str, np.ndarray] | None = None,
    skip: Collection[str] = (),
) -> dict[str, np.ndarray]:
    """Every stage of ``kind`` that is on, in order, over ``cs``, updating ``st`` (default:
    a new dict): the stage arrays [Q, C] (score stages) or the list and the results
    (order stages, after the score stages' arrays). ``skip``: stages whose arrays ``st``
    holds already (``shared_stages``: computed once for systems that agree on them).

    Each stage gets its views of ``p``, ``cs`` and the arrays so far (``Stage.apply``)
    and returns those it writes; a stage that is off writes its ``off`` arrays (decay:
    multiplier 1) or nothing.
    """
    mode = p.mode(cs)
    st = {} if st is None else st
    for s in STAGES:
        if s.kind != kind or s.name in skip:
            continue
        if s.is_active(p, mode):
            st.update(s.apply(p, cs, st))
        elif s.off is not None:
            st.update(s.off(st))
    return st


def params_read(stage: Stage) -> frozenset[str]:
    """The `Pipeline` parameters ``stage`` reads: its ``uses``, with each pipeline method
    it calls replaced by the parameters that method reads (``DERIVED_USES``)."""
    out: set[str] = set()
    for name in stage.uses:
        out.update(DERIVED_USES.get(name, (name,)))
    return frozenset(out)


def shared_stages(systems: Sequence[Params], mode: str) -> tuple[str, ...]:
    """The leading score stages whose arrays are the same for every system of ``systems``
    over the same candidates in ``mode``: each off in all of them, or on in all and
    reading (``params_read``) only parameters on which they agree. Stops at the first
    other stage, since the stages after it read its arrays. () for a `Pipeline` subclass
    with methods of its own (its scores are not the declared stages')."""
    if not systems or any(type(p).custom_stages for p in systems):
        return ()
    out: list[str] = []
    for s in STAGES:
        if s.kind != "score":
            break
        on = {s.is_active(p, mode) for p in systems}
        if len(on) > 1:
            break
        if on == {True}:
            first = systems[0]
            names = params_read(s)
            if any(getattr(p, n) != getattr(first, n) for p in systems[1:] for n in names):
                break
        out.append(s.name)
    return tuple(out)


def score_terms(p: Params, mode: str) -> list[tuple[str, str]]:
    """The (key, op) of every stage on in ``mode`` that changes the score after fusion,
    in order: score = fused, then ``× st[key]``, ``+ st[key]`` or ``= st[key]`` per term
    (explain)."""
    return [s.term for s in STAGES if s.term is not None and s.is_active(p, mode)]
