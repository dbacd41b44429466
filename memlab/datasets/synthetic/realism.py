"""The realism knobs that act once every builder ran: questions reworded (``paraphrase``)
and look-alike lines added (``confusability``); see ``SynthConfig``.

Both draw from streams of their own, one per question (``random_stream(seed,
"reword|qid")``, ``"confuse|qid"``), so a knob changes only what it is about: rewording
changes the questions' text and nothing else; look-alike lines add notes (whose placement
then moves the other notes of their day) and no question.
"""

from __future__ import annotations

import math
import random

from memlab.config.vocab import SYNTH_WORD_CATEGORIES
from memlab.datasets.synthetic import lexicon as lx
from memlab.datasets.synthetic import realism_wording as rw
from memlab.datasets.synthetic.base import Build, Reword, random_stream

__all__ = ["add_confusers", "apply_paraphrase", "reword_for", "reworded", "swapped_units"]


def reword_for(key: str, **slots: str) -> Reword:
    """The ``Reword`` of question form ``key`` (``realism_wording.REWORDS``) with its slots
    filled (``P="Priya Natarajan"``); a ``~`` unit takes the filled value's synonym.
    A key or synonym that is missing is a ``KeyError``: every form a builder asks has one."""
    template, units = rw.REWORDS[key]
    out = []
    for note, other in units:
        said = note.format(**slots)
        if other.startswith("@"):
            out.append((said, "", other[1:]))
        elif other == "~":
            out.append((said, rw.SYNONYMS[said], ""))
        else:
            out.append((said, other, ""))
    return Reword(template, tuple(out))


def swapped_units(reword: Reword, share: float, rng: random.Random) -> set[int]:
    """The units said in other words at ``share``: the first floor(share · n + u) of an
    order that puts the word units first, shuffled by ``rng``, and the names last; u is a
    uniform draw in [0, 1) from ``rng`` (stochastic rounding: on average share · n units,
    so a corpus's overlap falls smoothly with the knob, not in steps of 1/n).

    Nested in ``share`` for one ``rng`` state: a larger share swaps a superset, so a
    question's overlap with its evidence never grows with it; 0 swaps none, 1 all. Names go
    last so that a question keeps saying whom it is about while there are words left.
    """
    offset = rng.random()
    words = [i for i, u in enumerate(reword.units) if not u[2]]
    names = [i for i, u in enumerate(reword.units) if u[2]]
    rng.shuffle(words)
    order = words + names
    return set(order[: math.floor(share * len(order) + offset)])


def reworded(reword: Reword, share: float, rng: random.Random) -> str:
    """The question with a share ``share`` of its units swapped (``swapped_units``), a
    name's alias drawn from ``rng`` after the order; first letter upper-cased."""
    swap = swapped_units(reword, share, rng)
    words = []
    for i, (note, other, kind) in enumerate(reword.units):
        if i in swap:
            words.append(rng.choice(rw.ALIASES[kind]) if kind else other)
        else:
            words.append(note)
    text = reword.template.format(*words)
    return text[0].upper() + text[1:]


def apply_paraphrase(b: Build) -> None:
    """Reword every question that recorded a ``Reword``, at ``cfg.paraphrase``.

    No-op when the knob is None. The ``paraphrase`` category records none: its builder
    swaps its own units at the knob's strength.
    """
    share = b.cfg.paraphrase
    if share is None:
        return
    for q in b.queries:
        form = b.rewords.get(q["qid"])
        if form is not None:
            q["query"] = reworded(form, share, random_stream(b.cfg.seed, f"reword|{q['qid']}"))


def add_confusers(b: Build) -> None:
    """Write ``distractors_per_fact`` look-alike lines for each word question
    (``vocab.SYNTH_WORD_CATEGORIES``) at ``cfg.confusability`` = c: each holds the first
    k = floor(c · n + u) of the question's n content words (``lexicon.content_terms``, in an
    order shuffled per question; u uniform in [0, 1) per question: stochastic rounding, so
    nested in c and on average c · n) in a ``CONFUSER_FRAMES`` frame, on
    a random day (``Notes``). No-op when the knob is None. The lines are not evidence and
    are not negatives either: they state nothing about the question's fact.
    """
    c = b.cfg.confusability
    if c is None:
        return
    first = [p.split()[0] for p in b.team]
    for q in list(b.queries):
        if q["category"] not in SYNTH_WORD_CATEGORIES:
            continue
        rng = random_stream(b.cfg.seed, f"confuse|{q['qid']}")
        offset = rng.random()
        words = lx.content_terms(q["query"])
        rng.shuffle(words)
        k = math.floor(c * len(words) + offset)
        for _ in range(b.cfg.distractors_per_fact):
            frame = rng.choice(rw.CONFUSER_FRAMES)
            said = " and ".join(words[:k]) if k else "it"
            b.note(
                rng.randrange(b.cfg.days), "Notes", frame.format(F=rng.choice(first), words=said)
            )
