"""How fast ``memlab harvest`` reads an agent's transcripts: 1,000 sessions, 10,000 calls.

Generates, in a temporary folder, a workspace (``MEMORY.md`` and 90 daily logs) and
``--sessions`` JSONL transcripts in the release's format, ``--calls`` ``memory_search``
calls each (one user turn per call): each call answered with 6 hits whose snippets are
release-sized (the chunk's first 700 characters plus the ``Source:`` line, the JSON text
and its ``details`` copy, as OpenClaw stores them), a third of them followed by a
``memory_get`` of a hit's lines and half by a reply citing one; plus noise (a model change
per session, another tool's call every fifth turn). Then times ``harvest`` end to end
(reading, linking, anchoring every hit and span, writing OUT), median of ``--repeats``
runs after one warm-up, and prints the table. Goal: under 10 s for 1,000 sessions /
10,000 calls on 2 cores.

    nice -n 10 .venv/bin/python benchmarks/harvest_speed.py --json benchmarks/results/harvest_speed.json
    .venv/bin/python benchmarks/harvest_speed.py --quick     # 100 sessions, seconds
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import log, parser, print_table, report, stats

DAYS = 90
HITS = 6
WORDS = (
    "backup gateway invoice webhook postgres deploy nginx ticket release schema cache "
    "token rotation outage disk budget report customer export dashboard latency retry"
).split()


def _line(rnd: random.Random, n: int) -> str:
    return f"- note {n}: " + " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 16)))


def make_workspace(root: Path, seed: int = 0) -> dict[str, list[str]]:
    """``root/ws``: ``MEMORY.md`` and ``DAYS`` daily logs of 40 lines; returns each file's
    lines."""
    rnd = random.Random(seed)
    files: dict[str, list[str]] = {
        "MEMORY.md": ["# Memory", ""] + [_line(rnd, i) for i in range(60)]
    }
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for d in range(DAYS):
        day = (start + timedelta(days=d)).strftime("%Y-%m-%d")
        files[f"memory/{day}.md"] = [f"# {day}", ""] + [_line(rnd, i) for i in range(40)]
    for rel, lines in files.items():
        p = root / "ws" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
    return files


def _session(
    sid: str, t: float, rnd: random.Random, files: dict[str, list[str]], calls: int
) -> str:
    """One transcript of ``calls`` calls (module docstring), starting at ``t``."""
    paths = sorted(files)
    out = [json.dumps({"type": "session", "version": 4, "id": sid, "cwd": "/ws"})]
    n = 0

    def rec(body: dict[str, Any], role_msg: dict[str, Any] | None = None) -> None:
        nonlocal n, t
        n += 1
        t += 2.0
        stamp = datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
        entry = {"type": body.pop("type", "message"), "id": f"e{n:06d}", "parentId": None}
        entry["timestamp"] = stamp
        entry.update(body)
        if role_msg is not None:
            entry["message"] = {**role_msg, "timestamp": int(t * 1000)}
        out.append(json.dumps(entry))

    def result(call_id: str, tool: str, payload: dict[str, Any], details: bool) -> None:
        msg = {"role": "toolResult", "toolCallId": call_id, "toolName": tool, "isError": False}
        msg["content"] = [{"type": "text", "text": json.dumps(payload, indent=2)}]
        if details:
            msg["details"] = payload
        rec({}, msg)

    rec({"type": "model_change", "provider": "openai", "modelId": "gpt-5.2"})
    for c in range(calls):
        rec({}, {"role": "user", "content": [{"type": "text", "text": f"question {c}"}]})
        query = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 5)))
        cid = f"call_{sid}_{c}"
        call = {"type": "toolCall", "id": cid, "name": "memory_search"}
        rec({}, {"role": "assistant", "content": [{**call, "arguments": {"query": query}}]})
        hits = []
        for _ in range(HITS):
            path = rnd.choice(paths)
            lines = files[path]
            a = rnd.randint(1, len(lines) - 8)
            text = "\n".join(lines[a - 1 : a + 7])[:700]
            hits.append(
                {
                    "path": path,
                    "startLine": a,
                    "endLine": a + 7,
                    "score": round(rnd.uniform(0.3, 0.9), 4),
                    "snippet": f"{text}\n\nSource: {path}#L{a}-L{a + 7}",
                    "source": "memory",
                }
            )
        payload = {"results": hits, "provider": "openai", "model": "m", "mode": "hybrid"}
        result(cid, "memory_search", payload, details=True)
        first = hits[0]
        if c % 3 == 0:
            gid = f"get_{sid}_{c}"
            a = first["startLine"]
            args = {"path": first["path"], "from": a, "lines": 3}
            get = {"type": "toolCall", "id": gid, "name": "memory_get", "arguments": args}
            rec({}, {"role": "assistant", "content": [get]})
            text = "\n".join(files[first["path"]][a - 1 : a + 2])
            answer = {"status": "ok", "text": text, "path": first["path"], "from": a, "lines": 3}
            result(gid, "memory_get", answer, details=False)
        if c % 5 == 4:
            other = {"type": "toolCall", "id": f"x{c}", "name": "exec", "arguments": {}}
            rec({}, {"role": "assistant", "content": [other]})
        reply = "Done."
        if c % 2 == 0:
            reply += f"\n\nSource: {first['path']}#L{first['startLine']}"
        rec({}, {"role": "assistant", "content": [{"type": "text", "text": reply}]})
    return "\n".join(out) + "\n"


def make_sessions(root: Path, files: dict[str, list[str]], n_sessions: int, calls: int) -> int:
    """``n_sessions`` transcripts of ``calls`` calls each under ``root/sessions``; returns
    the bytes written."""
    rnd = random.Random(1)
    folder = root / "sessions"
    folder.mkdir(parents=True)
    total = 0
    t0 = datetime(2026, 1, 2, tzinfo=UTC).timestamp()
    for s in range(n_sessions):
        data = _session(f"s{s:05d}", t0 + s * 3600.0, rnd, files, calls)
        (folder / f"s{s:05d}.jsonl").write_text(data)
        total += len(data.encode())
    return total


def measure(n_sessions: int, calls: int, repeats: int) -> dict[str, Any]:
    """Generate the agent, then time ``harvest`` ``repeats`` times (after one warm-up run)."""
    from memlab.datasets.harvest import harvest

    tmp = Path(tempfile.mkdtemp(prefix="harvest-speed-"))
    try:
        log(f"generating {n_sessions} sessions x {calls} calls ...")
        files = make_workspace(tmp)
        size = make_sessions(tmp, files, n_sessions, calls)
        times = []
        result = None
        for i in range(repeats + 1):
            t = time.perf_counter()
            result = harvest(tmp / "ws", tmp / "out", sessions=tmp / "sessions")
            if i:  # the first run warms the file cache and the imports
                times.append(time.perf_counter() - t)
            log(f"run {i}: {time.perf_counter() - t:.2f} s")
        assert result is not None
        s = result.summary
        timing = stats(times)
        return {
            "sessions": s["sessions"],
            "calls": s["calls"],
            "entries": s["entries"],
            "transcript_mb": round(size / 2**20, 1),
            "shown": s["shown"],
            "evidence": s["evidence"],
            "seconds": timing,
            "calls_per_s": round(s["calls"] / timing["median"]),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = parser(__doc__.splitlines()[0], "harvest_speed")
    ap.add_argument("--sessions", type=int, default=None, help="sessions (default 1000)")
    ap.add_argument("--calls", type=int, default=10, help="memory_search calls per session")
    args = ap.parse_args()
    n = args.sessions or (100 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    row = measure(n, args.calls, repeats)
    print_table([row])
    inputs = {
        "sessions": n,
        "calls_per_session": args.calls,
        "repeats": repeats,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    report("harvest_speed", args, inputs, {"rows": [row]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
