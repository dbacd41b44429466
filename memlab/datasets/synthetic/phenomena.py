"""One builder per question category of the synthetic generator, and their capacities.

Each builder adds ``n`` questions with their notes to a ``Build`` (registered in
``GENERATORS`` by category): notes are placed on days, wording comes from
``lexicon`` and ``facts``, and every random choice is drawn from a
``random.Random`` stream named after the category (``random_stream``), so the categories
stay independent and deterministic. ``capacity`` says how many questions each
can make.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Any

from memlab.datasets.synthetic import facts as fx
from memlab.datasets.synthetic import lexicon as lx
from memlab.datasets.synthetic.base import (
    MEMORY_DAY,
    Build,
    SynthConfig,
    other_days,
    random_stream,
    register,
)
from memlab.datasets.synthetic.querymix import querymix_capacity
from memlab.datasets.synthetic.realism import reword_for
from memlab.datasets.synthetic.release import release_capacity
from memlab.datasets.synthetic.slots import Slots

__all__ = [
    "build_cjk",
    "build_distractor",
    "build_exact",
    "build_multi",
    "build_paraphrase",
    "build_redundancy",
    "build_update",
    "capacity",
]


def capacity(config: SynthConfig) -> dict[str, int]:
    """Most questions each phenomenon can produce under ``config``.

    paraphrase: lexicon entries; exact: unbounded (fresh hashes and ticket IDs),
    reported as ``queries_per_type``; update: (person or project, attribute)
    pairs; distractor: people (one question each); redundancy: (project,
    topic) pairs; multi: the four templates' disjoint entity pools; cjk:
    (person, fact) pairs; identifier, keyword, dated: ``querymix.querymix_capacity``;
    the release phenomena: ``release.release_capacity``. The count made is
    ``min(queries_per_type, capacity)``.
    """
    b = Build(config)
    team = len(b.team)
    return {
        "paraphrase": len(fx.PARAPHRASES),
        "exact": config.queries_per_type,
        "update": sum(team if a.entity == "person" else len(lx.PROJECTS) for a in fx.UPDATE_ATTRS),
        "redundancy": len(fx.REDUNDANCY_TOPICS) * len(lx.PROJECTS),
        "distractor": team,
        "multi": sum(len(p) for p in _multi_pools(b)),
        "cjk": len(fx.CJK_FACTS) * len(b.pools["cjk_team"]),
        **querymix_capacity(config),
        **release_capacity(config),
    }


def _daily_section(memory_section: str) -> str:
    return "Decisions" if memory_section == "Decisions" else "Notes"


def _swap_order(rng: random.Random, n_units: int, strength: float, offset: float = 0.5) -> set[int]:
    """Units swapped at ``strength``: the first floor(strength·n + offset) of a fixed
    permutation (``offset`` 0.5: round half up; a per-question uniform draw in [0, 1):
    stochastic rounding, whose mean is exactly strength·n).

    Nested in strength (a higher strength swaps a superset), so the number of
    shared content words never grows with strength.
    """
    order = list(range(n_units))
    rng.shuffle(order)
    return set(order[: math.floor(strength * n_units + offset)])


@register("paraphrase")
def build_paraphrase(b: Build, n: int) -> None:
    """``n`` paraphrase questions: a lexicon fact, its query with swapped wording.

    A share ``paraphrase_strength`` of the entry's units is swapped for synonyms
    (``_swap_order``; 1 → no content word or stem shared with the note); with the realism
    knob ``paraphrase`` set, that share instead, stochastically rounded. A quarter of
    the notes go to MEMORY.md. ``n`` <= ``len(PARAPHRASES)`` (distinct entries).
    """
    rng = random_stream(b.cfg.seed, "paraphrase")
    # The realism knob rounds each question's share stochastically (draws of its own, so
    # the notes do not move), so the corpus's overlap falls smoothly with it.
    knob = None if b.cfg.paraphrase is None else random_stream(b.cfg.seed, "reword|paraphrase")
    for idx in rng.sample(range(len(fx.PARAPHRASES)), n):
        e = fx.PARAPHRASES[idx]
        value = rng.choice(e.values)
        day = b.day(rng, memory_share=0.25)
        section = e.section if day == MEMORY_DAY else _daily_section(e.section)
        text = e.note.format(*(u[0] for u in e.units), v=value)
        note = b.note(day, section, text)
        if knob is None:
            swapped = _swap_order(rng, len(e.units), b.cfg.paraphrase_strength)
        else:
            swapped = _swap_order(rng, len(e.units), b.cfg.paraphrase or 0.0, knob.random())
        words = [q if i in swapped else w for i, (w, q) in enumerate(e.units)]
        query = e.query.format(*words)
        b.ask("paraphrase", query[0].upper() + query[1:] + "?", value, [(note, "", text)])


@register("exact")
def build_exact(b: Build, n: int) -> None:
    """``n`` exact-token questions: a log line holding a fresh opaque token.

    Token kinds rotate (commit, ticket, env, config, symbol, error); pooled kinds use at
    most half their pool, so filler keeps near-identical neighbours. Every query word
    occurs in the evidence line; the token is reserved, so it occurs nowhere else.
    """
    rng = random_stream(b.cfg.seed, "exact")
    slots = Slots(rng, b.team, b.reserved, b.pools)
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


@register("update")
def build_update(b: Build, n: int) -> None:
    """``n`` update questions: ``update_versions`` statements of one fact on increasing days.

    Same wording, a new value each time; only the latest is evidence, the earlier ones
    are ``"stale"`` negatives. ``n`` <= the (person or project, attribute) pairs.
    """
    rng = random_stream(b.cfg.seed, "update")
    v = b.cfg.update_versions
    combos = [
        (a, e)
        for a, attr in enumerate(fx.UPDATE_ATTRS)
        for e in (b.team if attr.entity == "person" else lx.PROJECTS)
    ]
    for a, entity in rng.sample(combos, n):
        attr = fx.UPDATE_ATTRS[a]
        key = "P" if attr.entity == "person" else "project"
        values = rng.sample(attr.values, v)
        days = sorted(rng.sample(range(b.cfg.days), v))
        section = "Notes" if attr.entity == "person" else "Decisions"
        lines = [attr.note.format(**{key: entity}, v=val) for val in values]
        notes = [b.note(d, section, text) for d, text in zip(days, lines, strict=True)]
        qid = b.ask(
            "update",
            attr.query.format(**{key: entity}),
            values[-1],
            [(notes[-1], "", lines[-1])],
            reword=reword_for(attr.query, **{key: entity}),
        )
        b.negatives.extend(
            (qid, nt, "stale", text) for nt, text in zip(notes[:-1], lines[:-1], strict=True)
        )


@register("distractor")
def build_distractor(b: Build, n: int) -> None:
    """``n`` distractor questions: one fact plus ``distractors_per_fact`` sibling attributes.

    The siblings (same person, same wording, other days) are ``"distractor"`` negatives;
    one question per person, so ``n`` <= the team size.
    """
    rng = random_stream(b.cfg.seed, "distractor")
    d = b.cfg.distractors_per_fact
    # One question per person, so the only same-person lines are its distractors.
    for person in rng.sample(b.team, n):
        fam = fx.FAMILIES[rng.randrange(len(fx.FAMILIES))]
        picked = rng.sample(range(len(fam.attrs)), d + 1)
        slug = person.split()[0].lower()
        lines, answer = [], ""
        for ai in picked:
            attr, values = fam.attrs[ai]
            value = rng.choice(values).format(slug=slug)
            answer = answer or value
            lines.append(fam.note.format(P=person, attr=attr, v=value))
        fact_day = rng.randrange(b.cfg.days)
        ddays = other_days(rng, b.cfg.days, {fact_day}, d)
        note = b.note(fact_day, "Notes", lines[0])
        attr0 = fam.attrs[picked[0]][0]
        qid = b.ask(
            "distractor",
            fam.query.format(P=person, attr=attr0),
            answer,
            [(note, "", lines[0])],
            reword=reword_for(fam.query, P=person, attr=attr0),
        )
        for day, text in zip(ddays, lines[1:], strict=True):
            b.negatives.append((qid, b.note(day, "Notes", text), "distractor", text))


@register("redundancy")
def build_redundancy(b: Build, n: int) -> None:
    """``n`` redundancy questions: three facts on one topic, the first on ``redundancy_copies`` days.

    Copies are near-verbatim (``COPY_WRAPPERS``) and share the subtopic ``"f0"``; the
    other facts are ``"f1"``, ``"f2"``. ``n`` <= topics × projects.
    """
    rng = random_stream(b.cfg.seed, "redundancy")
    c = b.cfg.redundancy_copies
    topics = rng.sample(range(len(fx.REDUNDANCY_TOPICS)), len(fx.REDUNDANCY_TOPICS))
    # Topics rotate fastest, so two questions share a topic (and look alike)
    # only once every topic is in use; each topic walks its own project order.
    orders = [rng.sample(lx.PROJECTS, len(lx.PROJECTS)) for _ in topics]
    for i in range(n):
        t = topics[i % len(topics)]
        topic, templates = fx.REDUNDANCY_TOPICS[t]
        project = orders[t][i // len(topics)]
        first = rng.choice(b.team).split()[0]
        facts = [tpl.format(project=project, F=first) for tpl in templates]
        copy_days = rng.sample(range(b.cfg.days), c)
        others = other_days(rng, b.cfg.days, set(copy_days), len(facts) - 1)
        spans = []
        for k, day in enumerate(copy_days):
            wrapper = fx.COPY_WRAPPERS[k % len(fx.COPY_WRAPPERS)]
            spans.append((b.note(day, "Notes", wrapper.format(facts[0])), "f0", facts[0]))
        for j, (fact, day) in enumerate(zip(facts[1:], others, strict=True), 1):
            spans.append((b.note(day, "Notes", fact), f"f{j}", fact))
        b.ask(
            "redundancy",
            fx.REDUNDANCY_QUERY.format(project=project, topic=topic),
            "; ".join(facts),
            spans,
            reword=reword_for(fx.REDUNDANCY_QUERY, project=project, topic=topic),
        )


def _multi_pools(b: Build) -> list[list[Any]]:
    """Disjoint entity pools of the four multi-hop templates (sizes = their capacities)."""
    half_s, half_p = len(b.services) // 2, len(lx.PROJECTS) // 2
    people, projects = b.team, list(lx.PROJECTS)
    inits = [(p, i) for p in lx.PROJECTS for i in fx.INITIATIVES] if b.cfg.days >= 2 else []
    return [
        list(zip(people[0::2], b.services[:half_s], strict=False)),
        inits,
        list(zip(projects[:half_p], b.services[half_s:], strict=False)),
        list(zip(people[1::2], projects[half_p:], strict=False)),
    ]


@register("multi")
def build_multi(b: Build, n: int) -> None:
    """``n`` multi-hop questions: two facts in two files (MEMORY.md + a log, or two logs).

    Four templates rotate over disjoint entity pools (``_multi_pools``); ``n`` <= the
    pools' total size.
    """
    rng = random_stream(b.cfg.seed, "multi")
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
        slots = {"x": x, "y": y}
        if kind == 0:  # owner in MEMORY.md, region in a log
            region = rng.choice(lx.REGIONS)
            f1, f2 = f"{x} owns the {y} service", f"{y} service moved to {region}"
            a, c = b.note(MEMORY_DAY, "People", f1), b.note(rng.randrange(days), "Notes", f2)
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
            purpose, cause = rng.choice(fx.PURPOSES), rng.choice(fx.OUTAGE_CAUSES)
            time = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
            f1 = f"{x} depends on the {y} service for {purpose}"
            f2 = f"{y} service outage at {time}: {cause}"
            a, c = b.note(MEMORY_DAY, "Projects", f1), b.note(rng.randrange(days), "Notes", f2)
            q, ans = f"What caused the outage of the service {x} depends on for {purpose}?", cause
            slots["purpose"] = purpose
        else:  # on-call lead in MEMORY.md, vacation in a log
            until = rng.choice(fx.VACATION_ENDS)
            f1 = f"{x} is the on-call lead for {y}"
            f2 = f"{x} is out on vacation until {until}"
            a, c = b.note(MEMORY_DAY, "People", f1), b.note(rng.randrange(days), "Notes", f2)
            q = f"Who is the on-call lead for {y}, and until when are they on vacation?"
            ans = f"{x}, until {until}"
        b.ask(
            "multi", q, ans, [(a, "", f1), (c, "", f2)], reword=reword_for(f"multi:{kind}", **slots)
        )


@register("cjk")
def build_cjk(b: Build, n: int) -> None:
    """``n`` Chinese questions about Chinese notes (one per (person, fact) pair).

    A fifth of the notes go to MEMORY.md. ``n`` <= ``len(CJK_FACTS)`` × 30 people.
    """
    rng = random_stream(b.cfg.seed, "cjk")
    combos = [(f, p) for f in range(len(fx.CJK_FACTS)) for p in b.pools["cjk_team"]]
    for f, person in rng.sample(combos, n):
        note_t, query_t, values = fx.CJK_FACTS[f]
        value = rng.choice(values)
        text = note_t.format(p=person, v=value)
        day = b.day(rng, memory_share=0.2)
        note = b.note(day, "People" if day == MEMORY_DAY else "Notes", text)
        b.ask("cjk", query_t.format(p=person), value, [(note, "", text)])
