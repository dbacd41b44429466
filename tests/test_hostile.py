"""Hostile and messy workspaces: indexing completes, bad files are reported with a reason,
nothing outside the memory files is read or indexed, search keeps working; memory_get and
``memlab get`` refuse every path outside the memory files (docs/reliability.md)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.embed import HashingEmbedder
from memlab.files.workspace import (
    MemoryFileError,
    decode_memory_text,
    discover_memory_files,
    read_memory_file,
)
from memlab.retrieval.textquery import build_fts_query
from memlab.store import MemoryIndex
from memlab.tools import memory_get, memory_search
from tests.conftest import write

SECRET = "SECRET-7f3a9"


def make(ws: Path, db: Path, **kw) -> MemoryIndex:
    kw.setdefault("embedder", HashingEmbedder(32))
    return MemoryIndex(ws, db_path=db, progress=False, **kw)


def found(idx: MemoryIndex, word: str) -> list[str]:
    pos, _ = idx.keyword_search(build_fts_query(word), 20)
    return [str(p) for p in idx.table.paths[pos]]


class OpenAudit:
    """Records every path opened or listed (``open`` / ``os.scandir`` / ``os.listdir``
    audit events) while active. Audit hooks cannot be removed, so one hook serves all."""

    events: ClassVar[list[str]] = []
    active = False
    _installed = False

    @classmethod
    def install(cls) -> None:
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        if cls.active and event in ("open", "os.scandir", "os.listdir") and args:
            p = args[0]
            if isinstance(p, (str, bytes, os.PathLike)):
                cls.events.append(os.fsdecode(p))

    @classmethod
    @contextlib.contextmanager
    def recording(cls):
        cls.install()
        cls.events = []
        cls.active = True
        try:
            yield cls.events
        finally:
            cls.active = False


@pytest.fixture
def hostile(tmp_path: Path) -> dict:
    """A workspace holding one of every kind of messy file, a secret outside it, and
    symlinks pointing at the secret."""
    outside = tmp_path / "outside"
    write(outside, "secret.md", f"{SECRET} outside file\n")
    write(outside, "sub/deep.md", f"{SECRET} outside folder\n")
    ws = tmp_path / "ws"
    m = ws / "memory"
    write(ws, "MEMORY.md", "# Memory\n- rootword durable fact\n")
    write(ws, "secret.md", f"{SECRET} at the workspace root, not memory\n")
    write(ws, "notes/other.md", f"{SECRET} in a non-memory folder\n")
    m.mkdir(parents=True, exist_ok=True)
    (m / "invalid.md").write_bytes(b"validword line\n\xff\xfe broken\n")
    (m / "bom.md").write_bytes(b"\xef\xbb\xbfbomword first line\n")
    (m / "utf16.md").write_bytes("utf16word\n".encode("utf-16"))
    (m / "utf16be.md").write_bytes(b"\xfe\xff" + "utf16be\n".encode("utf-16-be"))
    (m / "utf32.md").write_bytes("utf32word\n".encode("utf-32"))
    (m / "utf16-nobom.md").write_bytes("nobomword and more text here\n".encode("utf-16-le"))
    (m / "crlf.md").write_bytes(b"crlfone line\r\ncrlftwo line\r\ncrlfthree\r\n")
    (m / "cr.md").write_bytes(b"crone line\rcrtwo line\rcrthree\r")
    (m / "nul.md").write_bytes(b"nulalpha\x00nulbeta gamma\n" + b"\x00" * 64)
    (m / "empty.md").write_bytes(b"")
    rng = __import__("random").Random(0)
    words = " ".join(f"w{rng.randrange(10**6)}" for _ in range(125_000))  # ~1 MB, one line
    (m / "oneline.md").write_text(f"onelineword {words} tailword")
    # A long line of one repeated character: its slices are identical chunks (same id).
    (m / "rule.md").write_text("# rule\n" + "=" * 20_000 + "\nruleword\n")
    for name in ("with space.md", "ünïcødé 日本.md", "new\nline.md", "-leading-dash.md"):
        write(m, name, f"oddname {name.split('.')[0].split()[0]}word\n")
    (m / "folder.md").mkdir()
    os.mkfifo(m / "pipe.md")
    os.symlink(outside / "secret.md", m / "link-out.md")
    os.symlink(outside, m / "linkdir")
    os.symlink(m / "loop.md", m / "loop.md")
    os.symlink(m / "loopb", m / "loopa")
    os.symlink(m / "loopa", m / "loopb")
    os.symlink(m, m / "sub-self")
    return {"ws": ws, "outside": outside, "db": tmp_path / "db" / "index.sqlite"}


@pytest.mark.slow
def test_hostile_workspace_indexes_reports_and_stays_inside(hostile: dict) -> None:
    ws, outside = hostile["ws"], hostile["outside"]
    idx = make(ws, hostile["db"])
    with OpenAudit.recording() as opened, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = idx.sync()
    failed = dict(report.files_failed)
    # Reported with a reason, skipped: the encodings memlab does not decode.
    assert "not valid UTF-8 (byte 15" in failed["memory/invalid.md"]
    assert "UTF-16 text (byte-order mark FF FE)" in failed["memory/utf16.md"]
    assert "UTF-16 text (byte-order mark FE FF)" in failed["memory/utf16be.md"]
    assert "UTF-32 text" in failed["memory/utf32.md"]
    assert "UTF-16 without a byte-order mark" in failed["memory/utf16-nobom.md"]
    assert all("iconv" in failed[p] for p in failed if "UTF-16" in failed[p])
    assert len(failed) == 5
    listed = {f.path for f in idx.discover()}
    # Symlinks, FIFOs, folders named *.md and files outside memory/ are never listed.
    for never in ("link-out", "linkdir", "loop", "pipe", "folder.md", "sub-self", "secret"):
        assert not any(never in p for p in listed), never
    assert "memory/new\nline.md" in listed and "memory/-leading-dash.md" in listed
    # Nothing outside the memory files (and the index) was opened or listed.
    assert opened, "the audit hook saw nothing"
    for p in opened:
        assert str(outside) not in p and "secret" not in p and "notes" not in p, p
    con = idx.connect()
    texts = "\n".join(t for (t,) in con.execute("SELECT text FROM chunks"))
    assert SECRET not in texts
    # Indexed as documented.
    assert found(idx, "bomword") == ["memory/bom.md"]
    assert "\ufeff" not in texts
    assert found(idx, "nulbeta") == ["memory/nul.md"]  # NUL kept, words around it found
    assert found(idx, "tailword") == ["memory/oneline.md"]
    assert found(idx, "crtwo") == ["memory/cr.md"] and found(idx, "crlftwo") == ["memory/crlf.md"]
    assert sorted(found(idx, "oddname")) == sorted(
        p for p in listed if b"oddname" in (ws / p).read_bytes()
    )
    assert con.execute("SELECT count(*) FROM files WHERE path='memory/empty.md'").fetchone()[0]
    # The 1 MB line is cut into bounded chunks (default 1600 weighted chars).
    sizes = [
        len(t) for (t,) in con.execute("SELECT text FROM chunks WHERE path='memory/oneline.md'")
    ]
    assert len(sizes) > 600 and max(sizes) <= 1600
    # Identical slices of one line share a chunk id: kept once (this used to abort the
    # whole sync on the UNIQUE id constraint).
    rule = con.execute("SELECT text FROM chunks WHERE path='memory/rule.md'").fetchall()
    assert found(idx, "ruleword") == ["memory/rule.md"] and 2 <= len(rule) <= 4
    # Search keeps working, and a second sync has nothing to do.
    out = memory_search(idx, "rootword durable")
    assert "error" not in out and out["results"][0]["path"] == "MEMORY.md"
    again = idx.sync()
    assert again.files_changed == 0 and len(again.files_failed) == 5


@pytest.mark.slow
def test_line_ends_crlf_kept_lone_cr_normalised(hostile: dict) -> None:
    ws = hostile["ws"]
    idx = make(ws, hostile["db"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        idx.sync()
    con = idx.connect()
    # CRLF: lines split on "\n" as OpenClaw does, the CR stays (file hash = OpenClaw's).
    (text, s, e) = con.execute(
        "SELECT text, start_line, end_line FROM chunks WHERE path='memory/crlf.md'"
    ).fetchone()
    assert text == "crlfone line\r\ncrlftwo line\r\ncrlfthree\r\n" and (s, e) == (1, 4)
    assert memory_get(ws, "memory/crlf.md", 2, 1)["text"] == "crlftwo line\r"
    # Lone CR (classic Mac): read as line ends, so lines and citations mean something.
    (text, s, e) = con.execute(
        "SELECT text, start_line, end_line FROM chunks WHERE path='memory/cr.md'"
    ).fetchone()
    assert text == "crone line\ncrtwo line\ncrthree\n" and (s, e) == (1, 4)
    assert memory_get(ws, "memory/cr.md", 2, 1)["text"] == "crtwo line"
    assert decode_memory_text(b"a\r\r\nb\rc") == "a\n\r\nb\nc"


def test_encoding_decisions_unit() -> None:
    assert decode_memory_text(b"\xef\xbb\xbfhi") == "hi"
    assert decode_memory_text(b"a\x00b") == "a\x00b"
    # A crash-zeroed tail (NULs at both byte parities) is text, not UTF-16.
    assert decode_memory_text(b"log line\n" + b"\x00" * 100) == "log line\n" + "\x00" * 100
    for data, reason in [
        ("x".encode("utf-16"), "UTF-16"),
        ("x".encode("utf-32"), "UTF-32"),
        ("plain ascii text".encode("utf-16-be"), "without a byte-order mark"),
        (b"\xed\xa0\x80", "not valid UTF-8 (byte 0"),
        (b"ok\xc3", "not valid UTF-8 (byte 2"),
    ]:
        with pytest.raises(MemoryFileError, match=reason.replace("(", r"\(")):
            decode_memory_text(data, "f.md")


def test_memory_is_a_file_and_memory_md_is_a_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory", "I am a file\n")
    (ws / "MEMORY.md").mkdir(parents=True)
    write(ws, "memory.md", "- legacyword\n")
    idx = make(ws, tmp_path / "i.sqlite")
    r = idx.sync()
    assert r.files == 1 and not r.files_failed
    assert found(idx, "legacyword") == ["memory.md"]
    assert memory_get(ws, "memory")["error"] == "path required"
    assert "error" in memory_get(ws, "MEMORY.md")  # a folder: not a regular file


@pytest.mark.slow
def test_deeply_nested_folders_do_not_crash_discovery(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    deep = ws / "memory"
    deep.mkdir(parents=True)
    cwd = os.getcwd()
    os.chdir(deep)
    try:  # 1,200 levels: beyond Python's recursion limit, within PATH_MAX
        for _ in range(1200):
            os.mkdir("d")
            os.chdir("d")
        Path("bottom.md").write_text("- deepword\n")
    finally:
        os.chdir(cwd)
    try:
        files = discover_memory_files(ws)
        assert len(files) == 1 and files[0].path.endswith("/d/bottom.md")
        idx = make(ws, tmp_path / "i.sqlite")
        assert idx.sync().chunks == 1 and len(found(idx, "deepword")) == 1
        idx.close()
    finally:
        _remove_chain(deep)  # shutil.rmtree (and pytest's clean-up) would recurse too deep


def _remove_chain(top: Path) -> None:
    cwd = os.getcwd()
    os.chdir(top)
    depth = 0
    try:
        while os.path.isdir("d"):
            os.chdir("d")
            depth += 1
        for name in os.listdir("."):
            os.unlink(name)
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(cwd)


def test_fifo_never_blocks_a_reader(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "m\n")
    (ws / "memory").mkdir()
    os.mkfifo(ws / "memory" / "pipe.md")
    result: dict = {}
    t = threading.Thread(
        target=lambda: result.update(get=memory_get(ws, "memory/pipe.md")), daemon=True
    )
    t.start()
    t.join(10)
    assert not t.is_alive(), "memory_get blocked on a FIFO"
    assert result["get"]["error"] == "not a regular file"
    with pytest.raises(MemoryFileError, match="not a regular file"):
        read_memory_file(ws / "memory" / "pipe.md")


def test_files_vanishing_or_changing_between_listing_and_reading(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory/stay.md", "- stayword\n")
    write(ws, "memory/gone.md", "- goneword\n")
    write(ws, "memory/edit.md", "- oldword\n")
    idx = make(ws, tmp_path / "i.sqlite")
    idx.sync()

    class Racy(MemoryIndex):
        def discover(self):
            files = super().discover()
            (ws / "memory/gone.md").unlink()
            write(ws, "memory/edit.md", "- newword\n")
            write(ws, "memory/late.md", "- lateword\n")  # created after the listing
            return files

    racy = make(ws, tmp_path / "i.sqlite")
    racy.__class__ = Racy
    r = racy.sync()
    assert r.files_failed == [("memory/gone.md", "file vanished before it could be read")]
    assert found(racy, "newword") == ["memory/edit.md"] and not found(racy, "oldword")
    # The vanished file keeps its last rows until a sync sees it gone; the late one waits.
    assert found(racy, "goneword") == ["memory/gone.md"] and not found(racy, "lateword")
    r2 = make(ws, tmp_path / "i.sqlite").sync()
    assert r2.files_removed == 1 and not r2.files_failed
    assert not found(idx, "goneword") and found(idx, "lateword") == ["memory/late.md"]


def test_folder_swapped_for_a_symlink_after_discovery_is_not_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "memory/sub/note.md", "- innocent\n")
    write(tmp_path, "outside/note.md", f"{SECRET}\n")

    class Swapping(MemoryIndex):
        def discover(self):
            files = super().discover()
            (ws / "memory/sub/note.md").unlink()
            (ws / "memory/sub").rmdir()
            os.symlink(tmp_path / "outside", ws / "memory/sub")
            return files

    idx = make(ws, tmp_path / "i.sqlite")
    idx.__class__ = Swapping
    r = idx.sync()
    assert r.files_failed == [
        ("memory/sub/note.md", "a folder on its path is a symlink (never followed)")
    ]
    assert SECRET not in json.dumps(
        [t for (t,) in idx.connect().execute("SELECT text FROM chunks")]
    )


def _as_nobody(fn):
    """Run ``fn()`` in a forked child with uid/gid 65534 and return its JSON-able result
    (root ignores file permissions, so permission errors need another user)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 0
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            out = fn()
        except BaseException as exc:
            out, code = {"child error": repr(exc)}, 1
        os.write(w, json.dumps(out).encode())
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def test_unreadable_files_and_folders_are_reported() -> None:
    base = Path(tempfile.mkdtemp(prefix="memlab-perm-"))
    try:
        os.chmod(base, 0o755)
        ws = base / "ws"
        write(ws, "MEMORY.md", "- readableword\n")
        write(ws, "memory/locked.md", f"{SECRET}\n")
        write(ws, "memory/closed/inner.md", f"{SECRET}\n")
        for d in (ws, ws / "memory"):
            os.chmod(d, 0o755)
        os.chmod(ws / "MEMORY.md", 0o644)
        os.chmod(ws / "memory/locked.md", 0o000)
        os.chmod(ws / "memory/closed", 0o000)
        dbdir = base / "db"
        dbdir.mkdir()
        os.chmod(dbdir, 0o777)

        def run() -> dict:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                idx = MemoryIndex(ws, db_path=dbdir / "i.sqlite", embedder=None, progress=False)
                rep = idx.sync()
                hits = found(idx, "readableword")
            return {
                "failed": rep.files_failed,
                "hits": hits,
                "warnings": [str(c.message) for c in caught],
                "get": memory_get(ws, "memory/locked.md"),
            }

        out = _as_nobody(run) if os.geteuid() == 0 else json.loads(json.dumps(run()))
        assert "child error" not in out, out
        assert out["failed"] == [["memory/locked.md", "permission denied"]]
        assert out["hits"] == ["MEMORY.md"]
        assert any("cannot list" in m and "closed" in m for m in out["warnings"])
        assert out["get"] == {"error": "permission denied", "path": "memory/locked.md"}
    finally:
        for p in base.rglob("*"):
            with contextlib.suppress(OSError):
                os.chmod(p, 0o755, follow_symlinks=False)
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_many_tiny_files(tmp_path: Path) -> None:
    """2,000 tiny files (the 10,000-file form is in benchmarks/load.py --tiny-files)."""
    ws = tmp_path / "ws"
    for i in range(2000):
        write(ws, f"memory/d{i % 40}/n{i}.md", f"- tiny note tok{i}x\n")
    idx = make(ws, tmp_path / "i.sqlite")
    r = idx.sync()
    assert r.files == 2000 and r.chunks == 2000 and not r.files_failed
    assert found(idx, "tok1999x") == ["memory/d39/n1999.md"]
    write(ws, "memory/d0/n0.md", "- changed tokchangedx\n")
    r2 = idx.sync()
    assert r2.files_changed == 1 and r2.chunks_added == 1 and r2.chunks_removed == 1


