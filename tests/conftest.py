from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# `make test` runs the suite on pytest-xdist workers, one process each. Left alone, every
# worker's torch/OpenMP/BLAS starts a thread per core and two workers oversubscribe two
# cores (06_chunking ran 6x slower); so the cores are split between the workers, before
# numpy loads its BLAS. Notebook kernels and CLI subprocesses inherit the setting.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _THREADS = str(max(1, (os.cpu_count() or 1) // _WORKERS))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, _THREADS)

# ranx is a test oracle here (fusion, normalisations, metrics on test-sized runs). Its numba
# kernels compile on first use, ~50 s per process on a fresh machine, where the same Python
# functions run uncompiled in milliseconds: the reference is ranx's code either way.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# `make test-fast` runs the property tests with fewer examples each (--hypothesis-profile
# fast); `make test` with Hypothesis's defaults or the test's own settings.
settings.register_profile("fast", max_examples=10)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
# The released OpenClaw package of the differential tests (tests/openclaw_release.py): where
# scripts/openclaw_release.py keeps it in the user's cache, found before the suite moves
# XDG_CACHE_HOME to a cache of its own below.
if not os.environ.get("OPENCLAW_DIST"):
    sys.path.insert(0, str(REPO / "scripts"))
    from openclaw_release import dist_dir

    sys.path.remove(str(REPO / "scripts"))
    os.environ["OPENCLAW_DIST"] = str(dist_dir())
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


def line_index(root: Path, files: dict[str, str]) -> object:
    """A synced `MemoryIndex` over ``root`` with one chunk per line (``ChunkerConfig("line")``)
    and the 64-d hashing embedder, after writing ``files`` ({relative path: text}) into it;
    the index file is ``root/idx.sqlite``."""
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.store import MemoryIndex

    for rel, text in files.items():
        write(root, rel, text)
    idx = MemoryIndex(
        root,
        db_path=root / "idx.sqlite",
        embedder=HashingEmbedder(dimensions=64),
        chunker=ChunkerConfig("line"),
        progress=False,
    )
    idx.sync()
    return idx


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate ``proc`` and wait up to ``timeout`` seconds; kill it if it lingers."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cli(*args: str) -> tuple[int, str, str]:
    """Run ``memlab`` in-process (``memlab.cli.main``): (exit code, stdout, stderr).

    argparse's ``SystemExit`` (a usage error, ``--help``, ``--version``) becomes its code
    (2 when it carries none), as the shell would see it.
    """
    from memlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse errors and --version
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (``$XDG_CACHE_HOME``), so no index is shared."""
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache and a ``$HOME`` of the test's own, with no OpenClaw state folder set, so the
    release's agent database and config land under ``tmp_path``; returns the home."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)
    monkeypatch.delenv("OPENCLAW_HOME", raising=False)
    return tmp_path / "home"


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
