"""SIGKILL the indexer at random moments of incremental and full syncs, many times.

After every kill the index must open, pass SQLite's and FTS5's integrity checks, keep
its tables consistent (one FTS row per chunk, same text; no duplicate line range) and
answer a search; the next sync must converge to exactly the content of an index built
from scratch (files, chunk ids, line ranges, texts, vectors, fingerprint).

Each sync runs in a child forked from a "zygote" process that has already imported
memlab and warmed the hashing embedder, so a trial costs the sync, not an interpreter
start; the kill lands at a uniformly random moment of the sync's measured duration.

    .venv/bin/python benchmarks/kill_loop.py                  # 200 kills, both modes
    .venv/bin/python benchmarks/kill_loop.py --kills 50 --files 80 --mode full

The test suite runs a reduced form (tests/test_crash.py). The result is printed as
JSON: trials, kills per mode, failures (expected: none) and the time taken.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DIMS = 64
TOKENS = 64  # small chunks: more rows per file, more places for a kill to land
OVERLAP = 8
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november"
    " oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


# ---------------------------------------------------------------------- workspace
def make_workspace(root: Path, files: int, seed: int) -> Path:
    """A workspace of ``files`` daily logs (``memory/2026-MM-DD.md``) plus ``MEMORY.md``,
    each a few dozen lines holding a unique token ``t<file>x<line>``."""
    rng = random.Random(seed)
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Memory\n- durable fact tmemoryx0\n", encoding="utf-8")
    for i in range(files):
        lines = [f"# day {i}"]
        lines += [_line(rng, f"t{i}x{j}") for j in range(rng.randint(10, 40))]
        (ws / "memory" / _day(i)).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ws


def _day(i: int) -> str:
    return f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}.md"


def _line(rng: random.Random, token: str) -> str:
    return f"- {token} " + " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))


def mutate(ws: Path, rng: random.Random, step: int) -> list[str]:
    """Apply 2–6 random edits (append, rewrite, delete, create); returns what was done."""
    done = []
    files = sorted((ws / "memory").glob("*.md"))
    for k in range(rng.randint(2, 6)):
        op = rng.choice(["append", "append", "rewrite", "delete", "create"])
        tok = f"s{step}k{k}"
        if op == "create" or not files:
            p = ws / "memory" / f"new-{step}-{k}.md"
            p.write_text("\n".join(_line(rng, f"{tok}y{j}") for j in range(20)) + "\n")
            files.append(p)
        elif op == "append":
            p = rng.choice(files)
            with p.open("a", encoding="utf-8") as fh:
                fh.write("".join(_line(rng, f"{tok}y{j}") + "\n" for j in range(rng.randint(1, 8))))
        elif op == "rewrite":
            p = rng.choice(files)
            p.write_text("\n".join(_line(rng, f"{tok}y{j}") for j in range(30)) + "\n")
        else:
            p = rng.choice(files)
            p.unlink()
            files.remove(p)
        done.append(f"{op} {p.name}")
    return done


# ---------------------------------------------------------------------- checks
def index_digest(db: Path) -> dict[str, Any]:
    """The index's content without rowids or timestamps: what two correct indexes of
    the same workspace must share."""
    con = sqlite3.connect(db)
    try:
        fp = con.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        return {
            "fingerprint": json.loads(fp[0]) if fp else None,
            "files": sorted(con.execute("SELECT path, source, hash, size FROM files")),
            "chunks": sorted(
                con.execute(
                    "SELECT id, path, source, start_line, end_line, hash, model, text,"
                    " embedding FROM chunks"
                )
            ),
        }
    finally:
        con.close()


def consistency_problems(db: Path, *, fts_check: bool = True, dims: int | None = DIMS) -> list[str]:
    """Everything wrong with an index file: SQLite integrity, FTS5 integrity, FTS rows
    that do not mirror the chunk rows, duplicate line ranges, chunks of unknown files,
    missing vectors. Empty when the index is sound. ``fts_check`` runs FTS5's own
    ``integrity-check`` command, which takes a write lock (skip it with a live writer);
    ``dims`` is the expected vector width (None: not checked)."""
    problems: list[str] = []
    con = sqlite3.connect(db, timeout=30)
    try:
        return problems + _consistency(con, fts_check, dims)
    except sqlite3.Error as exc:
        return [*problems, f"{type(exc).__name__}: {exc}"]
    finally:
        con.close()


def _consistency(con: sqlite3.Connection, fts_check: bool, dims: int | None) -> list[str]:
    problems: list[str] = []
    ok = con.execute("PRAGMA integrity_check").fetchall()
    if ok != [("ok",)]:
        problems.append(f"integrity_check: {ok[:3]}")
    if fts_check:
        try:
            con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
            con.commit()
        except sqlite3.DatabaseError as exc:
            problems.append(f"fts integrity-check: {exc}")
    con.execute("BEGIN")  # one read snapshot for the comparisons below
    try:
        chunks = dict(con.execute("SELECT rowid, text FROM chunks"))
        fts = dict(con.execute("SELECT rowid, text FROM chunks_fts"))
        dup = con.execute(
            "SELECT path, start_line, end_line, count(*) FROM chunks"
            " GROUP BY path, start_line, end_line HAVING count(*) > 1"
        ).fetchall()
        orphans = con.execute(
            "SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)"
        ).fetchone()[0]
        no_vec = con.execute(
            "SELECT count(*) FROM chunks WHERE embedding IS NULL OR length(embedding) != ?",
            ((dims or 0) * 4,),
        ).fetchone()[0]
        if dims is None:
            no_vec = 0
    finally:
        con.rollback()
    if chunks != fts:
        problems.append(f"fts rows differ from chunk rows ({len(fts)} vs {len(chunks)})")
    if dup:
        problems.append(f"duplicate chunks: {dup[:3]}")
    if orphans:
        problems.append(f"{orphans} chunks of files not in the files table")
    if no_vec:
        problems.append(f"{no_vec} chunks without a {dims}-d vector")
    return problems


def make_index(ws: Path, db: Path) -> Any:
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.store import MemoryIndex

    return MemoryIndex(
        ws,
        db_path=db,
        embedder=HashingEmbedder(DIMS),
        chunker=ChunkerConfig("openclaw", TOKENS, OVERLAP),
        progress=False,
    )


def answer_problems(ws: Path, db: Path) -> list[str]:
    """Open the index as a reader and search it: a stored token must be found by the
    keyword leg, the vector leg must answer, and ``memory_search`` must not fail."""
    from memlab.retrieval.textquery import build_fts_query
    from memlab.tools import memory_search

    problems: list[str] = []
    idx = make_index(ws, db)
    try:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT text FROM chunks ORDER BY random() LIMIT 20").fetchall()
        con.close()
        tokens = [(t, w) for (t,) in rows for w in t.split() if w[:1] in "ts" and w[-1].isdigit()]
        if not tokens:
            return problems
        text, token = tokens[0]
        pos, _ = idx.keyword_search(build_fts_query(token), 5)
        if pos.size == 0:
            problems.append(f"stored token {token!r} not found by the keyword leg")
        qv = idx.embed_queries([text])
        vpos, _ = idx.vector_search(qv, 3)
        if vpos.size == 0 or vpos[0, 0] < 0:
            problems.append("vector leg returned nothing")
        out = memory_search(idx, token)
        if "error" in out:
            problems.append(f"memory_search failed: {out['error']}")
    finally:
        idx.close()
    return problems


# ---------------------------------------------------------------------- zygote
def zygote_main() -> None:
    """Forks one syncing child per job read from stdin (JSON), prints its pid, and reaps
    it when told to (so the parent can SIGKILL a pid that cannot have been reused)."""
    from memlab.embed import HashingEmbedder

    HashingEmbedder(DIMS).embed_documents(["warm up the imports and the projection"])
    print("ready", flush=True)
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:  # child: one sync, then leave without running parent cleanups
            code = 0
            try:
                make_index(Path(job["ws"]), Path(job["db"])).sync(force=job["force"])
            except BaseException:
                import traceback

                traceback.print_exc()
                code = 3
            os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        sys.stdin.readline()  # "reap"
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": status}), flush=True)


class Zygote:
    """Parent side of ``zygote_main``."""

    def __init__(self) -> None:
        here = str(Path(__file__).resolve().parent)
        code = (
            f"import sys; sys.path.insert(0, {here!r}); import kill_loop; kill_loop.zygote_main()"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        first = self.proc.stdout.readline().strip()
        if first != "ready":
            raise RuntimeError(f"zygote failed to start: {first!r}")

    def sync(self, ws: Path, db: Path, *, force: bool, kill_after: float | None) -> dict:
        """Run one sync in a forked child, SIGKILLed ``kill_after`` seconds after the
        fork when given. Returns {killed, status, seconds}."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.monotonic()
        self.proc.stdin.write(json.dumps({"ws": str(ws), "db": str(db), "force": force}) + "\n")
        pid = json.loads(self.proc.stdout.readline())["pid"]
        if kill_after is not None:
            time.sleep(max(0.0, kill_after - (time.monotonic() - t0)))
            os.kill(pid, signal.SIGKILL)  # the child is not reaped yet: pid still ours
        self.proc.stdin.write("reap\n")
        status = json.loads(self.proc.stdout.readline())["status"]
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        if not killed and os.WEXITSTATUS(status) != 0:
            raise RuntimeError(f"sync child failed with status {status}")
        return {"killed": killed, "status": status, "seconds": time.monotonic() - t0}

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ---------------------------------------------------------------------- the loop
@dataclass
class KillLoopResult:
    trials: int = 0
    kills: dict[str, int] = field(default_factory=lambda: {"incremental": 0, "full": 0})
    completed_before_kill: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sync_seconds: dict[str, float] = field(default_factory=dict)


