"""The query mix agents send besides questions: bare identifiers, keywords, dates.

Three categories of the default mix, one builder each (own ``random_stream``, so each
stays independent and deterministic); the wording is in ``querymix_wording``.

- ``identifier``: a fresh identifier of one of eight kinds (``ID_KINDS`` in rotation from
  a random start: commit ``a828e60``, ticket ``INC-3317``, host:port
  ``10.42.7.133:8443``, IP ``10.0.3.17``, error code ``E4012`` / ``ORA-01555`` /
  ``ERR-503``, file path ``deploy/prod/gw-7.yaml``, version ``v3.18.2``, host name
  ``pg-prod-12``; with ``SynthConfig.digit_ids`` a ninth, all digits: ``4410923``,
  ``0031877``, ``482203917``) in one line, the evidence (a daily log's ``Log`` section, or for
  addresses, paths and names a quarter of the time ``MEMORY.md``'s ``Infrastructure``, in
  the kind's durable wording).
  Two questions in three are the identifier alone (the query *is* the identifier); the
  third asks about it in a question (``Which host runs pg-prod-12?``). Each identifier has
  ``near_misses`` distractors written on other days in lines of the same kind's wording
  (``"near-miss"`` negatives). A near miss is exactly one edit away: one character
  replaced — any hex digit of a commit by another hex digit (the result keeps two digits
  and a letter), otherwise the last digit of one of the identifier's numbers by another
  digit (never inside a fixed prefix, the ``10.`` of an address), so ``INC-3317`` →
  ``INC-3318``, ``10.0.3.17`` → ``10.0.3.19``, ``v3.18.2`` → ``v3.13.2``: well formed,
  the same length, never holding the identifier. Identifiers and near misses are all
  distinct, no address is the address part of another's host:port, and every one is
  reserved (no filler line draws it), so an identifier occurs in its evidence line only.
- ``keyword``: a short keyword query ``"{subject} {attribute}"`` (``printer warranty``)
  for a plain fact (``Printer warranty runs until June 2027``: MEMORY.md's
  ``Infrastructure`` half the time, else a log's ``Notes``). Facts come in 2×2 blocks of
  the subject × attribute grid: two asked cells on the diagonal, the other two written
  as ``"partial"`` negatives of both (each holds one keyword group of each question), so
  the evidence is the only line holding every keyword of its query.
- ``dated``: "what happened on a day": one notable event (``DATED_EVENTS``, each used
  once) on a distinct day's log (``Notes``); the question names the day in a rotating
  form (``What happened on March 3?``, ``What happened on 2026-03-03?``, or the bare
  ``2026-03-03``). The evidence is that day's log, one span from its title to its last
  line (an agent answers by reaching the day's file; any of its chunks counts); the
  answer is the event. The event line does not repeat the date: only the log's name and
  title (``# 2026-03-03``) carry it, as in a real workspace.

``querymix_capacity`` says how many questions each can make.
"""

from __future__ import annotations

import datetime as dt
import random
import re

from memlab.datasets.synthetic import querymix_wording as qw
from memlab.datasets.synthetic.base import (
    MEMORY_DAY,
    Build,
    SynthConfig,
    other_days,
    random_stream,
    register,
)
from memlab.datasets.synthetic.slots import Slots

__all__ = [
    "BARE_SHARE",
    "IDENTIFIERS_PER_KIND",
    "KEYWORD_MEMORY_SHARE",
    "build_dated",
    "build_identifier",
    "build_keyword",
    "fresh_identifier",
    "id_kinds",
    "near_miss_candidates",
    "querymix_capacity",
]

# Identifier questions in each period of three: the first two are bare, the third a question.
BARE_SHARE = (2, 3)
# Fresh identifiers per kind a corpus may ask about (the pools hold far more, near misses
# included): the capacity of ``identifier`` is this times the number of kinds.
IDENTIFIERS_PER_KIND = 50
KEYWORD_MEMORY_SHARE = 0.5
_HEX = "0123456789abcdef"
_DIGITS = "0123456789"
_NUMBER = re.compile(r"\d+")


