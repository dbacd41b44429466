"""The answers of a judging session, kept in the folder's ``judgments.jsonl`` (its format and
reading rules: ``memlab.datasets.judgments``).

Every answer is one row appended at once, flushed and fsynced before the next span is
shown, so a kill or a power cut after an answer loses nothing and a second run resumes
where the first stopped. Undo appends a retraction row: the log is only ever appended. A
last line a crash cut short is repaired when the store opens: kept (its newline added) when
it is a whole row, cut off when it is not (that answer was never acknowledged).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from memlab.datasets.judgments import (
    JUDGMENTS_FILE,
    SpanKey,
    read_judgment_rows,
    standing_answers,
)

__all__ = ["JudgmentStore"]


class JudgmentStore:
    """Append-only judgments of one dataset folder (``folder / judgments.jsonl``).

    ``answers``: the standing answer of every span (`standing_answers`), in the order
    given; `record` appends an answer (grade 1, 0, or None for a skip), `undo` retracts
    the latest standing one. ``clock`` gives each row's ``time`` (Unix seconds)."""

    def __init__(self, folder: str | Path, clock: Any = time.time) -> None:
        self.path = Path(folder) / JUDGMENTS_FILE
        self.clock = clock
        repair_tail(self.path)
        self.answers: dict[SpanKey, dict[str, Any]] = standing_answers(
            read_judgment_rows(self.path)
        )

    def grade(self, key: SpanKey) -> int | None:
        """The span's standing grade (1 or 0); None when unjudged or skipped."""
        row = self.answers.get(key)
        return None if row is None or row.get("grade") is None else int(row["grade"])

    def record(self, key: SpanKey, grade: int | None) -> dict[str, Any]:
        """Append the answer ``grade`` (1 relevant, 0 not, None: skipped) for ``key`` and
        return its row, written and fsynced before this returns."""
        qid, path, start, end = key
        row: dict[str, Any] = {
            "qid": qid,
            "path": path,
            "start_line": start,
            "end_line": end,
            "grade": grade,
            "time": round(float(self.clock()), 3),
        }
        if grade is None:
            row["skip"] = True
        self._append(row)
        self.answers.pop(key, None)
        self.answers[key] = row
        return row

    def undo(self) -> SpanKey | None:
        """Retract the latest standing answer (a row ``"retract": true``); its span is
        unjudged again. Returns its key, or None when there is nothing to undo."""
        if not self.answers:
            return None
        key = next(reversed(self.answers))
        qid, path, start, end = key
        self._append(
            {
                "qid": qid,
                "path": path,
                "start_line": start,
                "end_line": end,
                "grade": None,
                "retract": True,
                "time": round(float(self.clock()), 3),
            }
        )
        del self.answers[key]
        return key

    def _append(self, row: dict[str, Any]) -> None:
        new = not self.path.exists()
        data = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        # One write of a whole line, then fsync: the answer is on disk before the next
        # span is shown (a crash can only cut this very line, which `repair_tail` handles).
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:  # the file's name in its folder must survive a crash too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def repair_tail(path: Path) -> None:
    """Make ``path`` end with a newline: a last line without one is kept (newline added)
    when it is a whole JSON row, else cut off (a write a crash interrupted)."""
    if not path.exists():
        return
    with path.open("rb+") as fh:
        data = fh.read()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        try:
            json.loads(data[cut:])
            fh.write(b"\n")
        except (json.JSONDecodeError, UnicodeDecodeError):
            fh.truncate(cut)
        fh.flush()
        os.fsync(fh.fileno())
