"""The ``memlab mcp --http`` ready line: announced whole, read back exactly, and usable at once.

The flake behind it (``test_mcp_server_under_load_loses_nothing``, MCPError "Not Found" on
``server/discover`` then ``initialize``): the ready line was ``print()``ed, text and newline
in two writes, while the watcher thread logged its first sync on the same stderr. Its text
could land between the two, ``…:PORT/mcpmemlab watch: synced …``, and a client reading the
URL up to the next space posted to ``/mcpmemlab``: Starlette's plain 404 on every request.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from memlab.server import announce_serving, serving_url
from tests.conftest import stop_process
from tests.test_server import post  # the initialize POST, its status (no retry)

REPO = Path(__file__).resolve().parents[1]
# At least this many ready lines, for at least this long, while another thread logs: print()
# glued other text into 31 to 8509 of them, in each of 15 runs (measured).
ANNOUNCEMENTS = 2000
ANNOUNCE_SECONDS = 1.0
STARTS = 3


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("memlab mcp: serving http://127.0.0.1:8765/mcp\n", "http://127.0.0.1:8765/mcp"),
        # a line another thread's text was glued to: the URL ends at the path
        (
            "memlab mcp: serving http://127.0.0.1:41643/mcpmemlab watch: synced 0 changed",
            "http://127.0.0.1:41643/mcp",
        ),
        ("memlab watch: x memlab mcp: serving http://[::1]:9/mcp\n", "http://[::1]:9/mcp"),
        ("memlab mcp: serving http://localhost:80/mcp", "http://localhost:80/mcp"),
        ("memlab mcp: /tmp/ws (openclaw; index /tmp/i.sqlite)\n", None),
        ("memlab mcp: serving http://127.0.0.1/mcp", None),  # no port: not the server's line
    ],
)
def test_serving_url_reads_exactly_the_announced_url(text: str, url: str | None) -> None:
    assert serving_url(text) == url


def test_announce_serving_keeps_its_line_whole_while_another_thread_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stderr as under PYTHONUNBUFFERED=1 (CI): every write is a syscall that releases the
    # GIL, so another thread's print() can run between a print()'s text and its newline.
    out = tmp_path / "stderr.txt"
    stream = io.TextIOWrapper(io.FileIO(out, "w"), encoding="utf-8", write_through=True)
    stop, talking = threading.Event(), threading.Event()

    def chatter() -> None:  # the watcher's log lines: print(), two writes each
        while not stop.is_set():
            print("memlab watch: synced 0 changed / 0 removed file(s)", file=sys.stderr)
            talking.set()

    with monkeypatch.context() as m:
        m.setattr(sys, "stderr", stream)
        t = threading.Thread(target=chatter, daemon=True)
        t.start()
        try:
            assert talking.wait(10)  # announce only while the other thread is writing
            sent, until = 0, time.monotonic() + ANNOUNCE_SECONDS
            while sent < ANNOUNCEMENTS or time.monotonic() < until:
                announce_serving(f"http://127.0.0.1:{10000 + sent % 50000}/mcp")
                sent += 1
        finally:
            stop.set()
            t.join(10)
    stream.close()
    text = out.read_text(encoding="utf-8")
    ports = re.findall(r"serving http://127\.0\.0\.1:(\d+)/mcp(.?)", text, flags=re.S)
    assert len(ports) == sent
    glued = [p for p, after in ports if after != "\n"]
    assert not glued, f"{len(glued)} ready lines had other text before their newline"


def post_on_announce(cmd: list[str], env: dict[str, str]) -> tuple[dict[str, object], str]:
    """Start ``cmd`` and, from the thread reading its stderr, POST ``initialize`` to the
    first announced URL the moment its line arrives; returns ``{"status": HTTP status or the
    exception, "line_ends_with_url": bool}`` (empty if no URL came within 60 s) and the
    server's stderr."""
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    result: dict[str, object] = {}
    lines: list[str] = []

    def drain() -> None:  # read stderr to its end; the first ready line is acted on
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            lines.append(line)
            url = serving_url(line)
            if url and "status" not in result:
                try:
                    result["status"] = post(url, {})
                except Exception as exc:  # reported by the caller with the server's stderr
                    result["status"] = repr(exc)
                result["line_ends_with_url"] = line.rstrip("\n").endswith(url)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        for _ in range(600):
            if "status" in result or proc.poll() is not None:
                break
            reader.join(0.1)
    finally:
        stop_process(proc)
        reader.join(10)
    return result, "".join(lines)


@pytest.mark.slow
def test_http_server_answers_a_request_sent_the_moment_it_announces(tmp_path: Path) -> None:
    # The line is printed once the socket listens, before uvicorn has started the app (the
    # SDK's session manager); a request sent at once waits in the listen backlog, since
    # uvicorn runs the lifespan before it accepts.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe dentist appointment is on Tuesday.\n")
    cmd = [sys.executable, "-m", "memlab.cli", "mcp", str(ws), "--embedder", "hashing"]
    cmd += ["--http", "--port", "0", "--debounce-ms", "0", "--settle-ms", "0"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env["PYTHONUNBUFFERED"] = "1"  # as CI runs it
    for _ in range(STARTS):
        result, log = post_on_announce(cmd, env)
        assert result.get("status") == 200, f"{result}\n{log}"
        assert result["line_ends_with_url"], log
