"""Synthetic phenomena for OpenClaw 2026.9.6's new stages (spec ``openclaw-current.md``).

Five question categories, never in the default mix (so the classic corpora stay
byte-identical), each isolating one change of the release:

- ``importance`` (§8): a ``MEMORY.md`` entry ``{project} {attr}: {v}`` marked
  ``<!-- importance: 8..10 -->`` competes with a near-copy ``{project} {attr}
  ({qualifier}): {w}`` marked ``<!-- importance: 1..3 -->`` (a ``"low-importance"``
  negative). Without the multiplier the two are a coin flip.
- ``project`` (§9): a project-wide setting ``{attr}: {v}`` is stated once per project,
  each entry tagged ``<!-- project: key -->``; the question never names the project. The
  corpus has one active project (``info["active_projects"]``); its entry is the evidence,
  the others are ``"other-project"`` negatives.
- ``filename`` (§5.5): a note file ``memory/{stem}.md`` whose text never repeats the
  words of its name; the question names the file (``{stem}``, ``{stem}.md`` or
  "What's in {stem}?"); its three notes are the evidence.
- ``trigger`` (§10): a ``MEMORY.md`` preference with ``<!-- trigger: … -->`` phrases;
  the question is a message holding one phrase and no word of the entry's text, as
  ``memlab.openclaw_current.trigger_matches`` should recall it.
- ``longlived`` (§7): a durable personal fact stated once in a daily log more than a
  year old (``memory/YYYY-MM-DD.md`` dated ``max(365, days + 30) + 0..59`` days before
  ``end_date``), against a recent transient note on the same topic in the last week's
  logs (a ``"transient"`` negative): always-on 30-day decay scales the old one by
  ~2⁻¹², so it drops out.

Annotations are written as the release reads them: at the end of the entry's line,
``<!-- importance: N -->`` (N in 1–10), ``<!-- project: key -->`` (a lower-case key),
``<!-- trigger: a, b -->``; ``memlab.openclaw_current.parse_annotations`` reads them back.
"""

from __future__ import annotations

import datetime as dt

from memlab.datasets.synthetic import lexicon as lx
from memlab.datasets.synthetic import release_wording as rw
from memlab.datasets.synthetic.base import MEMORY_DAY, Build, SynthConfig, random_stream, register

__all__ = [
    "HIGH_IMPORTANCE",
    "LOW_IMPORTANCE",
    "build_filename",
    "build_importance",
    "build_longlived",
    "build_project",
    "build_trigger",
    "old_log_age_days",
    "release_capacity",
]

HIGH_IMPORTANCE = (8, 9, 10)  # multiplier 1.15–1.25
LOW_IMPORTANCE = (1, 2, 3)  # multiplier 0.80–0.90
OTHER_PROJECTS_PER_SETTING = 2  # entries of other projects competing with the active one
RECENT_DAYS = 7  # transient notes of ``longlived`` fall in the last week's logs


def release_capacity(config: SynthConfig) -> dict[str, int]:
    """Most questions each release phenomenon can make under ``config``.

    importance: attributes × projects; project: settings (one question each, all asked
    in the one active project); filename: named files; trigger: trigger entries;
    longlived: (person, attribute) pairs of the team.
    """
    team = len(Build(config).team)
    return {
        "importance": len(rw.IMPORTANCE_ATTRS) * len(lx.PROJECTS),
        "project": len(rw.PROJECT_SETTINGS),
        "filename": len(rw.NAMED_FILES),
        "trigger": len(rw.TRIGGERS),
        "longlived": team * len(rw.LONG_ATTRS),
    }


def old_log_age_days(days: int, offset: int) -> int:
    """Age (days before ``end_date``) of an old log: ``max(365, days + 30) + offset``,
    always before the first daily log of the run."""
    return max(365, days + 30) + offset


@register("importance")
def build_importance(b: Build, n: int) -> None:
    """``n`` importance questions: a high-importance MEMORY.md entry against a low one.

    Both entries share the wording ``{project} {attr}`` and differ in the value (and the
    low one's qualifier); the low one is a ``"low-importance"`` negative.
    """
    rng = random_stream(b.cfg.seed, "importance")
    combos = [(a, p) for a in range(len(rw.IMPORTANCE_ATTRS)) for p in lx.PROJECTS]
    for a, project in rng.sample(combos, n):
        attr = rw.IMPORTANCE_ATTRS[a]
        v, w = rng.sample(attr.values, 2)
        fact = f"{project} {attr.attr}: {v}"
        low = f"{project} {attr.attr} ({rng.choice(rw.LOW_QUALIFIERS)}): {w}"
        hi_n, lo_n = rng.choice(HIGH_IMPORTANCE), rng.choice(LOW_IMPORTANCE)
        note = b.note(MEMORY_DAY, "Projects", f"{fact} <!-- importance: {hi_n} -->")
        qid = b.ask("importance", attr.query.format(project=project), v, [(note, "", fact)])
        neg = b.note(MEMORY_DAY, "Projects", f"{low} <!-- importance: {lo_n} -->")
        b.negatives.append((qid, neg, "low-importance", low))


