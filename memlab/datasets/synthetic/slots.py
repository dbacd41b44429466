"""Filling the ``{slot}`` fields of the lexicon's templates with seeded random values."""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence

from memlab.datasets.synthetic import lexicon as lx

__all__ = ["Slots", "positional"]


def positional(template: str) -> tuple[str, tuple[str, ...]]:
    """``"a {x} b {y} {x}"`` → ``("a {0} b {1} {0}", ("x", "y"))`` (literal braces kept)."""
    out, names = [], []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            if name not in names:
                names.append(name)
            out.append(f"{{{names.index(name)}}}")
    return "".join(out), tuple(names)


class Slots:
    """Random values for template slots; opaque tokens avoid the reserved set.

    Hot path of the generator (one call per filler line): values are drawn with
    ``int(random() * n)`` rather than ``choice``/``randrange`` (3-4x faster).
    """

    def __init__(
        self, rng: random.Random, team: list[str], reserved: set[str], pools: dict[str, list[str]]
    ) -> None:
        # Draw order is part of the output: keep it (the committed corpora depend on it).
        self.rng, self.reserved, self.pools = rng, reserved, pools
        rnd = self.rnd = rng.random
        first = [p.split()[0] for p in team]
        repos = [f"{p.lower()}-{s}" for p in lx.PROJECTS[:12] for s in ("web", "api")]

        def pick(seq: Sequence[str]) -> Callable[[], str]:
            n = len(seq)
            return lambda: seq[int(rnd() * n)]

        def num(low: int, high: int) -> Callable[[], str]:
            return lambda: str(low + int(rnd() * (high - low)))

        quarter = ("00", "15", "30", "45")
        self.gen: dict[str, Callable[[], str]] = {
            "time": lambda: f"{8 + int(rnd() * 10):02d}:{quarter[int(rnd() * 4)]}",
            "project": pick(lx.PROJECTS),
            "P": pick(team),
            "F": pick(first),
            "component": pick(lx.COMPONENTS),
            "vendor": pick(lx.VENDORS),
            "weekday": pick(lx.WEEKDAYS),
            "repo": pick(repos),
            "topic": pick(lx.LUNCH_TOPICS),
            "host": pick(lx.HOSTNAMES),
            "cfg": pick(lx.CONFIG_VALUES),
            "n": num(2, 400),
            "m": num(0, 12),
            "pr": num(100, 2000),
            "s": lambda: f"{(10 + int(rnd() * 590)) / 10:.1f}",
            "p": pick(pools["cjk_team"]),
            "proj": pick(lx.CJK_PROJECTS),
        }
        self.ids = [self.compile(t.line) for t in lx.ID_TEMPLATES]
        self.filler = {sec: [self.compile(t) for t in ts] for sec, ts in lx.FILLER.items()}
        self.cjk = [self.compile(t) for t in lx.CJK_FILLER]

    def compile(self, template: str) -> tuple[str, list[Callable[[], str] | None]]:
        """Positional template plus one value generator per slot (None for ``tok``)."""
        text, names = positional(template)
        return text, [None if n == "tok" else self.gen[n] for n in names]

    def token(self, kind: str) -> str:
        """A token of ``kind`` that is not reserved by a question."""
        r, rnd = self.rng, self.rnd
        while True:
            if kind == "commit":
                tok = f"{r.getrandbits(28):07x}"
                # Real-looking and never confusable with a plain number or word.
                if sum(c.isdigit() for c in tok) < 2 or tok.isdigit():
                    continue
            elif kind == "ticket":
                key = lx.TICKET_KEYS[int(rnd() * len(lx.TICKET_KEYS))]
                tok = f"{key}-{1000 + int(rnd() * 9000)}"
            else:
                pool = self.pools[kind]
                tok = pool[int(rnd() * len(pool))]
            if tok not in self.reserved:
                return tok

    @staticmethod
    def fill(compiled: tuple[str, list[Callable[[], str] | None]], tok: str = "") -> str:
        """The compiled template with fresh slot values, ``tok`` in every ``{tok}`` slot."""
        text, gens = compiled
        return text.format(*[tok if g is None else g() for g in gens])
