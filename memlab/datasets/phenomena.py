"""How each question category of the synthetic generator is built (see ``synthetic``).

One function per phenomenon (``_GENERATORS``) adds its notes and questions to a
``_Build``: notes are placed on days, wording comes from ``lexicon``, and every
random choice is drawn from a ``random.Random`` stream named after the
phenomenon (``_rng``), so the phenomena stay independent and deterministic.
``_Slots`` fills the ``{placeholder}`` fields of the lexicon's templates.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import string
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memlab.datasets import lexicon as lx

if TYPE_CHECKING:
    from memlab.datasets.synthetic import SynthConfig

_MEMORY_DAY = -1  # day index of notes that go to MEMORY.md


def _rng(seed: int, stream: str) -> random.Random:
    # Seeding with a str goes through sha512: stable across runs and platforms.
    return random.Random(f"memlab-synth|{seed}|{stream}")


def _positional(template: str) -> tuple[str, tuple[str, ...]]:
    """``"a {x} b {y} {x}"`` → ``("a {0} b {1} {0}", ("x", "y"))`` (literal braces kept)."""
    out, names = [], []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            if name not in names:
                names.append(name)
            out.append(f"{{{names.index(name)}}}")
    return "".join(out), tuple(names)


class _Slots:
    """Random values for template slots; opaque tokens avoid the reserved set.

    Hot path of the generator (one call per filler line): values are drawn with
    ``int(random() * n)`` rather than ``choice``/``randrange`` (3-4x faster).
    """

    def __init__(
        self, rng: random.Random, team: list[str], reserved: set[str], pools: dict[str, list[str]]
    ) -> None:
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
        text, names = _positional(template)
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
        text, gens = compiled
        return text.format(*[tok if g is None else g() for g in gens])


class _Build:
    """Notes, questions and evidence under construction (notes are placed later)."""

    def __init__(self, cfg: SynthConfig) -> None:
        self.cfg = cfg
        ent = _rng(cfg.seed, "entities")
        people = [f"{f} {last}" for f in lx.FIRST_NAMES for last in lx.LAST_NAMES]
        ent.shuffle(people)
        self.team = people[: _team_size(cfg.days)]
        cjk = [s + g for s in lx.CJK_SURNAMES for g in lx.CJK_GIVEN]
        ent.shuffle(cjk)
        services = list(lx.SERVICES)
        ent.shuffle(services)
        self.services = services
        self.pools: dict[str, list[str]] = {
            "env": [f"OPENCLAW_{a}_{b}" for a in lx.ENV_A for b in lx.ENV_B],
            "config": [
                f"{n}.{g}.{leaf}"
                for n in lx.CONFIG_NS
                for g in lx.CONFIG_GROUP
                for leaf in lx.CONFIG_LEAF
            ],
            "symbol": [v + n for v in lx.SYMBOL_VERBS for n in lx.SYMBOL_NOUNS],
            "error": list(lx.ERRORS),
            "cjk_team": cjk[:30],
        }
        for kind in ("env", "config", "symbol", "error"):
            ent.shuffle(self.pools[kind])
        self.reserved: set[str] = set()
        self.notes: list[tuple[int, str, str]] = []  # (day or _MEMORY_DAY, section, text)
        self.queries: list[dict[str, Any]] = []
        self.spans: list[tuple[str, int, str, str, str]] = []  # qid, note, span_id, subtopic, fact
        self.negatives: list[tuple[str, int, str, str]] = []  # qid, note, kind, fact
        self.count: dict[str, int] = {}

    def note(self, day: int, section: str, text: str) -> int:
        self.notes.append((day, section, text))
        return len(self.notes) - 1

    def ask(self, cat: str, query: str, answer: str, spans: list[tuple[int, str, str]]) -> str:
        """Record a question; ``spans`` are (note index, subtopic or "", fact) in order."""
        qid = f"{cat}-{self.count.get(cat, 0):04d}"
        self.count[cat] = self.count.get(cat, 0) + 1
        self.queries.append({"qid": qid, "query": query, "category": cat, "answer": answer})
        for i, (note, sub, fact) in enumerate(spans):
            self.spans.append((qid, note, f"s{i}", sub or f"s{i}", fact))
        return qid

    def day(self, rng: random.Random, memory_share: float = 0.0) -> int:
        if memory_share and rng.random() < memory_share:
            return _MEMORY_DAY
        return rng.randrange(self.cfg.days)


def _other_days(rng: random.Random, days: int, exclude: set[int], k: int) -> list[int]:
    """``k`` days outside ``exclude``, distinct while there are enough; O(k) expected.

    Falls back to any days outside ``exclude`` (repeats allowed), then to any day.
    """
    free = days - len(exclude)
    if free >= k:
        out: list[int] = []
        while len(out) < k:
            d = rng.randrange(days)
            if d not in exclude and d not in out:
                out.append(d)
        return out
    pool = [d for d in range(days) if d not in exclude] or list(range(days))
    return [rng.choice(pool) for _ in range(k)]


def _daily_section(memory_section: str) -> str:
    return "Decisions" if memory_section == "Decisions" else "Notes"


def _swap_order(rng: random.Random, n_units: int, strength: float) -> set[int]:
    """Units swapped at ``strength``: the first round(strength·n) of a fixed permutation.

    Nested in strength (a higher strength swaps a superset), so the number of
    shared content words never grows with strength. Round half up.
    """
    order = list(range(n_units))
    rng.shuffle(order)
    return set(order[: math.floor(strength * n_units + 0.5)])


def _paraphrase(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "paraphrase")
    for idx in rng.sample(range(len(lx.PARAPHRASES)), n):
        e = lx.PARAPHRASES[idx]
        value = rng.choice(e.values)
        day = b.day(rng, memory_share=0.25)
        section = e.section if day == _MEMORY_DAY else _daily_section(e.section)
        text = e.note.format(*(u[0] for u in e.units), v=value)
        note = b.note(day, section, text)
        swapped = _swap_order(rng, len(e.units), b.cfg.paraphrase_strength)
        words = [q if i in swapped else w for i, (w, q) in enumerate(e.units)]
        query = e.query.format(*words)
        b.ask("paraphrase", query[0].upper() + query[1:] + "?", value, [(note, "", text)])


def _exact(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "exact")
    slots = _Slots(rng, b.team, b.reserved, b.pools)
    by_kind: dict[str, list[int]] = {}
    for i, t in enumerate(lx.ID_TEMPLATES):
        by_kind.setdefault(t.kind, []).append(i)
    kinds = list(by_kind)
    budget = _exact_budget(b.pools, n)
    step = rng.randrange(len(kinds))
    for _ in range(n):
        while budget[kinds[step % len(kinds)]] == 0:
            step += 1
        kind = kinds[step % len(kinds)]
        step += 1
        budget[kind] -= 1
        tok = slots.token(kind)
        b.reserved.add(tok)
        ti = rng.choice(by_kind[kind])
        t = lx.ID_TEMPLATES[ti]
        text = slots.fill(slots.ids[ti], tok)
        note = b.note(b.day(rng), "Log", text)
        b.ask("exact", t.query.format(tok=tok), tok, [(note, "", text)])


def _exact_budget(pools: dict[str, list[str]], n: int) -> dict[str, int]:
    # Pooled kinds keep at least half their pool for filler lines.
    kinds = dict.fromkeys(t.kind for t in lx.ID_TEMPLATES)
    return {k: len(pools[k]) // 2 if k in pools else n for k in kinds}


def _update(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "update")
    v = b.cfg.update_versions
    combos = [
        (a, e)
        for a, attr in enumerate(lx.UPDATE_ATTRS)
        for e in (b.team if attr.entity == "person" else lx.PROJECTS)
    ]
    for a, entity in rng.sample(combos, n):
        attr = lx.UPDATE_ATTRS[a]
        key = "P" if attr.entity == "person" else "project"
        values = rng.sample(attr.values, v)
        days = sorted(rng.sample(range(b.cfg.days), v))
        section = "Notes" if attr.entity == "person" else "Decisions"
        lines = [attr.note.format(**{key: entity}, v=val) for val in values]
        notes = [b.note(d, section, text) for d, text in zip(days, lines, strict=True)]
        qid = b.ask(
            "update", attr.query.format(**{key: entity}), values[-1], [(notes[-1], "", lines[-1])]
        )
        b.negatives.extend(
            (qid, nt, "stale", text) for nt, text in zip(notes[:-1], lines[:-1], strict=True)
        )


def _distractor(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "distractor")
    d = b.cfg.distractors_per_fact
    # One question per person, so the only same-person lines are its distractors.
    for person in rng.sample(b.team, n):
        fam = lx.FAMILIES[rng.randrange(len(lx.FAMILIES))]
        picked = rng.sample(range(len(fam.attrs)), d + 1)
        slug = person.split()[0].lower()
        lines, answer = [], ""
        for ai in picked:
            attr, values = fam.attrs[ai]
            value = rng.choice(values).format(slug=slug)
            answer = answer or value
            lines.append(fam.note.format(P=person, attr=attr, v=value))
        fact_day = rng.randrange(b.cfg.days)
        ddays = _other_days(rng, b.cfg.days, {fact_day}, d)
        note = b.note(fact_day, "Notes", lines[0])
        qid = b.ask(
            "distractor",
            fam.query.format(P=person, attr=fam.attrs[picked[0]][0]),
            answer,
            [(note, "", lines[0])],
        )
        for day, text in zip(ddays, lines[1:], strict=True):
            b.negatives.append((qid, b.note(day, "Notes", text), "distractor", text))


def _redundancy(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "redundancy")
    c = b.cfg.redundancy_copies
    topics = rng.sample(range(len(lx.REDUNDANCY_TOPICS)), len(lx.REDUNDANCY_TOPICS))
    # Topics rotate fastest, so two questions share a topic (and look alike)
    # only once every topic is in use; each topic walks its own project order.
    orders = [rng.sample(lx.PROJECTS, len(lx.PROJECTS)) for _ in topics]
    for i in range(n):
        t = topics[i % len(topics)]
        topic, templates = lx.REDUNDANCY_TOPICS[t]
        project = orders[t][i // len(topics)]
        first = rng.choice(b.team).split()[0]
        facts = [tpl.format(project=project, F=first) for tpl in templates]
        copy_days = rng.sample(range(b.cfg.days), c)
        others = _other_days(rng, b.cfg.days, set(copy_days), len(facts) - 1)
        spans = []
        for k, day in enumerate(copy_days):
            wrapper = lx.COPY_WRAPPERS[k % len(lx.COPY_WRAPPERS)]
            spans.append((b.note(day, "Notes", wrapper.format(facts[0])), "f0", facts[0]))
        for j, (fact, day) in enumerate(zip(facts[1:], others, strict=True), 1):
            spans.append((b.note(day, "Notes", fact), f"f{j}", fact))
        b.ask(
            "redundancy",
            lx.REDUNDANCY_QUERY.format(project=project, topic=topic),
            "; ".join(facts),
            spans,
        )


def _multi_pools(b: _Build) -> list[list[Any]]:
    """Disjoint entity pools of the four multi-hop templates (sizes = their capacities)."""
    half_s, half_p = len(b.services) // 2, len(lx.PROJECTS) // 2
    people, projects = b.team, list(lx.PROJECTS)
    inits = [(p, i) for p in lx.PROJECTS for i in lx.INITIATIVES] if b.cfg.days >= 2 else []
    return [
        list(zip(people[0::2], b.services[:half_s], strict=False)),
        inits,
        list(zip(projects[:half_p], b.services[half_s:], strict=False)),
        list(zip(people[1::2], projects[half_p:], strict=False)),
    ]


def _multi(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "multi")
    pools = _multi_pools(b)
    for pool in pools:
        rng.shuffle(pool)
    days, step = b.cfg.days, rng.randrange(4)
    for _ in range(n):
        while not pools[step % 4]:
            step += 1
        kind = step % 4
        step += 1
        x, y = pools[kind].pop()
        if kind == 0:  # owner in MEMORY.md, region in a log
            region = rng.choice(lx.REGIONS)
            f1, f2 = f"{x} owns the {y} service", f"{y} service moved to {region}"
            a, c = b.note(_MEMORY_DAY, "People", f1), b.note(rng.randrange(days), "Notes", f2)
            q, ans = f"Which region does the service that {x} owns run in?", region
        elif kind == 1:  # start and ship in two logs
            d1, d2 = sorted(rng.sample(range(days), 2))
            f1 = f"Kicked off the {x} {y} with {rng.choice(b.team).split()[0]}"
            f2 = f"{x} {y} shipped; {rng.choice(b.team).split()[0]} signed off"
            a, c = b.note(d1, "Meetings", f1), b.note(d2, "Notes", f2)
            start, end = (b.cfg.start_date + dt.timedelta(days=d) for d in (d1, d2))
            q = f"When did the {x} {y} start, and when did it ship?"
            ans = f"{start.isoformat()} / {end.isoformat()}"
        elif kind == 2:  # dependency in MEMORY.md, outage in a log
            purpose, cause = rng.choice(lx.PURPOSES), rng.choice(lx.OUTAGE_CAUSES)
            time = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
            f1 = f"{x} depends on the {y} service for {purpose}"
            f2 = f"{y} service outage at {time}: {cause}"
            a, c = b.note(_MEMORY_DAY, "Projects", f1), b.note(rng.randrange(days), "Notes", f2)
            q, ans = f"What caused the outage of the service {x} depends on for {purpose}?", cause
        else:  # on-call lead in MEMORY.md, vacation in a log
            until = rng.choice(lx.VACATION_ENDS)
            f1 = f"{x} is the on-call lead for {y}"
            f2 = f"{x} is out on vacation until {until}"
            a, c = b.note(_MEMORY_DAY, "People", f1), b.note(rng.randrange(days), "Notes", f2)
            q = f"Who is the on-call lead for {y}, and until when are they on vacation?"
            ans = f"{x}, until {until}"
        b.ask("multi", q, ans, [(a, "", f1), (c, "", f2)])


def _cjk(b: _Build, n: int) -> None:
    rng = _rng(b.cfg.seed, "cjk")
    combos = [(f, p) for f in range(len(lx.CJK_FACTS)) for p in b.pools["cjk_team"]]
    for f, person in rng.sample(combos, n):
        note_t, query_t, values = lx.CJK_FACTS[f]
        value = rng.choice(values)
        text = note_t.format(p=person, v=value)
        day = b.day(rng, memory_share=0.2)
        note = b.note(day, "People" if day == _MEMORY_DAY else "Notes", text)
        b.ask("cjk", query_t.format(p=person), value, [(note, "", text)])


def _team_size(days: int) -> int:
    # Longer histories mention more people; 30 at minimum keeps names non-distinctive.
    return min(len(lx.FIRST_NAMES) * len(lx.LAST_NAMES), max(30, days // 2))


_GENERATORS = {
    "paraphrase": _paraphrase,
    "exact": _exact,
    "update": _update,
    "redundancy": _redundancy,
    "distractor": _distractor,
    "multi": _multi,
    "cjk": _cjk,
}