@register("project")
def build_project(b: Build, n: int) -> None:
    """``n`` project questions: one setting stated per project, tagged with its key.

    One active project for the corpus (``info["active_projects"]``, drawn from the
    projects' lower-cased names); per setting, its entry and those of
    ``OTHER_PROJECTS_PER_SETTING`` other projects, in random order.
    """
    rng = random_stream(b.cfg.seed, "project")
    keys = [p.lower() for p in lx.PROJECTS]
    active = rng.choice(keys)
    others = [k for k in keys if k != active]
    b.info["active_projects"] = [active]
    for si in rng.sample(range(len(rw.PROJECT_SETTINGS)), n):
        s = rw.PROJECT_SETTINGS[si]
        values = rng.sample(s.values, 1 + OTHER_PROJECTS_PER_SETTING)
        keys_here = [active, *rng.sample(others, OTHER_PROJECTS_PER_SETTING)]
        tagged = list(zip(keys_here, values, strict=True))
        rng.shuffle(tagged)
        notes = {
            key: (b.note(MEMORY_DAY, "Decisions", f"{s.attr}: {v} <!-- project: {key} -->"), v)
            for key, v in tagged
        }
        note, v = notes[active]
        qid = b.ask("project", s.query, v, [(note, "", f"{s.attr}: {v}")])
        for key, (other, w) in notes.items():
            if key != active:
                b.negatives.append((qid, other, "other-project", f"{s.attr}: {w}"))


@register("filename")
def build_filename(b: Build, n: int) -> None:
    """``n`` file-name questions: ``memory/{stem}.md`` named by the question.

    The question form rotates over ``FILE_QUERIES`` from a random start; the file's
    three notes (section ``Contents``) are the evidence, in order.
    """
    rng = random_stream(b.cfg.seed, "filename")
    step = rng.randrange(len(rw.FILE_QUERIES))
    for i, fi in enumerate(rng.sample(range(len(rw.NAMED_FILES)), n)):
        f = rw.NAMED_FILES[fi]
        day = b.file(f"memory/{f.stem}.md", f.title)
        spans = [(b.note(day, "Contents", line), "", line) for line in f.lines]
        query = rw.FILE_QUERIES[(step + i) % len(rw.FILE_QUERIES)].format(stem=f.stem)
        b.ask("filename", query, "; ".join(f.lines), spans)


@register("trigger")
def build_trigger(b: Build, n: int) -> None:
    """``n`` trigger questions: a MEMORY.md preference ``{entry} <!-- trigger: … -->``;
    the question is the message that should recall it."""
    rng = random_stream(b.cfg.seed, "trigger")
    for ti in rng.sample(range(len(rw.TRIGGERS)), n):
        t = rw.TRIGGERS[ti]
        note = b.note(MEMORY_DAY, "Preferences", f"{t.entry} <!-- trigger: {t.triggers} -->")
        b.ask("trigger", t.message, t.entry, [(note, "", t.entry)])


@register("longlived")
def build_longlived(b: Build, n: int) -> None:
    """``n`` long-lived questions: a fact in a log over a year old, a transient note in
    the last ``RECENT_DAYS`` days' logs (a ``"transient"`` negative).

    Old logs get one background line (``OLD_FILLER``) when first used; facts may share
    an old log.
    """
    rng = random_stream(b.cfg.seed, "longlived")
    end = dt.date.fromisoformat(b.cfg.end_date)
    combos = [(a, p) for a in range(len(rw.LONG_ATTRS)) for p in b.team]
    recent = min(RECENT_DAYS, b.cfg.days)
    for a, person in rng.sample(combos, n):
        attr = rw.LONG_ATTRS[a]
        v, w = rng.sample(attr.values, 2)
        date = end - dt.timedelta(days=old_log_age_days(b.cfg.days, rng.randrange(60)))
        path = f"memory/{date.isoformat()}.md"
        fresh = all(known != path for known, _ in b.files.values())
        day = b.file(path, date.isoformat())
        if fresh:
            b.note(day, "Notes", rng.choice(rw.OLD_FILLER))
        fact = attr.note.format(P=person, v=v)
        note = b.note(day, "Notes", fact)
        qid = b.ask("longlived", attr.query.format(P=person), v, [(note, "", fact)])
        transient = attr.transient.format(P=person, w=w)
        neg = b.note(b.cfg.days - 1 - rng.randrange(recent), "Notes", transient)
        b.negatives.append((qid, neg, "transient", transient))
