from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
# memlab keeps indexes and caches under $XDG_CACHE_HOME/memlab; the suite keeps its own
# (ignored by git, warm across local runs, cold on a fresh clone) and never touches the
# user's ~/.cache. Set MEMLAB_TEST_CACHE to put it elsewhere.
os.environ["XDG_CACHE_HOME"] = os.environ.get("MEMLAB_TEST_CACHE") or str(
    REPO / ".pytest_cache" / "xdg-cache"
)


class CountingEmbedder:
    """Wraps an embedder and records every text it was asked to embed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    provider = property(lambda self: self.inner.provider)
    model = property(lambda self: self.inner.model)
    dimensions = property(lambda self: self.inner.dimensions)
    identity_key = property(lambda self: self.inner.identity_key)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def count_truncated(self, texts: Sequence[str]) -> int:
        return self.inner.count_truncated(texts)


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture
def hashing():
    from memlab.embed import HashingEmbedder

    return HashingEmbedder(dimensions=128)


@pytest.fixture
def small_workspace(tmp_path: Path) -> Path:
    """A workspace with one fact per retrieval phenomenon (see test_pipeline)."""
    ws = tmp_path / "ws"
    write(
        ws,
        "MEMORY.md",
        "# Memory\n\n## Infrastructure\n- The Mac Studio in the office hosts the gateway.\n"
        "- Backups run nightly to the NAS.\n\n## People\n- Alice owns the billing service.\n",
    )
    write(
        ws,
        "memory/2026-01-05.md",
        "# 2026-01-05\n- Preference: Peter likes dark roast coffee.\n"
        "- Deployed build with commit a828e60 after sqlite-vec unavailable error.\n",
    )
    write(
        ws,
        "memory/2026-03-20.md",
        "# 2026-03-20\n- Preference update: Peter now likes light roast coffee.\n"
        "- Ticket MEM-4821 tracks the flaky watcher test.\n",
    )
    write(ws, "memory/notes/ideas.md", "# Ideas\n- Try heading-aware chunking for people notes.\n")
    (ws / "notes.txt").write_text("not memory\n")
    return ws
