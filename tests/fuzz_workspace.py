"""Fuzz target: random hostile workspaces, indexed, searched and read through memory_get.

Hypothesis draws a workspace — file names with spaces, unicode, newlines, leading
dashes and dots; contents with invalid UTF-8, byte-order marks (UTF-8/16/32), NUL
bytes, CRLF and lone CR, long lines, empty files; symlinks (to a secret outside the
workspace, to folders, to themselves); FIFOs; folders named ``*.md``; a ``memory``
that is a file — and checks the invariants of docs/reliability.md:

- ``sync`` completes; every listed file is indexed or reported in ``files_failed``
  with a reason; symlinks and FIFOs are never listed;
- nothing outside the memory files reaches the index (the secret never does);
- every indexed chunk's text is the file's text at its line range;
- ``memory_search`` answers without error; ``memory_get`` on every drawn name (and
  traversal variants of it) never returns the secret.

Run it as a fuzzer (many examples, shrinking to a minimal failing workspace)::

    .venv/bin/python tests/fuzz_workspace.py --examples 2000

tests/test_hostile.py runs a reduced number of examples in CI. With ``atheris``
installed, ``--atheris`` drives the same target from coverage-guided bytes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SECRET = "SECRET-OUTSIDE-7f3a"

NAME_PARTS = [
    "a",
    "note",
    "with space",
    "ünï",
    "日本",
    "😀",
    "new\nline",
    "-dash",
    "--help",
    ".hidden",
    "x" * 120,
    "%2e%2e",
    "semi;colon",
    "quote'\"",
    "tab\tname",
]
CONTENT_PIECES: list[bytes] = [
    b"plain words here\n",
    "ünïcødé and 日本語 text\n".encode(),
    b"\xef\xbb\xbf",  # UTF-8 BOM
    b"\xff\xfe",  # UTF-16 LE BOM
    b"\xfe\xff",  # UTF-16 BE BOM
    b"\xff\xfe\x00\x00",  # UTF-32 LE BOM
    b"\x00",
    b"\x00\x00\x00\x00",
    b"\r\n",
    b"\r",
    b"\n",
    b"\xff",  # invalid UTF-8
    b"\xc3",  # truncated sequence
    b"\xed\xa0\x80",  # encoded surrogate: invalid UTF-8
    b"y" * 3000,  # longer than a chunk
    "w\u2028x\u0085y\x0cz\n".encode(),  # separators splitlines() would honour
    b"",
]


@st.composite
def workspaces(draw: st.DrawFn) -> dict[str, Any]:
    """A workspace description: files (path → bytes), symlinks, FIFOs, odd folders."""
    names = st.lists(st.sampled_from(NAME_PARTS), min_size=1, max_size=2).map("".join)
    contents = st.lists(st.sampled_from(CONTENT_PIECES), max_size=8).map(b"".join)
    files: dict[str, bytes] = {}
    for _ in range(draw(st.integers(0, 6))):
        folder = draw(st.sampled_from(["memory", "memory/sub", "memory/deep/er", "."]))
        name = draw(names) + draw(st.sampled_from([".md", ".md", ".txt", ".MD", ""]))
        files[f"{folder}/{name}".lstrip("./")] = draw(contents)
    if draw(st.booleans()):
        files["MEMORY.md"] = draw(contents)
    return {
        "files": files,
        "links": draw(
            st.lists(
                st.sampled_from(["file-out", "dir-out", "self-loop", "pair-loop", "in-ws"]),
                max_size=3,
                unique=True,
            )
        ),
        "fifo": draw(st.booleans()),
        "md_folder": draw(st.booleans()),
        "memory_is_file": draw(st.integers(0, 9)) == 0,
    }


def materialise(spec: dict[str, Any], root: Path) -> tuple[Path, list[str]]:
    """Create the described workspace under ``root``; returns (workspace, names tried)."""
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n")
    ws = root / "ws"
    ws.mkdir()
    names: list[str] = []
    if spec["memory_is_file"]:
        (ws / "memory").write_text(f"not a folder {SECRET}\n")
    for rel, data in spec["files"].items():
        p = ws / rel
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        except OSError:  # e.g. "memory" is a file, or a name too long for the file system
            continue
        names.append(rel)
    mem = ws / "memory"
    if mem.is_dir():
        links = {
            "file-out": (mem / "out.md", outside / "secret.md"),
            "dir-out": (mem / "outdir", outside),
            "self-loop": (mem / "loop.md", mem / "loop.md"),
            "pair-loop": (mem / "p1", mem / "p2"),
            "in-ws": (mem / "alias.md", ws / "MEMORY.md"),
        }
        for key in spec["links"]:
            src, dst = links[key]
            os.symlink(dst, src)
            names.append(src.relative_to(ws).as_posix())
            if key == "pair-loop":
                os.symlink(mem / "p1", mem / "p2")
        names.append("memory/outdir/secret.md")
        if spec["fifo"]:
            os.mkfifo(mem / "pipe.md")
            names.append("memory/pipe.md")
        if spec["md_folder"]:
            (mem / "folder.md").mkdir(exist_ok=True)
            names.append("memory/folder.md")
    return ws, names


def check_workspace(spec: dict[str, Any]) -> None:
    """Build the workspace, index it, search it, read it back; assert the invariants."""
    import warnings

    from memlab.embed import HashingEmbedder
    from memlab.files.workspace import MemoryFileError, read_memory_file
    from memlab.store import MemoryIndex
    from memlab.tools import memory_get, memory_search

    root = Path(tempfile.mkdtemp(prefix="memlab-fuzz-"))
    try:
        ws, names = materialise(spec, root)
        idx = MemoryIndex(
            ws, db_path=root / "db" / "i.sqlite", embedder=HashingEmbedder(32), progress=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = idx.sync()
            listed = idx.discover()
        failed = dict(report.files_failed)
        for f in listed:
            assert not os.path.islink(f.abspath), f"symlink listed: {f.path}"
            assert Path(f.abspath).is_file(), f"non-regular file listed: {f.path}"
        con = idx.connect()
        indexed = {p for (p,) in con.execute("SELECT path FROM files")}
        for f in listed:
            assert (f.path in indexed) != (f.path in failed), f"{f.path}: indexed xor reported"
            assert f.path not in failed or failed[f.path], f"{f.path}: failure without reason"
        for path, text, start, end in con.execute(
            "SELECT path, text, start_line, end_line FROM chunks"
        ):
            assert SECRET not in text, f"outside content indexed via {path!r}"
            src = next(f for f in listed if f.path == path)
            try:
                lines = read_memory_file(src.abspath).text.split("\n")
            except MemoryFileError:
                continue
            # A chunk is lines start..end of the file, except that an over-long line is
            # cut into slices joined by "\n": compare without the newlines.
            joined = "".join(lines[start - 1 : end])
            assert text.replace("\n", "") in joined, f"{path}: chunk {start}-{end} not in file"
        out = memory_search(idx, "plain words")
        assert "error" not in out, out.get("error")
        idx.close()
        variants = []
        for n in [*names, "memory/../outside/secret.md", "../outside/secret.md"]:
            variants += [n, f"memory/../{n}", f"{ws}/{n}", n.replace("/", "\\")]
        for v in variants:
            res = memory_get(ws, v)
            assert SECRET not in res.get("text", ""), f"memory_get({v!r}) leaked the secret"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fuzz(examples: int, *, seed: int | None = None) -> None:
    """Run ``check_workspace`` over ``examples`` Hypothesis-drawn workspaces."""
    deco = settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        derandomize=seed is not None,
        database=None,
    )
    deco(given(workspaces())(check_workspace))()


def atheris_main(argv: list[str]) -> None:  # pragma: no cover - optional dependency
    """Coverage-guided fuzzing: atheris bytes → Hypothesis choices → the same target."""
    import atheris

    target = given(workspaces())(check_workspace)
    atheris.Setup(argv, target.hypothesis.fuzz_one_input)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fuzz memlab with hostile workspaces.")
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--seed", type=int, default=None, help="derandomise (repeatable run)")
    ap.add_argument("--atheris", action="store_true", help="coverage-guided (needs atheris)")
    args, rest = ap.parse_known_args(argv)
    if args.atheris:
        atheris_main([sys.argv[0], *rest])
        return 0
    fuzz(args.examples, seed=args.seed)
    print(f"ok: {args.examples} hostile workspaces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