def querymix_capacity(config: SynthConfig) -> dict[str, int]:
    """Most questions each query-mix phenomenon can make under ``config``.

    identifier: ``IDENTIFIERS_PER_KIND`` × kinds (``id_kinds``; fresh tokens, the pools are
    far larger);
    keyword: the grid's 2×2 blocks × 2 (``(subjects // 2) · (attributes // 2) · 2``);
    dated: one question per day, each event once: ``min(days, len(DATED_EVENTS))``.
    """
    blocks = (len(qw.KEYWORD_SUBJECTS) // 2) * (len(qw.KEYWORD_ATTRS) // 2)
    return {
        "identifier": IDENTIFIERS_PER_KIND * len(id_kinds(config)),
        "keyword": 2 * blocks,
        "dated": min(config.days, len(qw.DATED_EVENTS)),
    }


def id_kinds(config: SynthConfig) -> tuple[qw.IdKind, ...]:
    """The identifier kinds of a corpus, in rotation order: ``ID_KINDS``, then the
    all-digit ``ID_DIGIT_KIND`` when ``config.digit_ids``."""
    return (*qw.ID_KINDS, qw.ID_DIGIT_KIND) if config.digit_ids else qw.ID_KINDS


def fresh_identifier(kind: str, rng: random.Random) -> str:
    """A random identifier of ``kind`` (one of ``ID_KINDS``'s), drawn from ``rng``.

    commit: 7 lower-case hex digits with at least two digits and one letter; ticket
    ``KEY-NNNN`` (``ID_TICKET_KEYS``); ip ``10.a.b.c`` (a, b < 250, 10 <= c < 250);
    hostport an ip and a port ``:2000``-``:9999``; errcode ``E1000``-``E9999``,
    ``ORA-00100``-``ORA-09999`` or ``ERR-100``-``ERR-999``; path a migration, a deploy
    manifest or a backfill script; version ``v1.0.0``-``v9.29.19``; name
    ``{prefix}-{env}-{1..40}``; number (``digit_ids``) 7 digits not starting with 0, ``00``
    and 5 digits, or 8-9 digits. Octets stay below 250, so a near miss (last digit
    changed) is still an address. An unknown kind raises ``ValueError``.
    """
    r = rng.randrange
    if kind == "commit":
        while True:
            tok = f"{rng.getrandbits(28):07x}"
            if _commit_ok(tok):
                return tok
    if kind == "ticket":
        return f"{rng.choice(qw.ID_TICKET_KEYS)}-{r(1000, 10000)}"
    if kind in ("ip", "hostport"):
        ip = f"10.{r(250)}.{r(250)}.{r(10, 250)}"
        return ip if kind == "ip" else f"{ip}:{r(2000, 10000)}"
    if kind == "errcode":
        form = r(3)
        if form == 0:
            return f"E{r(1000, 10000)}"
        return f"ORA-{r(100, 10000):05d}" if form == 1 else f"ERR-{r(100, 1000)}"
    if kind == "path":
        form, table = r(3), rng.choice(qw.PATH_TABLES)
        if form == 0:
            return f"migrations/{r(10, 400):04d}_{rng.choice(qw.PATH_VERBS)}_{table}.sql"
        if form == 1:
            env = rng.choice(("prod", "staging"))
            return f"deploy/{env}/{rng.choice(qw.NAME_PREFIXES)}-{r(1, 41)}.yaml"
        return f"scripts/backfill_{table}_{r(2023, 2027)}{r(1, 13):02d}.py"
    if kind == "version":
        return f"v{r(1, 10)}.{r(30)}.{r(20)}"
    if kind == "name":
        return f"{rng.choice(qw.NAME_PREFIXES)}-{rng.choice(qw.NAME_ENVS)}-{r(1, 41)}"
    if kind == "number":
        form = r(3)
        if form == 0:  # a short commit hash that is all digits
            return f"{r(1, 10)}{r(10**6):06d}"
        if form == 1:  # an order number with leading zeros
            return f"00{r(10**4, 10**5)}"
        return str(r(10**7, 10**9))  # a long reference number, 8-9 digits
    raise ValueError(f"unknown identifier kind {kind!r}; choose from {_kind_names()}")


def near_miss_candidates(tok: str, kind: str) -> list[str]:
    """Every near miss of ``tok``: one character replaced, in a fixed order.

    commit: any position, by another hex digit, keeping ``_commit_ok`` (two digits and a
    letter); other kinds: the last digit of each number (``\\d+`` run) that starts after
    the kind's fixed prefix (``IdKind.fixed``), by each other digit. Each candidate has
    ``tok``'s length, differs from it in exactly one character, and so never holds it.
    """
    if kind == "commit":
        out = (tok[:i] + c + tok[i + 1 :] for i in range(len(tok)) for c in _HEX if c != tok[i])
        return [c for c in out if _commit_ok(c)]
    fixed = _kind(kind).fixed
    ends = [m.end() - 1 for m in _NUMBER.finditer(tok) if m.start() >= fixed]
    return [tok[:i] + d + tok[i + 1 :] for i in ends for d in _DIGITS if d != tok[i]]


def _commit_ok(tok: str) -> bool:
    # Real-looking and never confusable with a plain number or a word.
    digits = sum(c.isdigit() for c in tok)
    return 2 <= digits < len(tok)


def _kind(kind: str) -> qw.IdKind:
    for k in (*qw.ID_KINDS, qw.ID_DIGIT_KIND):
        if k.kind == kind:
            return k
    raise ValueError(f"unknown identifier kind {kind!r}; choose from {_kind_names()}")


def _kind_names() -> list[str]:
    return [k.kind for k in (*qw.ID_KINDS, qw.ID_DIGIT_KIND)]


def _parts(tok: str, kind: str) -> set[str]:
    """The strings a token occupies: itself, and a host:port's address too (so an IP
    identifier is never the address part of another line's host:port)."""
    return {tok, tok.rsplit(":", 1)[0]} if kind == "hostport" else {tok}


@register("identifier")
def build_identifier(b: Build, n: int) -> None:
    """``n`` identifier questions: a fresh identifier in one line, ``near_misses`` near
    misses elsewhere (module docstring: kinds, forms, the one-edit rule).

    Kinds rotate from a random start; forms too (two bare, one question per three). The
    answer is the identifier. A drawn identifier is kept only if it and enough of its
    near misses are new (distinct from every identifier and near miss so far, address
    parts included, and from every token the corpus reserved), so ``n`` up to the
    capacity always completes.
    """
    rng = random_stream(b.cfg.seed, "identifier")
    slots = Slots(rng, b.team, b.reserved, b.pools)
    kinds = id_kinds(b.cfg)
    lines = {k.kind: [slots.compile(t) for t in k.lines] for k in kinds}
    taken: set[str] = set()
    k_misses = b.cfg.near_misses
    kind_step, form_step = rng.randrange(len(kinds)), rng.randrange(BARE_SHARE[1])

    def free(tok: str, kind: str) -> bool:
        return tok not in b.reserved and not (_parts(tok, kind) & taken)

    for i in range(n):
        k = kinds[(kind_step + i) % len(kinds)]
        while True:
            tok = fresh_identifier(k.kind, rng)
            if not free(tok, k.kind):
                continue
            misses = [c for c in near_miss_candidates(tok, k.kind) if free(c, k.kind)]
            if len(misses) >= k_misses:
                break
        misses = rng.sample(misses, k_misses)
        for t in (tok, *misses):
            taken |= _parts(t, k.kind)
            b.reserved.add(t)
        day = b.day(rng, memory_share=k.memory_share)
        # MEMORY.md holds durable statements: the kind's first wording; a log any of them.
        wording = lines[k.kind][0] if day == MEMORY_DAY else rng.choice(lines[k.kind])
        text = slots.fill(wording, tok)
        note = b.note(day, "Infrastructure" if day == MEMORY_DAY else "Log", text)
        if (form_step + i) % BARE_SHARE[1] < BARE_SHARE[0]:
            query = tok
        else:
            question = rng.choice(k.questions).format(tok=tok)
            query = question[0].upper() + question[1:]
        qid = b.ask("identifier", query, tok, [(note, "", text)])
        away = {day} if day != MEMORY_DAY else set()
        for miss, d in zip(misses, other_days(rng, b.cfg.days, away, k_misses), strict=True):
            miss_text = slots.fill(rng.choice(lines[k.kind]), miss)
            b.negatives.append((qid, b.note(d, "Log", miss_text), "near-miss", miss_text))


@register("keyword")
def build_keyword(b: Build, n: int) -> None:
    """``n`` keyword questions ``"{subject} {attribute}"`` over the fact grid.

    Subjects and attributes are shuffled and paired; each 2×2 block (in random order)
    writes four facts and asks the two on its diagonal; the other two are ``"partial"``
    negatives of both. ``n`` odd: the last block asks one and writes three (every keyword
    line is evidence or a negative). The answer is the value.
    """
    rng = random_stream(b.cfg.seed, "keyword")
    subjects = rng.sample(qw.KEYWORD_SUBJECTS, len(qw.KEYWORD_SUBJECTS))
    attrs = rng.sample(qw.KEYWORD_ATTRS, len(qw.KEYWORD_ATTRS))
    blocks = [(s, a) for s in range(len(subjects) // 2) for a in range(len(attrs) // 2)]
    rng.shuffle(blocks)
    made = 0
    for s, a in blocks:
        if made >= n:
            break
        (s0, s1), (a0, a1) = subjects[2 * s : 2 * s + 2], attrs[2 * a : 2 * a + 2]
        asked = ((s0, a0), (s1, a1))[: n - made]
        facts = {}
        # An unasked diagonal cell is not written: every keyword line is evidence or negative.
        for subj, attr in (*asked, (s0, a1), (s1, a0)):
            value = rng.choice(attr.values)
            text = attr.note.format(S=subj[0].upper() + subj[1:], v=value)
            day = b.day(rng, memory_share=KEYWORD_MEMORY_SHARE)
            note = b.note(day, "Infrastructure" if day == MEMORY_DAY else "Notes", text)
            facts[subj, attr.attr] = (note, text, value)
        partial = [facts[s0, a1.attr], facts[s1, a0.attr]]
        for subj, attr in asked:
            note, text, value = facts[subj, attr.attr]
            qid = b.ask("keyword", f"{subj} {attr.attr}", value, [(note, "", text)])
            b.negatives.extend((qid, pn, "partial", pt) for pn, pt, _ in partial)
            made += 1


@register("dated")
def build_dated(b: Build, n: int) -> None:
    """``n`` dated questions: an event on each of ``n`` distinct days, asked by its date.

    Days and events are sampled without repeats; ``{F}`` in an event is a team member's
    first name; the form rotates over ``DATED_FORMS`` from a random start. The evidence
    is the day's whole log (``whole_file``), the answer the event. ``n`` <=
    ``min(days, len(DATED_EVENTS))``.
    """
    rng = random_stream(b.cfg.seed, "dated")
    days = rng.sample(range(b.cfg.days), n)
    events = rng.sample(qw.DATED_EVENTS, n)
    first = [p.split()[0] for p in b.team]
    step = rng.randrange(len(qw.DATED_FORMS))
    for i, (day, event) in enumerate(zip(days, events, strict=True)):
        text = event.format(F=rng.choice(first))
        note = b.note(day, "Notes", text)
        date = b.cfg.start_date + dt.timedelta(days=day)
        when = f"{qw.MONTHS[date.month - 1]} {date.day}"
        if b.cfg.days > 365:  # the same month and day twice: name the year
            when += f", {date.year}"
        form = qw.DATED_FORMS[(step + i) % len(qw.DATED_FORMS)]
        query = form.format(when=when, iso=date.isoformat())
        b.ask("dated", query, text, [(note, "", text)], whole_file=True)
