"""How a stage is declared: `Stage`, `ArrayInfo` and the arrays every search computes.

A stage names what it reads — the `Pipeline` parameters (``uses``), the `CandidateSet`
fields (``inputs``), the stage arrays so far (``reads``) — and what it writes; it runs
on views that hold only those (``Stage.apply``, ``memlab.stages.views``). The built-in
stages are declared in ``memlab.stages.builtin``; ``memlab.stages`` keeps the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.stages import views
from memlab.stages.views import ArrayView, CandidateView, Params, ParamView

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet

__all__ = ["STAGE_ARRAYS", "STAGE_KINDS", "ArrayInfo", "Ranking", "Stage", "StageFn"]

StageFn = Callable[["Params", "CandidateSet", Mapping[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass
class Ranking:
    """The selected results of a pipeline over a CandidateSet: what the order stages write.

    ``columns`` [Q, K]: candidate columns in result order (−1 = empty slot);
    ``scores`` [Q, K]: final scores; ``stage`` holds the per-candidate arrays
    [Q, C] of every stage (keys: ``memlab.stages.STAGE_ARRAYS``; for explain);
    ``selected_by`` [Q, K] codes: 0 strict, 1 relaxed keyword fallback,
    2 keyword fill, 3 keyword-only top-up.
    """

    columns: np.ndarray
    scores: np.ndarray
    stage: dict[str, np.ndarray]
    selected_by: np.ndarray
    mode: str


# ``score`` stages compute the arrays (`Pipeline.scores` runs them); ``order`` stages then
# turn them into the ranked list and the results (`Pipeline.rank`, ``memlab.stages.order``).
STAGE_KINDS = ("score", "order")


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
    "order": ArrayInfo(
        "candidate columns in rank order, valid ones first (absent: the stable sort by "
        "final; memlab.stages.order)",
        None,
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
    run: StageFn
    active: Callable[[Params, str], bool]
    writes: tuple[str, ...] = ()
    arrays: Mapping[str, ArrayInfo] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[str, Any], None] | None = None
    term: tuple[str, str] | None = None
    off: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]] | None = None
    uses: frozenset[str] = frozenset()
    inputs: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    kind: str = "score"

    def __post_init__(self) -> None:
        # Declarations given as any iterable of names (a tuple, a set) are stored frozen.
        for name in ("uses", "inputs", "reads"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
        # A stage reads its own parameters: they need not be declared twice.
        object.__setattr__(self, "uses", self.uses | frozenset(self.params))
        if self.kind not in STAGE_KINDS:
            raise ValueError(f"stage {self.name!r}: kind must be one of {STAGE_KINDS}")

    def is_active(self, p: Params, mode: str) -> bool:
        """``active`` asked through the stage's view of ``p`` (its ``uses`` only)."""
        return bool(self.active(ParamView(p, self.name, self.uses), mode))  # type: ignore[arg-type]

    def apply(
        self, p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        """``run`` on the stage's views of ``p``, ``cs`` and ``st`` (``memlab.stages.views``:
        an undeclared read raises ``UndeclaredRead``); a key returned that ``writes`` does
        not name is a ValueError."""
        out = self.run(
            ParamView(p, self.name, self.uses),  # type: ignore[arg-type]
            CandidateView(cs, self.name, self.inputs),  # type: ignore[arg-type]
            ArrayView(st, self.name, self.reads),
        )
        extra = sorted(set(out) - set(self.writes))
        if views.RECORDER is not None:
            views.RECORDER.setdefault(self.name, {}).setdefault("writes", set()).update(out)
        elif extra:
            raise ValueError(f"stage {self.name!r} wrote {extra}, not in its writes")
        return out
