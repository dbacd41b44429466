"""``memlab judge``'s loop: show a span, read one answer, repeat. At a terminal an answer is
one key press (the terminal in cbreak mode for the read only, restored after it; Ctrl-C
still interrupts); when stdin is not a terminal, one answer per line, so scripts and tests
drive it. Every answer is on disk before the next span shows (``store``), so q, Ctrl-C, a
closed stdin or a kill lose nothing.
"""

from __future__ import annotations

import sys
from typing import IO

from memlab.config.vocab import JUDGE_KEYS
from memlab.errors import EXIT_INTERRUPTED, EXIT_OK
from memlab.eval.judge.session import JudgeSession

__all__ = ["read_key", "run_loop"]

PROMPT = "  ".join(f"{k} {m}" for k, m in JUDGE_KEYS.items())


def read_key(stdin: IO[str], tty: bool) -> str | None:
    """One answer: a key press at a terminal (``termios``/``tty`` cbreak mode for this read
    only, restored in any case; keys typed ahead are kept), else the first character of the next non-empty line; None at the end of
    input."""
    try:
        import termios
        import tty as tty_mod
    except ImportError:  # no termios (Windows): one answer per line there too
        tty = False
    if tty:
        fd = stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            # TCSANOW, not the default TCSAFLUSH: a key typed ahead is an answer, not noise
            tty_mod.setcbreak(fd, termios.TCSANOW)
            ch = stdin.read(1)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        return ch or None
    while True:
        line = stdin.readline()
        if not line:
            return None
        if line.strip():
            return line.strip()[0]


def run_loop(
    session: JudgeSession,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    *,
    tty: bool | None = None,
) -> int:
    """Ask the session's spans until the pool is done (exit 0, saying so), ``q`` or the end
    of input (0, saying how to resume) or Ctrl-C (130). Unknown keys are answered with the
    list of keys and the span is asked again."""
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    tty = stdin.isatty() if tty is None else tty
    ansi = tty and out.isatty()
    try:
        while True:
            item = session.current()
            if item is None:
                print(f"done: {session.status()}", file=out)
                return EXIT_OK
            print(f"\n{session.progress().line()}", file=out)
            print(session.card(item).text(ansi=ansi), file=out)
            print(f"[{PROMPT}] ", end="", file=out, flush=True)
            key = read_key(stdin, tty)
            if tty:
                print(key or "", file=out)
            if key is None or key.lower() == "q" or key in ("\x03", "\x04"):
                print(
                    f"stopped: {session.status()}; every answer is saved: run again to resume",
                    file=out,
                )
                return EXIT_OK
            try:
                print(session.answer(key), file=out)
            except ValueError as exc:
                print(str(exc), file=out)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {session.status()}; every answer is saved", file=out)
        return EXIT_INTERRUPTED
