"""What every notebook reads in its first cell: the size it runs at and where it caches.

A notebook runs at full size when a user runs it. The test suite sets
``MEMLAB_NOTEBOOK_SIZE=small``: every cell then runs on a small configuration (fewer
days, questions, conversations), so CI executes each notebook in seconds while the
full-size figures stay what a user reproduces. The variable is read here only; a
notebook picks its sizes with :func:`sized` and never reads the environment itself.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TypeVar

from memlab.config.vocab import NOTEBOOK_SIZES
from memlab.paths import cache_dir

__all__ = [
    "SIZE_ENV",
    "finding",
    "notebook_cache",
    "notebook_size",
    "notebook_workdir",
    "sized",
]

SIZE_ENV = "MEMLAB_NOTEBOOK_SIZE"
CACHE_ENV = "MEMLAB_NOTEBOOK_CACHE"

T = TypeVar("T")


def notebook_size() -> str:
    """The size notebooks run at: ``$MEMLAB_NOTEBOOK_SIZE`` (one of ``NOTEBOOK_SIZES``),
    ``"full"`` when unset or empty. Any other value raises ``ValueError`` naming the
    variable and the allowed values, rather than silently running at full size."""
    value = os.environ.get(SIZE_ENV, "").strip() or "full"
    if value not in NOTEBOOK_SIZES:
        raise ValueError(f"{SIZE_ENV} must be one of {', '.join(NOTEBOOK_SIZES)}, got {value!r}")
    return value


def sized(full: T, small: T) -> T:
    """``full`` at full size, ``small`` at small size (``notebook_size``): the one way a
    notebook chooses a corpus size, a question count or a subset of conversations."""
    return small if notebook_size() == "small" else full


def notebook_cache() -> Path:
    """Where notebooks keep indexes and vectors across runs: ``$MEMLAB_NOTEBOOK_CACHE``
    when set, else ``memlab.paths.cache_dir("notebooks")`` (under ``$XDG_CACHE_HOME``)."""
    override = os.environ.get(CACHE_ENV, "").strip()
    return Path(override).expanduser() if override else cache_dir("notebooks")


def notebook_workdir() -> tempfile.TemporaryDirectory[str]:
    """A folder private to this kernel for generated files (removed with the object), so
    two runs of one notebook never disturb each other."""
    return tempfile.TemporaryDirectory(prefix="memlab-notebook-")


def finding(holds: bool, what: str) -> bool:
    """Check a finding about the whole data set that a notebook's answer states.

    At full size a finding that does not hold raises ``AssertionError`` naming it (the
    printed answer would misstate the data). At small size the run holds a few groups,
    on which a difference measured over the whole set need not show: the outcome is
    printed (``finding not checked at small size (holds|does not hold here): …``) and
    the run goes on. Returns ``holds``. Structural checks (a formula, a shape, an
    identity) stay plain ``assert``s, at every size.
    """
    if notebook_size() == "full":
        if not holds:
            raise AssertionError(f"finding no longer holds: {what}")
    else:
        state = "holds" if holds else "does not hold"
        print(f"finding not checked at small size ({state} here): {what}")
    return bool(holds)
