"""``Judge``: ``memlab judge`` in a notebook (ipywidgets).

The same pool, order and answers file as the command line (``memlab.eval.judge``): the
span to judge shown as a card (question, file and date, lines with the question's words
marked), buttons for relevant / not relevant / skip / undo, and how many spans remain.
Every click is appended to the folder's ``judgments.jsonl`` at once, so the command line
and the notebook continue each other's work. ``answer(key)`` does what a click does, so a
notebook or a test drives it from Python.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.config.vocab import DEFAULT_JUDGE_PRESETS, JUDGE_KEYS
from memlab.eval.judge import judge_folder

if TYPE_CHECKING:
    from memlab.eval.lab import Lab

__all__ = ["Judge"]

_BUTTONS = ("y", "n", "s", "u")


class Judge:
    """Judge the questions of the dataset folder ``folder`` (a harvest's OUT) by hand.

    ``presets`` are pooled at ``depth`` with the hits the agent saw (``shown.trec``), as
    ``memlab judge`` pools them; ``lab`` (default: one over the folder with ``embedder``,
    vectors cached) answers each question as of its cut-off. ``gain`` and ``exhaustive`` as
    `memlab.eval.judge.JudgeSession`. Public state: ``session`` (the pool, order and
    answers), ``message`` (what the last answer did), ``widget`` (the panel)."""

    def __init__(
        self,
        folder: str | Path,
        presets: Sequence[str] = DEFAULT_JUDGE_PRESETS,
        *,
        depth: int = 10,
        lab: Lab | None = None,
        embedder: str = "local",
        gain: str = "precision",
        exhaustive: bool = False,
    ) -> None:
        import ipywidgets as w

        from memlab.datasets.base import load_folder
        from memlab.eval.lab import Lab
        from memlab.pipeline.presets import preset

        self.folder = Path(folder).expanduser()
        if lab is None:
            lab = Lab(load_folder(self.folder), cache_vectors=True, embedder=embedder)
        self.lab = lab
        systems = [preset(p) for p in presets]
        self.session = judge_folder(self.folder, lab, systems, depth, gain, exhaustive)
        self.message = ""
        self.progress_html = w.HTML()
        self.card_html = w.HTML()
        self.buttons = {
            k: w.Button(description=f"{k}: {JUDGE_KEYS[k]}", layout=w.Layout(width="auto"))
            for k in _BUTTONS
        }
        for k, b in self.buttons.items():
            b.on_click(lambda _b, key=k: self.answer(key))
        self.widget = w.VBox(
            [self.progress_html, self.card_html, w.HBox(list(self.buttons.values()))]
        )
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def answer(self, key: str) -> str:
        """Answer the current span with ``key`` (``y``, ``n``, ``s``, ``u``), as a click does;
        returns and shows what was done (a key with nothing to answer: the reason)."""
        try:
            self.message = self.session.answer(key)
        except ValueError as exc:
            self.message = str(exc)
        self.refresh()
        return self.message

    def refresh(self) -> None:
        """Show the current span (or, when the pool is done, the session's status) and the
        counts."""
        s = self.session
        item = s.current()
        last = f"<br><span style='color:#777'>{html.escape(self.message)}</span>"
        self.progress_html.value = f"<b>{html.escape(s.progress().line())}</b>" + (
            last if self.message else ""
        )
        if item is None:
            self.card_html.value = f"<p><b>done:</b> {html.escape(s.status())}</p>"
        else:
            self.card_html.value = s.card(item).html()
        for k, b in self.buttons.items():
            b.disabled = item is None and k != "u"
