"""A judging session: the pool, its order and the answers together. What the terminal and
the notebook's ``Judge`` both drive: `JudgeSession.current` (the span to ask), `answer`
(a key of ``vocab.JUDGE_KEYS``), `progress` and `status` (how many remain)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.config.vocab import JUDGE_KEYS
from memlab.eval.judge.card import Card, make_card
from memlab.eval.judge.order import PairOrder
from memlab.eval.judge.pool import Pool, PoolItem, build_pool
from memlab.eval.judge.store import JudgmentStore

if TYPE_CHECKING:
    from memlab.eval.lab import Lab
    from memlab.pipeline import Pipeline

__all__ = ["JudgeSession", "Progress", "judge_folder"]

_GRADES = {"y": 1, "n": 0, "s": None}


@dataclass
class Progress:
    """Where a session stands: ``judged`` spans of the pool (answers y/n), ``skipped``,
    ``decisive`` (open spans that can still change an undecided pair), ``undecided`` pairs
    of the ``pairs`` compared, ``pool`` spans in all."""

    judged: int
    skipped: int
    decisive: int
    undecided: int
    pairs: int
    pool: int

    def line(self) -> str:
        """``judged 12 (1 skipped); 5 decisive spans left for 3 of 21 undecided pairs;
        pool 340``."""
        return (
            f"judged {self.judged}"
            + (f" ({self.skipped} skipped)" if self.skipped else "")
            + f"; {self.decisive} decisive span{'' if self.decisive == 1 else 's'} left for"
            f" {self.undecided} of {self.pairs} undecided preset pair"
            + ("" if self.pairs == 1 else "s")
            + f"; pool {self.pool}"
        )


class JudgeSession:
    """Judging ``pool`` into ``store`` (module docstring). ``gain``: the linear metric the
    order decides pairs on (``vocab.JUDGE_GAINS``); ``exhaustive``: once every pair is
    decided, go on asking the rest of the pool (by best rank), instead of stopping."""

    def __init__(
        self,
        pool: Pool,
        store: JudgmentStore,
        gain: str = "precision",
        exhaustive: bool = False,
    ) -> None:
        self.pool = pool
        self.store = store
        self.gain = gain
        self.order = PairOrder(pool.rank_matrix(), gain)
        self._files: dict[str, Any] = {}
        self._current: int | None = None
        self._stale = True
        self._exhaustive = bool(exhaustive)

    @property
    def exhaustive(self) -> bool:
        """Whether the session asks the rest of the pool once every pair is decided (set
        it to go on after a decided pool, as ``memlab judge --all`` does)."""
        return self._exhaustive

    @exhaustive.setter
    def exhaustive(self, value: bool) -> None:
        self._exhaustive, self._stale = bool(value), True

    # ------------------------------------------------------------------ state
    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels [N]: 1, 0 or NaN unknown; skipped [N] bool) of the pool's spans."""
        labels = np.full(len(self.pool.items), np.nan)
        skipped = np.zeros(len(self.pool.items), dtype=bool)
        for i, item in enumerate(self.pool.items):
            row = self.store.answers.get(item.key)
            if row is None:
                continue
            if row.get("grade") is None:
                skipped[i] = True
            else:
                labels[i] = float(row["grade"])
        return labels, skipped

    def current(self) -> PoolItem | None:
        """The span to ask now: the order's next (`PairOrder.next`), or with
        ``exhaustive`` once none is decisive the best-ranked open span; None when done."""
        if self._stale:
            labels, skipped = self.labels()
            i = self.order.next(labels, skipped)
            if i is None and self.exhaustive:
                open_ = np.flatnonzero(np.isnan(labels) & ~skipped)
                i = int(open_[0]) if len(open_) else None
            self._current, self._stale = i, False
        return None if self._current is None else self.pool.items[self._current]

    def progress(self) -> Progress:
        """The counts of `Progress`."""
        labels, skipped = self.labels()
        return Progress(
            judged=int((~np.isnan(labels)).sum()),
            skipped=int(skipped.sum()),
            decisive=self.order.remaining(labels, skipped),
            undecided=int(self.order.undecided(labels).sum()),
            pairs=len(self.order.pairs),
            pool=len(self.pool.items),
        )

    def status(self) -> str:
        """What a finished (or stopped) session says: how many pairs are decided on which
        metric, how many spans were judged and how many are left, and why."""
        p = self.progress()
        metric = f"{self.gain}@{self.pool.depth}"
        left = p.pool - p.judged - p.skipped
        if p.undecided == 0:
            head = f"every preset pair is decided on {metric} ({p.pairs} pairs)"
        elif p.decisive == 0:
            head = (
                f"{p.undecided} of {p.pairs} preset pairs stay undecided on {metric}: the"
                " spans that could decide them were skipped (u undoes a skip)"
            )
        else:
            head = f"{p.undecided} of {p.pairs} preset pairs undecided on {metric}"
        return (
            f"{head}; {p.judged} spans judged, {p.skipped} skipped, {left} of the pool's"
            f" {p.pool} left unjudged"
            + (
                f", {p.decisive} of them decisive"
                if p.decisive
                else " (none can change a comparison; --all asks them too)"
                if left and not self.exhaustive
                else ""
            )
        )

    def card(self, item: PoolItem) -> Card:
        """The `Card` of ``item`` (the file's lines read once per session)."""
        from memlab.datasets.harvest.anchor import WorkspaceFiles

        ws = self._files.get(item.group)
        if ws is None:
            ws = self._files[item.group] = WorkspaceFiles(
                Path(self.pool.dataset.workspaces[item.group])
            )
        return make_card(item, self.pool.dataset, ws.lines(item.path))

    # ------------------------------------------------------------------ answers
    def answer(self, key: str) -> str:
        """Apply one answer (``y``, ``n``, ``s``, ``u``; ``vocab.JUDGE_KEYS``) to the
        current span, and say what was done. ``q`` is the caller's to handle. An answer with
        no span to ask, or another key, raises ``ValueError``."""
        k = key.strip().lower()[:1]
        if k == "u":
            undone = self.store.undo()
            self._stale = True
            if undone is None:
                return "nothing to undo"
            return f"undone: {undone[1]}:{undone[2]}-{undone[3]} ({undone[0]}) will be asked again"
        if k not in _GRADES:
            keys = ", ".join(f"{c} {m}" for c, m in JUDGE_KEYS.items())
            raise ValueError(f"answer with one of: {keys}; got {key!r}")
        item = self.current()
        if item is None:
            raise ValueError("the pool is finished: nothing to answer")
        self.store.record(item.key, _GRADES[k])
        self._stale = True
        return f"{JUDGE_KEYS[k]}: {item.path}:{item.start_line}-{item.end_line}"


def judge_folder(
    folder: str | Path,
    lab: Lab,
    systems: list[Pipeline],
    depth: int,
    gain: str = "precision",
    exhaustive: bool = False,
) -> JudgeSession:
    """The session that judges the dataset folder ``folder`` (``lab`` over it): the pool of
    ``systems``' top ``depth`` and the folder's ``shown.trec``, answers appended to
    ``folder/judgments.jsonl``. ``ValueError`` naming both paths when ``folder`` is one of
    the dataset's workspaces or inside one (a folder without ``dataset.json`` is read as a
    workspace): memory files are the user's, and judgments go beside them, never among
    them. What ``memlab judge`` and the notebook's ``Judge`` both open."""
    folder = Path(folder).expanduser()
    where = folder.resolve()
    for ws in lab.dataset.workspaces.values():
        if where.is_relative_to(Path(ws).resolve()):
            raise ValueError(
                f"{folder}: judgments would be written into the memory workspace {ws};"
                " judge a dataset folder (memlab harvest --out OUT writes one)"
            )
    pool = build_pool(lab, systems, depth, shown=folder / "shown.trec")
    return JudgeSession(pool, JudgmentStore(folder), gain, exhaustive)
