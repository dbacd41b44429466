from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlab.files.workspace import (
    MemoryFileError,
    WorkspaceError,
    discover_memory_files,
    read_memory_file,
    sha256_text,
)
from tests.conftest import write


def paths(ws: Path, extra=()) -> list[str]:
    return [f.path for f in discover_memory_files(ws, extra)]


def test_order_and_filtering(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory/2026-01-02.md", "b")
    write(ws, "memory/2026-01-01.md", "a")
    write(ws, "memory/sub/deep/x.md", "x")
    write(ws, "memory/notes.txt", "no")
    write(ws, "MEMORY.md", "m")
    write(ws, "other.md", "not memory")
    assert paths(ws) == [
        "MEMORY.md",
        "memory/2026-01-01.md",
        "memory/2026-01-02.md",
        "memory/sub/deep/x.md",
    ]


def test_both_root_files_memory_first(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory.md", "legacy")
    write(ws, "MEMORY.md", "canonical")
    assert paths(ws)[:2] == ["MEMORY.md", "memory.md"]


def test_symlinks_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "secret")
    write(outside, "dir/inner.md", "inner")
    ws = tmp_path / "ws"
    write(ws, "memory/real.md", "real")
    os.symlink(outside / "secret.md", ws / "MEMORY.md")
    os.symlink(outside / "secret.md", ws / "memory" / "link.md")
    os.symlink(outside / "dir", ws / "memory" / "linkdir")
    assert paths(ws) == ["memory/real.md"]


def test_symlinked_memory_folder_ignored(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "2026-01-01.md", "x")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(outside, ws / "memory")
    assert paths(ws) == []


def test_extra_paths_relative_absolute_dedup_and_missing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory/a.md", "a")
    write(ws, "docs/guide.md", "g")
    write(ws, "docs/skip.txt", "t")
    ext = tmp_path / "ext"
    write(ext, "n.md", "n")
    os.symlink(ext, tmp_path / "extlink")
    with pytest.warns(UserWarning, match="not found"):
        got = paths(ws, ["docs", str(ext / "n.md"), "memory/a.md", str(ext), "missing.md"])
    # memory/a.md via extra path is a duplicate (same real path): first kept
    assert got == ["memory/a.md", "docs/guide.md", "../ext/n.md"]
    with pytest.warns(UserWarning, match="symlink"):
        assert paths(ws, [str(tmp_path / "extlink")]) == ["memory/a.md"]


def test_missing_or_file_workspace(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not found"):
        discover_memory_files(tmp_path / "nope")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(WorkspaceError, match="not a folder"):
        discover_memory_files(f)


def test_memory_is_a_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory", "a file, not a folder")
    write(ws, "MEMORY.md", "m")
    assert paths(ws) == ["MEMORY.md"]


def test_reader_hash_and_errors(tmp_path: Path) -> None:
    p = write(tmp_path, "a.md", "héllo\n")
    ft = read_memory_file(p)
    assert ft.text == "héllo\n"
    assert ft.hash == sha256_text("héllo\n")
    assert ft.size == len("héllo\n".encode())
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok\n\xff\xfe broken")
    with pytest.raises(MemoryFileError, match="not valid UTF-8"):
        read_memory_file(bad)
    with pytest.raises(MemoryFileError, match="vanished"):
        read_memory_file(tmp_path / "gone.md")
    os.symlink(p, tmp_path / "l.md")
    with pytest.raises(MemoryFileError, match="symlink"):
        read_memory_file(tmp_path / "l.md")


def test_bom_dropped(tmp_path: Path) -> None:
    p = tmp_path / "b.md"
    p.write_bytes(b"\xef\xbb\xbfhello")
    assert read_memory_file(p).text == "hello"
