"""What a stage may see: read-only views of the pipeline, the candidates and the arrays.

A stage declares the parameters it reads (``Stage.uses``), the `CandidateSet` fields it
reads (``Stage.inputs``) and the stage arrays it reads (``Stage.reads``);
``memlab.stages.run_stages`` hands it these views, which answer only the declared names
and raise `UndeclaredRead` (naming the stage and the name) for any other. So a
declaration cannot drift from the code, and the fast sweep can trust it to say which
stages a parameter reaches (``memlab.eval.fastsweep``).

``RECORDER``: when set to a dict (tests, or when writing a new stage's declaration),
every read is allowed and recorded as ``RECORDER[stage][kind] -> set of names`` instead
(kind ``uses``, ``inputs`` or ``reads``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import numpy as np

__all__ = ["RECORDER", "ArrayView", "CandidateView", "ParamView", "Params", "UndeclaredRead"]

# None: enforce the declarations; a dict: record every read instead (see the module doc).
RECORDER: dict[str, dict[str, set[str]]] | None = None


class Params(Protocol):
    """What stages read of a pipeline: its parameters and methods, by attribute. The
    `ParamView` a stage is handed is one; so is a `memlab.pipeline.Pipeline`, which the
    helpers of ``memlab.stages`` (``active_stages``, ``score_floor`` …) are called with.
    Stages are written against this, never against the ``Pipeline`` class, so ``stages/``
    does not name ``pipeline/`` (which runs them)."""

    def __getattr__(self, name: str) -> Any: ...


class UndeclaredRead(LookupError):
    """A stage read a parameter, candidate field or array its declaration does not name."""


def _allow(stage: str, kind: str, name: str, allowed: frozenset[str]) -> None:
    """Record the read (``RECORDER`` set) or raise `UndeclaredRead` unless declared."""
    if RECORDER is not None:
        RECORDER.setdefault(stage, {}).setdefault(kind, set()).add(name)
        return
    if name not in allowed:
        raise UndeclaredRead(
            f"stage {stage!r} reads {name!r}, which its Stage({kind}=...) does not declare "
            f"(declared: {sorted(allowed)}); add it to the stage's declaration"
        )


class ParamView:
    """The pipeline as a stage sees it: attribute reads of the names in ``uses`` only
    (parameters, and the pipeline's methods the stage calls, e.g. ``mode``)."""

    __slots__ = ("_p", "_stage", "_uses")

    def __init__(self, pipeline: Any, stage: str, uses: frozenset[str]) -> None:
        object.__setattr__(self, "_p", pipeline)
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_uses", uses)

    def __getattr__(self, name: str) -> Any:
        _allow(self._stage, "uses", name, self._uses)
        return getattr(self._p, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"stage {self._stage!r} may not set {name!r} on the pipeline")

    def __repr__(self) -> str:
        return f"ParamView({self._p!r}, stage={self._stage!r})"


class CandidateView:
    """The `CandidateSet` as a stage sees it: the fields and methods in ``inputs`` only
    (``len()`` is always allowed: the number of queries)."""

    __slots__ = ("_cs", "_inputs", "_stage")

    def __init__(self, cs: Any, stage: str, inputs: frozenset[str]) -> None:
        object.__setattr__(self, "_cs", cs)
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_inputs", inputs)

    def __getattr__(self, name: str) -> Any:
        _allow(self._stage, "inputs", name, self._inputs)
        return getattr(self._cs, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"stage {self._stage!r} may not set {name!r} on the candidates")

    def __len__(self) -> int:
        return len(self._cs)


class ArrayView(Mapping[str, np.ndarray]):
    """The stage arrays so far as a stage sees them: the keys in ``reads`` only. A
    membership test (``key in view``) counts as a read: an optional input is declared
    like any other."""

    __slots__ = ("_reads", "_st", "_stage")

    def __init__(self, st: Mapping[str, np.ndarray], stage: str, reads: frozenset[str]):
        self._st = st
        self._stage = stage
        self._reads = reads

    def __getitem__(self, key: str) -> np.ndarray:
        _allow(self._stage, "reads", key, self._reads)
        return self._st[key]

    def __contains__(self, key: object) -> bool:
        _allow(self._stage, "reads", str(key), self._reads)
        return key in self._st

    def __iter__(self) -> Iterator[str]:
        # Iterating would read every key: only the declared ones are visible.
        return iter([k for k in self._st if k in self._reads or RECORDER is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)
