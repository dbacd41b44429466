"""Seeded generator of OpenClaw workspaces with questions and evidence spans.

``generate(SynthConfig(...), out_dir)`` writes ``out_dir/workspace`` (``MEMORY.md``
plus ``memory/YYYY-MM-DD.md`` daily logs) and the folder format of
``memlab.datasets.base`` (``dataset.json``, ``queries.jsonl``,
``evidence.jsonl``), plus ``negatives.jsonl``: lines that look like evidence
but are not (stale versions of an updated fact, sibling-attribute distractors).

Each question category isolates one retrieval phenomenon whose strength is a
config parameter:

- ``paraphrase``: the query words are swapped for synonyms
  (``paraphrase_strength`` = share of paraphrase units swapped; 1 → no content
  word or stem shared with the note). Hard for BM25, fine for embeddings.
- ``exact``: an opaque token (commit hash, ticket ID, env var, config key,
  code symbol, error string) in a line that has dozens of near-identical
  neighbours with other tokens. Easy for BM25, hard for embeddings. Every query
  word occurs in the evidence line (so an AND keyword query matches it) and the
  token occurs nowhere else in the workspace.
- ``update``: ``update_versions`` statements of one fact on increasing days
  with the same wording; only the latest is evidence. Decay's case.
- ``redundancy``: three distinct facts on one topic, the first repeated
  near-verbatim on ``redundancy_copies`` days; copies share a ``subtopic``.
  MMR's case.
- ``distractor``: ``distractors_per_fact`` lines about the same person's
  sibling attributes in the same wording (not evidence).
- ``multi``: two facts in two files (MEMORY.md + a daily log, or two logs).
- ``cjk``: Chinese notes and questions (FTS5 ``unicode61`` cannot segment them).

Determinism: every random choice comes from ``random.Random`` streams seeded by
a string of (seed, stream name), never from global state or ``hash()``, so the
same config writes byte-identical files. Streams are per phenomenon, so e.g.
changing ``paraphrase_strength`` changes only the paraphrase queries.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import string
from bisect import bisect
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets import lexicon as lx
from memlab.datasets.base import Dataset

__all__ = ["PHENOMENA", "SynthConfig", "capacity", "generate", "load_negatives"]

PHENOMENA = ("paraphrase", "exact", "update", "redundancy", "distractor", "multi", "cjk")
GENERATOR = "memlab.datasets.synthetic"
FORMAT_VERSION = 1
MEMORY_PATH = "MEMORY.md"
_MEMORY_DAY = -1  # day index of notes that go to MEMORY.md


@dataclass(frozen=True)
class SynthConfig:
    """Parameters of a synthetic workspace (see the module docstring for each phenomenon).

    ``days`` daily logs end at ``end_date``; questions are asked at ``end_date``
    + 1 day, 09:00 UTC. ``queries_per_type`` is capped per category by what the
    lexicon supports (``Dataset.info["capacity"]``). ``cjk_fraction`` (share of
    filler notes written in Chinese) applies only when ``"cjk"`` is in ``mix``.
    """

    days: int = 60
    seed: int = 0
    end_date: str = "2026-03-31"
    notes_per_day: int = 12
    queries_per_type: int = 20
    mix: tuple[str, ...] = ("paraphrase", "exact", "update", "redundancy", "distractor", "multi")
    paraphrase_strength: float = 1.0
    update_versions: int = 3
    redundancy_copies: int = 4
    distractors_per_fact: int = 2
    cjk_fraction: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.mix, str) or not isinstance(self.mix, tuple):
            # A list from a CLI or JSON is fine; keep the dataclass hashable.
            object.__setattr__(
                self, "mix", tuple([self.mix] if isinstance(self.mix, str) else self.mix)
            )
        for name, low in (
            ("days", 1),
            ("notes_per_day", 0),
            ("queries_per_type", 0),
            ("update_versions", 1),
            ("redundancy_copies", 1),
            ("distractors_per_fact", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        try:
            dt.date.fromisoformat(self.end_date)
        except (TypeError, ValueError):
            raise ValueError(
                f"end_date must be an ISO date YYYY-MM-DD, got {self.end_date!r}"
            ) from None
        for name in ("paraphrase_strength", "cjk_fraction"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        unknown = [m for m in self.mix if m not in PHENOMENA]
        if unknown:
            raise ValueError(f"unknown phenomena in mix: {unknown}; choose from {list(PHENOMENA)}")
        if len(set(self.mix)) != len(self.mix):
            raise ValueError(f"mix lists a phenomenon twice: {list(self.mix)}")
        if self.update_versions > lx.MAX_UPDATE_VERSIONS:
            raise ValueError(
                f"update_versions must be <= {lx.MAX_UPDATE_VERSIONS}, got {self.update_versions}"
            )
        if self.distractors_per_fact > lx.MAX_DISTRACTORS:
            raise ValueError(
                f"distractors_per_fact must be <= {lx.MAX_DISTRACTORS}, "
                f"got {self.distractors_per_fact}"
            )
        # Versions and copies live on distinct days.
        for name, phen in (("update_versions", "update"), ("redundancy_copies", "redundancy")):
            if phen in self.mix and getattr(self, name) > self.days:
                raise ValueError(
                    f"{name} must be <= days ({self.days}) when {phen!r} is in mix, "
                    f"got {getattr(self, name)}"
                )

    @property
    def start_date(self) -> dt.date:
        """The first daily log: ``end_date - (days - 1)``."""
        return dt.date.fromisoformat(self.end_date) - dt.timedelta(days=self.days - 1)

    @property
    def now(self) -> float:
        """Question time in Unix seconds: ``end_date + 1 day`` at 09:00 UTC."""
        day = dt.date.fromisoformat(self.end_date) + dt.timedelta(days=1)
        return dt.datetime(day.year, day.month, day.day, 9, tzinfo=dt.UTC).timestamp()


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


def capacity(config: SynthConfig) -> dict[str, int]:
    """Most questions each phenomenon can produce under ``config``.

    paraphrase: lexicon entries; exact: unbounded (fresh hashes and ticket IDs),
    reported as ``queries_per_type``; update: (person or project, attribute)
    pairs; distractor: people (one question each); redundancy: (project,
    topic) pairs; multi: the four templates' disjoint entity pools; cjk:
    (person, fact) pairs. The count made is ``min(queries_per_type, capacity)``.
    """
    b = _Build(config)
    team = len(b.team)
    return {
        "paraphrase": len(lx.PARAPHRASES),
        "exact": config.queries_per_type,
        "update": sum(team if a.entity == "person" else len(lx.PROJECTS) for a in lx.UPDATE_ATTRS),
        "redundancy": len(lx.REDUNDANCY_TOPICS) * len(lx.PROJECTS),
        "distractor": team,
        "multi": sum(len(p) for p in _multi_pools(b)),
        "cjk": len(lx.CJK_FACTS) * len(b.pools["cjk_team"]),
    }


def _render(
    title: list[str],
    sections: tuple[str, ...],
    items: dict[str, list[str | int]],
    notes: list[tuple[int, str, str]],
    path: str,
    where: list[tuple[str, int] | None],
) -> str:
    """Markdown text of one file; records (path, line) of every placed note in ``where``."""
    lines = list(title)
    for sec in sections:
        entries = items.get(sec)
        if not entries:
            continue
        lines.append(f"## {sec}")
        for it in entries:
            if isinstance(it, int):
                lines.append("- " + notes[it][2])
                where[it] = (path, len(lines))
            else:
                lines.append(it)
        lines.append("")
    if lines[-1] != "":
        lines.append("")
    return "\n".join(lines)


def _filler_day(slots: _Slots, n: int, cjk_share: float) -> dict[str, list[str | int]]:
    """``n`` background lines of one daily log, by section (see ``lexicon.FILLER``)."""
    rnd, token, fill = slots.rnd, slots.token, slots.fill
    items: dict[str, list[str | int]] = {s: [] for s in lx.DAILY_SECTIONS}
    for _ in range(n):
        if cjk_share and rnd() < cjk_share:
            items["Notes"].append("- " + fill(slots.cjk[int(rnd() * len(slots.cjk))]))
            continue
        sec = _SECTIONS[bisect(_CUM_WEIGHTS, rnd() * _CUM_WEIGHTS[-1])]
        if sec == "Log" and rnd() < lx.ID_SHARE_OF_LOG:
            ti = int(rnd() * len(slots.ids))
            text = fill(slots.ids[ti], token(lx.ID_TEMPLATES[ti].kind))
        else:
            templates = slots.filler[sec]
            text = fill(templates[int(rnd() * len(templates))])
        items[sec].append("- " + text)
    return items


_SECTIONS = list(lx.FILLER_SECTION_WEIGHTS)
_CUM_WEIGHTS = [
    sum(list(lx.FILLER_SECTION_WEIGHTS.values())[: i + 1]) for i in range(len(_SECTIONS))
]


def _write_workspace(b: _Build, ws: Path) -> tuple[list[tuple[str, int] | None], list[str], int]:
    """Write the daily logs and MEMORY.md; returns note locations, paths written, lines."""
    cfg = b.cfg
    frng, prng, mrng = (_rng(cfg.seed, s) for s in ("filler", "place", "memory"))
    slots = _Slots(frng, b.team, b.reserved, b.pools)
    where: list[tuple[str, int] | None] = [None] * len(b.notes)
    by_day: dict[int, list[int]] = {}
    for i, (day, _, _) in enumerate(b.notes):
        by_day.setdefault(day, []).append(i)
    cjk_share = cfg.cjk_fraction if "cjk" in cfg.mix else 0.0

    def place(items: dict[str, list[str | int]], day: int) -> None:
        for ni in by_day.get(day, []):
            lst = items.setdefault(b.notes[ni][1], [])
            lst.insert(prng.randrange(len(lst) + 1), ni)

    (ws / "memory").mkdir(parents=True, exist_ok=True)
    written, total = [], 0
    for day in range(cfg.days):
        items = _filler_day(slots, cfg.notes_per_day, cjk_share)
        place(items, day)
        date = (cfg.start_date + dt.timedelta(days=day)).isoformat()
        path = f"memory/{date}.md"
        text = _render([f"# {date}", ""], lx.DAILY_SECTIONS, items, b.notes, path, where)
        (ws / path).write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
        total += text.count("\n")

    mem: dict[str, list[str | int]] = {s: [] for s in lx.MEMORY_SECTIONS}
    for sec, lines in lx.MEMORY_STATIC.items():
        mem[sec].extend("- " + x for x in lines)
    for person in b.team[:12]:
        mem["People"].append(
            f"- {person}: {mrng.choice(lx.ROLES)}, works on {mrng.choice(lx.PROJECTS)}"
        )
    for project in lx.PROJECTS[:10]:
        mem["Projects"].append(f"- {project}: {mrng.choice(lx.PROJECT_BLURBS)}")
    place(mem, _MEMORY_DAY)
    intro = (
        "Long-term memory: durable preferences, people, projects and infrastructure. "
        "Day-to-day detail lives in memory/YYYY-MM-DD.md."
    )
    text = _render(
        ["# MEMORY", "", intro, ""], lx.MEMORY_SECTIONS, mem, b.notes, MEMORY_PATH, where
    )
    (ws / MEMORY_PATH).write_text(text, encoding="utf-8", newline="\n")
    written.append(MEMORY_PATH)
    return where, written, total + text.count("\n")


def _previous_files(out: Path, ws: Path, overwrite: bool) -> set[Path]:
    """Markdown files of an earlier synthetic workspace at ``ws`` (to prune after writing).

    Rewriting a file in place is much cheaper than deleting and re-creating it,
    so files are overwritten and only those not written again are removed.
    Raises ``FileExistsError`` for a non-empty ``ws`` unless ``overwrite`` and
    ``out/dataset.json`` names this generator.
    """
    if not (ws.is_dir() and any(ws.iterdir())):
        return set()
    if not overwrite:
        raise FileExistsError(
            f"{ws} is not empty; pass overwrite=True to replace a synthetic workspace"
        )
    try:
        generator = json.loads((out / "dataset.json").read_text())["info"]["generator"]
    except (OSError, ValueError, KeyError, TypeError):
        generator = None
    if generator != GENERATOR:
        raise FileExistsError(
            f"refusing to overwrite {ws}: {out / 'dataset.json'} does not name "
            f"{GENERATOR} as its generator"
        )
    return {p for p in ws.rglob("*.md") if p.is_file() and not p.is_symlink()}


def generate(
    config: SynthConfig | None, out_dir: str | Path, *, overwrite: bool = False, **overrides: Any
) -> Dataset:
    """Write a synthetic workspace with questions and evidence; return its ``Dataset``.

    ``overrides`` replace fields of ``config`` (``SynthConfig()`` when None). Per
    category in ``mix`` order, ``min(queries_per_type, capacity)`` questions are
    made (``info["counts"]``). Evidence rows are single lines (grade 1) with
    ``span_id`` unique per question, ``subtopic`` (copies of one redundant fact
    share it; otherwise equal to ``span_id``) and ``fact`` (text the line
    contains); queries carry ``answer``. An existing non-empty workspace is
    replaced only with ``overwrite=True`` and only if this generator wrote it.
    """
    cfg = config if config is not None else SynthConfig()
    if overrides:
        cfg = replace(cfg, **overrides)
    out = Path(out_dir).expanduser()
    ws = out / "workspace"
    previous = _previous_files(out, ws, overwrite)
    b = _Build(cfg)
    caps = capacity(cfg)
    counts = {}
    for cat in cfg.mix:
        counts[cat] = min(cfg.queries_per_type, caps[cat])
        _GENERATORS[cat](b, counts[cat])
    where, written, n_lines = _write_workspace(b, ws)
    for stale in previous - {ws / p for p in written}:
        stale.unlink()

    now = cfg.now
    queries = pd.DataFrame(
        [{**q, "group": "default", "time": now} for q in b.queries],
        columns=["qid", "query", "group", "category", "time", "answer"],
    )
    rows = []
    for qid, note, span_id, sub, fact in b.spans:
        path, line = where[note]  # type: ignore[misc]
        rows.append((qid, path, line, line, 1, span_id, sub, fact))
    evidence = pd.DataFrame(
        rows,
        columns=["qid", "path", "start_line", "end_line", "grade", "span_id", "subtopic", "fact"],
    )
    info = {
        "generator": GENERATOR,
        "format_version": FORMAT_VERSION,
        "config": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(cfg).items()},
        "counts": counts,
        "capacity": {c: caps[c] for c in cfg.mix},
        "now": dt.datetime.fromtimestamp(now, dt.UTC).isoformat().replace("+00:00", "Z"),
        "files": len(written),
        "lines": n_lines,
        "team_size": len(b.team),
        "negatives": "negatives.jsonl",
    }
    ds = Dataset("synthetic", out, {"default": ws}, queries, evidence, info)
    ds.save()
    with (out / "negatives.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for qid, note, kind, fact in b.negatives:
            path, line = where[note]  # type: ignore[misc]
            row = {
                "qid": qid,
                "path": path,
                "start_line": line,
                "end_line": line,
                "kind": kind,
                "fact": fact,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return ds


def load_negatives(root: str | Path) -> pd.DataFrame:
    """Lines that resemble evidence but are not: ``qid, path, start_line, end_line, kind, fact``.

    ``kind`` is ``"stale"`` (an earlier version of an updated fact) or
    ``"distractor"`` (a sibling attribute of the same person). Raises
    ``FileNotFoundError`` when ``root/negatives.jsonl`` is missing.
    """
    path = Path(root).expanduser() / "negatives.jsonl"
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    cols = ["qid", "path", "start_line", "end_line", "kind", "fact"]
    return pd.DataFrame(rows, columns=cols)
