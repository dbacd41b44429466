"""Where memlab keeps what it writes on its own: one owner for the user cache folder.

memlab never writes into a user's memory folders unasked. Everything it keeps
by itself (indexes of user workspaces, generated corpora, vector caches,
benchmark fixtures) lives under the user cache folder returned here.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/memlab`` when XDG_CACHE_HOME is set and non-empty, else
    ``~/.cache/memlab`` (the XDG base-directory rule; a relative XDG_CACHE_HOME is
    ignored as the spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base).expanduser() if base and Path(base).expanduser().is_absolute() else None
    return (root or Path.home() / ".cache") / "memlab"


def cache_dir(*parts: str) -> Path:
    """``cache_root() / part / …`` (not created: the caller creates what it writes)."""
    return cache_root().joinpath(*parts)