def kill_loop(
    kills: int,
    *,
    files: int = 40,
    mode: str = "both",
    seed: int = 0,
    workdir: Path | None = None,
    max_trials: int | None = None,
) -> KillLoopResult:
    """Run trials until ``kills`` syncs were really killed (or ``max_trials``).

    A trial: edit the workspace (incremental) or not (full = ``force``), start a sync,
    SIGKILL it at a uniform random time in [0, 1.1 × the calibrated sync duration], then
    check the index (opens, consistent, answers), sync again without a kill and compare
    with an index built from scratch. Every problem is recorded in ``failures``.
    """
    modes = {"both": ["incremental", "full"], "incremental": ["incremental"], "full": ["full"]}
    if mode not in modes:
        raise ValueError(f"mode must be one of {', '.join(modes)}; got {mode!r}")
    rng = random.Random(seed)
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="memlab-kill-")) if workdir is None else workdir
    res = KillLoopResult()
    t_start = time.monotonic()
    zyg = Zygote()
    try:
        ws = make_workspace(root, files, seed)
        db = root / "index.sqlite"
        zyg.sync(ws, db, force=False, kill_after=None)
        # Calibrate: how long each kind of sync takes on this machine, now.
        mutate(ws, rng, -1)
        res.sync_seconds["incremental"] = zyg.sync(ws, db, force=False, kill_after=None)["seconds"]
        res.sync_seconds["full"] = zyg.sync(ws, db, force=True, kill_after=None)["seconds"]
        limit = max_trials if max_trials is not None else kills * 4
        step = 0
        while sum(res.kills.values()) < kills and res.trials < limit:
            kind = modes[mode][step % len(modes[mode])]
            step += 1
            res.trials += 1
            if kind == "incremental":
                mutate(ws, rng, step)
            delay = rng.uniform(0.0, 1.1 * res.sync_seconds[kind])
            out = zyg.sync(ws, db, force=kind == "full", kill_after=delay)
            if out["killed"]:
                res.kills[kind] += 1
            else:
                res.completed_before_kill += 1
                # The sync took at most `delay`: the calibration (made once, perhaps on a
                # busier machine) overstated it, so later kills would mostly come too late.
                res.sync_seconds[kind] = min(res.sync_seconds[kind], delay)
            tag = f"trial {res.trials} ({kind}, kill at {delay:.3f} s)"
            for prob in consistency_problems(db) + answer_problems(ws, db):
                res.failures.append(f"{tag} after the kill: {prob}")
            zyg.sync(ws, db, force=False, kill_after=None)
            fresh = root / f"fresh-{step}.sqlite"
            make_index(ws, fresh).sync()
            if index_digest(db) != index_digest(fresh):
                res.failures.append(f"{tag}: the next sync did not converge to a fresh index")
            for p in root.glob("fresh-*"):
                p.unlink()
            left = list(root.glob("index.sqlite.tmp-*"))
            if left:
                res.failures.append(f"{tag}: temp files left after the next sync: {left}")
    finally:
        zyg.close()
        if own:
            shutil.rmtree(root, ignore_errors=True)
    res.seconds = time.monotonic() - t_start
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=200, help="syncs to kill (default 200)")
    ap.add_argument("--files", type=int, default=40, help="daily logs in the workspace")
    ap.add_argument("--mode", choices=("both", "incremental", "full"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    res = kill_loop(args.kills, files=args.files, mode=args.mode, seed=args.seed)
    print(json.dumps(res.__dict__, indent=2))
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
