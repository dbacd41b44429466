"""A file memlab cannot index is remembered as skipped, with its reason, until it changes.

A sync records each skipped file (a binary ``.md``, say) with the stat it was skipped at
(``meta.skipped_files``): the index is in step while that stat holds — ``status`` is not
dirty, ``search --no-sync`` does not name the file as changed, no MCP answer warns of a
sync to come — the file is shown with its reason by ``status`` and ``memory_status``, and
it is read again once it changes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.embed import HashingEmbedder
from memlab.files.workspace import MemoryFile
from memlab.store import MemoryIndex
from tests.conftest import write

REPO = Path(__file__).resolve().parents[1]
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8"
UTF16 = "# Notes\nthe kettle is blue\n".encode("utf-16")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, "MEMORY.md", "# Memory\n\nThe dentist appointment is on Tuesday.\n")
    write(root, "memory/2026-01-05.md", "- the heron nests by the lake\n")
    (root / "memory" / "image.md").write_bytes(BINARY)
    (root / "memory" / "utf16.md").write_bytes(UTF16)
    return root


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


def memlab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memlab.cli", *args, "--embedder", "hashing"],
        capture_output=True,
        text=True,
        env=env(tmp_path),
        cwd=REPO,
        timeout=120,
    )


@pytest.mark.slow
def test_status_and_search_after_index_with_undecodable_files(ws: Path, tmp_path: Path) -> None:
    idx = memlab(tmp_path, "index", str(ws), "--quiet")
    assert idx.returncode == 0 and "skipped memory/image.md: not valid UTF-8" in idx.stderr
    st = json.loads(memlab(tmp_path, "status", str(ws), "--json").stdout)
    assert st["dirty"] is False and st["dirty_files"] == []
    reasons = {s["path"]: s["reason"] for s in st["skipped_files"]}
    assert set(reasons) == {"memory/image.md", "memory/utf16.md"}
    assert reasons["memory/image.md"].startswith("not valid UTF-8")
    assert reasons["memory/utf16.md"].startswith("UTF-16 text")
    plain = memlab(tmp_path, "status", str(ws)).stdout
    assert "skipped (not indexed; read again once changed): 2" in plain
    assert "memory/utf16.md: UTF-16 text" in plain
    assert "changed since last sync" not in plain
    search = memlab(tmp_path, "search", str(ws), "heron", "--no-sync", "--min-score", "0")
    assert search.returncode == 0 and "heron" in search.stdout
    assert "changed since the last sync" not in search.stderr, search.stderr

    # The file changes again (converted to UTF-8): changed, then indexed and no longer skipped.
    (ws / "memory" / "utf16.md").write_text("# Notes\nthe kettle is blue\n")
    st = json.loads(memlab(tmp_path, "status", str(ws), "--json").stdout)
    assert st["dirty_files"] == ["memory/utf16.md"]
    found = memlab(tmp_path, "search", str(ws), "kettle", "--min-score", "0")
    assert "memory/utf16.md" in found.stdout
    st = json.loads(memlab(tmp_path, "status", str(ws), "--json").stdout)
    assert [s["path"] for s in st["skipped_files"]] == ["memory/image.md"] and not st["dirty"]


def test_an_indexed_file_that_turns_undecodable_keeps_its_rows_and_is_not_dirty(
    ws: Path, tmp_path: Path
) -> None:
    idx = MemoryIndex(ws, db_path=tmp_path / "i.sqlite", embedder=HashingEmbedder(64))
    idx.sync()
    log = ws / "memory" / "2026-01-05.md"
    log.write_bytes(b"- the heron nests by the lake\n\xff\xfe broken tail\n")
    assert idx.stale_files() == ["memory/2026-01-05.md"]
    report = idx.sync()
    assert [p for p, _ in report.files_failed] == [
        "memory/2026-01-05.md",
        "memory/image.md",
        "memory/utf16.md",
    ]
    assert idx.stale_files() == []
    assert "memory/2026-01-05.md" in set(idx.table.paths)  # the last good rows stay
    # touched (same bytes, new mtime): a change, read again, skipped again
    os.utime(log, (1, 1))
    assert idx.stale_files() == ["memory/2026-01-05.md"]
    idx.sync()
    assert idx.stale_files() == []
    idx.close()


def test_a_symlink_met_at_read_time_is_remembered_too(ws: Path, tmp_path: Path) -> None:
    """A file swapped for a symlink out of the workspace after discovery (here: a discovery
    that lists it) is refused by the read, with its stat, and remembered like any skip."""
    outside = tmp_path / "secret.md"
    outside.write_text("launch code 0000\n")
    (ws / "memory" / "link.md").symlink_to(outside)

    class Racy(MemoryIndex):
        def discover(self) -> list[MemoryFile]:
            link = MemoryFile("memory/link.md", ws / "memory" / "link.md")
            return [*super().discover(), link]

    idx = Racy(ws, db_path=tmp_path / "r.sqlite", embedder=HashingEmbedder(64))
    report = idx.sync()
    assert ("memory/link.md", "is a symlink (never followed)") in report.files_failed
    assert idx.stale_files() == []
    assert {"path": "memory/link.md", "reason": "is a symlink (never followed)"} in idx.status()[
        "skipped_files"
    ]
    assert "0000" not in " ".join(idx.texts(range(len(idx.table))))
    idx.close()


@pytest.mark.slow
def test_mcp_answers_without_a_stale_warning_and_reports_the_skips(
    ws: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memlab.cli", "mcp", str(ws), "--embedder", "hashing"],
        env=env(tmp_path),
        cwd=str(REPO),
    )

    async def main() -> None:
        async with Client(params) as client:
            await asyncio.sleep(1.2)  # past the server's stale-check interval
            res = await client.call_tool("memory_search", {"query": "heron", "minScore": 0})
            out = res.structured_content
            assert out["results"] and "warning" not in out, out
            st = (await client.call_tool("memory_status", {})).structured_content
            assert st["stale_files"] == []
            assert [s["path"] for s in st["skipped_files"]] == [
                "memory/image.md",
                "memory/utf16.md",
            ]

    asyncio.run(main())