@pytest.mark.slow
def test_big_log_bounded_memory_and_incremental_append(tmp_path: Path) -> None:
    """A 5 MB daily log in a subprocess: peak memory stays a small multiple of the file
    and appending a line rewrites only the last chunks (benchmarks/load.py --big-log
    measures the 50 MB form)."""
    import subprocess

    code = f"""
import json, resource, time, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1] / "benchmarks")!r})
from load import big_log_run
print(json.dumps(big_log_run({str(tmp_path)!r}, megabytes=5, embedder="hashing-words")))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["chunks"] > 3000
    assert res["peak_rss_mb"] - res["rss_before_mb"] < 40 * res["megabytes"]
    assert res["append_chunks_added"] <= 3 and res["append_chunks_removed"] <= 3
    assert res["append_found"]


# ---------------------------------------------------------------------- memory_get
@pytest.fixture(scope="module")
def get_env(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("getenv")
    outside = base / "outside"
    write(outside, "secret.md", SECRET)
    ws = base / "ws"
    allowed = {
        "MEMORY.md": "ok root",
        "memory.md": "ok legacy",
        "dreams.md": "ok dreams",
        "memory/a.md": "ok a",
        "memory/sub/b.md": "ok b",
        "memory/%2e%2e/c.md": "ok literal percent folder",
    }
    for rel, text in allowed.items():
        write(ws, rel, text)
    write(ws, "secret.md", SECRET)
    write(ws, "other/c.md", SECRET)
    write(ws, "memory/notes.txt", SECRET)
    os.symlink(outside / "secret.md", ws / "memory" / "link.md")
    os.symlink(outside, ws / "memory" / "linkdir")
    os.symlink(ws / "memory" / "a.md", ws / "memory" / "alias.md")  # inside, still refused
    return {"ws": ws, "outside": outside, "allowed": allowed}


BAD_PATHS = [
    "../secret.md",
    "../outside/secret.md",
    "memory/../secret.md",
    "memory/../../outside/secret.md",
    "memory/sub/../../secret.md",
    "secret.md",
    "other/c.md",
    "memory/notes.txt",
    "memory/link.md",
    "memory/linkdir/secret.md",
    "memory/alias.md",
    "memory\\a.md",
    "memory\\..\\secret.md",
    "..\\outside\\secret.md",
    "memory/a.md\x00",
    "memory/a.md\x00.md",
    "\x00",
    "%2e%2e/secret.md",
    "%2e%2e/outside/secret.md",
    "..%2fsecret.md",
    "~/secret.md",
    "/etc/passwd",
    "/etc/hostname.md",
    "",
    "   ",
    ".",
    "memory",
    "memory/",
]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_memory_get_refuses(get_env: dict, path: str) -> None:
    res = memory_get(get_env["ws"], path)
    assert res.get("error") == "path required", res
    assert SECRET not in json.dumps(res)


def test_memory_get_refuses_absolute_outside(get_env: dict) -> None:
    ws, outside = get_env["ws"], get_env["outside"]
    for p in (outside / "secret.md", ws / "secret.md", ws / "memory/../secret.md"):
        res = memory_get(ws, str(p))
        assert res.get("error") == "path required" and SECRET not in json.dumps(res)
    assert memory_get(ws, str(ws / "memory/a.md"))["text"] == "ok a"
    # Never URL-decoded: "%2e%2e" is a literal folder name under memory/.
    assert memory_get(ws, "memory/%2e%2e/c.md")["text"] == "ok literal percent folder"


def test_memlab_get_cli_refuses(get_env: dict) -> None:
    from memlab.cli import main

    for path in ("../outside/secret.md", "memory/link.md", "memory\\a.md", "secret.md"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["get", str(get_env["ws"]), path])
        assert rc == 2 and "refused: " in err.getvalue(), path  # the rule broken, exit 2
        assert SECRET not in out.getvalue() + err.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["get", str(get_env["ws"]), "memory/sub/b.md"]) == 0
    assert out.getvalue() == "ok b\n"


COMPONENTS = [
    "..",
    ".",
    "",
    "memory",
    "sub",
    "MEMORY.md",
    "memory.md",
    "dreams.md",
    "a.md",
    "b.md",
    "c.md",
    "secret.md",
    "other",
    "outside",
    "link.md",
    "linkdir",
    "alias.md",
    "notes.txt",
    "%2e%2e",
    "%2f",
    "~",
    "\\",
    "\x00",
    "．．",  # fullwidth dots: not a traversal anywhere
    "Memory",
    "a.md ",
    "a.md\n",
]


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(
        st.sampled_from(["", "/", "ws", "outside", "//"]),
        st.lists(st.sampled_from(COMPONENTS), max_size=7),
        st.sampled_from(["/", "\\", "//"]),
    )
)
def test_memory_get_property_never_reads_outside(get_env: dict, parts) -> None:
    prefix, comps, sep = parts
    ws, allowed = get_env["ws"], get_env["allowed"]
    lead = {"ws": f"{ws}/", "outside": f"{get_env['outside']}/"}.get(prefix, prefix)
    path = lead + sep.join(comps)
    res = memory_get(ws, path)
    blob = json.dumps(res)
    assert SECRET not in blob
    if "error" in res:
        return
    # Anything returned is an allowed memory file's content, under its own path.
    norm = os.path.normpath(os.path.join(str(ws), path))
    rel = os.path.relpath(norm, ws).replace(os.sep, "/")
    assert res["path"] == rel
    assert rel in allowed or (rel.startswith("memory/") and res["text"] == "")
    if res["text"]:
        assert res["text"] == allowed[rel]


@pytest.mark.slow
def test_fuzz_target_reduced() -> None:
    """A reduced, repeatable run of tests/fuzz_workspace.py (the fuzzer runs thousands)."""
    from tests.fuzz_workspace import fuzz

    fuzz(25, seed=0)
