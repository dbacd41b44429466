"""Where the differential tests find OpenClaw's released package, and how they skip.

The tests that run openclaw@2026.9.6's own code under node read its compiled ``dist/``
from ``$OPENCLAW_DIST`` (``make test`` sets it from ``scripts/openclaw_release.py``,
which fetches the package with npm into the user cache). Without node or the package
they skip, saying how to enable them; with ``MEMLAB_REQUIRE_OPENCLAW=1`` (``.ci/run``)
they fail instead, so CI never passes without having compared memlab with the release.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REQUIRE_ENV = "MEMLAB_REQUIRE_OPENCLAW"
HOW = "run `python scripts/openclaw_release.py` (needs node and npm) or `make test`"


def dist() -> Path:
    """The release's ``dist`` folder: ``$OPENCLAW_DIST`` (conftest defaults it to the
    folder ``scripts/openclaw_release.py`` fills in the user cache)."""
    return Path(os.environ.get("OPENCLAW_DIST", "")).expanduser()


def require_release(marker: str) -> Path:
    """``dist()`` when node is installed and ``dist() / marker`` exists; otherwise skip the
    calling test with a message naming what is missing and how to get it (fail instead
    when ``$MEMLAB_REQUIRE_OPENCLAW`` is set)."""
    missing = None
    if shutil.which("node") is None:
        missing = "node is not installed"
    elif not (dist() / marker).is_file():
        missing = f"openclaw@2026.9.6 is not unpacked at {dist()} (OPENCLAW_DIST)"
    if missing is None:
        return dist()
    message = f"{missing}: differential test against the release skipped; {HOW}"
    if os.environ.get(REQUIRE_ENV):
        pytest.fail(f"{REQUIRE_ENV} is set and {missing}; {HOW}")
    pytest.skip(message)
