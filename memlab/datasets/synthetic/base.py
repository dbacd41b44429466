"""The synthetic generator's base: its config, the build state and the registry of builders.

``SynthConfig`` holds every parameter; ``Build`` collects the notes, questions,
evidence spans and negatives of one run (notes are placed into files later, by
``memlab.datasets.synthetic.writer``); ``GENERATORS`` maps each question category
to the builder that adds its notes and questions (the builders of ``phenomena``
register themselves with ``register``). Every random choice comes from a
``random.Random`` stream named by (seed, stream): ``random_stream``.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from memlab.config.vocab import (
    EVAL_LEVELS,
    SYNTH_DEFAULT_MIX,
    SYNTH_PHENOMENA,
    SYNTH_RELEASE_PHENOMENA,
    SYNTH_STYLES,
)
from memlab.datasets.synthetic import facts as fx
from memlab.datasets.synthetic import lexicon as lx

__all__ = [
    "ALL_PHENOMENA",
    "FORMAT_VERSION",
    "GENERATOR",
    "GENERATORS",
    "LATER_FIELDS",
    "MAX_NEAR_MISSES",
    "MEMORY_DAY",
    "MEMORY_PATH",
    "PHENOMENA",
    "REALISM_KNOBS",
    "Build",
    "Builder",
    "Reword",
    "SynthConfig",
    "config_record",
    "other_days",
    "random_stream",
    "register",
]

PHENOMENA = SYNTH_PHENOMENA
# Every category a mix may name: the classic ones and the 2026.9 release's (``release``).
ALL_PHENOMENA = (*SYNTH_PHENOMENA, *SYNTH_RELEASE_PHENOMENA)
# Written into dataset.json: names the generator whatever module now holds it.
GENERATOR = "memlab.datasets.synthetic"
FORMAT_VERSION = 1
MEMORY_PATH = "MEMORY.md"
MEMORY_DAY = -1  # day index of notes that go to MEMORY.md
MAX_NEAR_MISSES = 4  # near misses per identifier (``identifier``: one edit away each)


@dataclass(frozen=True)
class SynthConfig:
    """Parameters of a synthetic workspace (each phenomenon: ``memlab.datasets.synthetic``).

    ``days`` daily logs end at ``end_date``; questions are asked at ``end_date``
    + 1 day, 09:00 UTC. ``queries_per_type`` is capped per category by what the
    lexicon supports (``Dataset.info["capacity"]``). ``cjk_fraction`` (share of
    filler notes written in Chinese) applies only when ``"cjk"`` is in ``mix``;
    ``near_misses`` (distractor identifiers one edit away from each asked one, in
    ``[0, MAX_NEAR_MISSES]``) and ``digit_ids`` (an all-digit identifier kind joins the
    rotation: ``querymix.id_kinds``) only when ``"identifier"`` is. The default ``mix`` is
    ``memlab.config.vocab.SYNTH_DEFAULT_MIX``. Like the realism knobs, ``digit_ids`` is left out
    of ``dataset.json`` at its default (``LATER_FIELDS``).

    The realism knobs (``REALISM_KNOBS``; at their defaults the corpus is the one this
    generator always wrote, byte for byte, and ``dataset.json`` does not list them):

    - ``paraphrase`` (None, or in [0, 1]): None keeps each category's own wording (the
      ``paraphrase`` category then swaps ``paraphrase_strength`` of its units). A number p
      rewords every category that asks in words (``vocab.SYNTH_WORD_CATEGORIES``): a
      share p of each question's word units (``Reword``) is said in other words, names
      last; 0 = the question reuses its evidence's words, 1 = none of them.
    - ``style``: ``"notes"`` (daily logs of bullets and ``MEMORY.md``) or
      ``"conversation"`` (one user–assistant session per day, each note a ``User:`` turn
      and an ``Assistant:`` reply; no ``MEMORY.md``; not with the release phenomena).
    - ``level``: ``"unit"`` (evidence = the lines stating a fact) or ``"file"`` (evidence =
      the whole file of each such line, and ``info["level"] = "file"``: scored by file).
    - ``confusability`` (None, or in [0, 1]): None adds nothing; a number c writes
      ``distractors_per_fact`` look-alike lines per word question, each holding a share c
      of the question's content words (and not its answer).
    - ``mix_weights``: ``()`` (every category ``queries_per_type`` questions) or one
      number >= 0 per category of ``mix``: category i gets round(w_i × queries_per_type),
      capped by its capacity.
    """

    days: int = 60
    seed: int = 0
    end_date: str = "2026-03-31"
    notes_per_day: int = 12
    queries_per_type: int = 20
    mix: tuple[str, ...] = SYNTH_DEFAULT_MIX
    paraphrase_strength: float = 1.0
    update_versions: int = 3
    redundancy_copies: int = 4
    distractors_per_fact: int = 2
    cjk_fraction: float = 0.0
    near_misses: int = 2
    digit_ids: bool = False
    paraphrase: float | None = None
    style: str = "notes"
    level: str = "unit"
    confusability: float | None = None
    mix_weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.mix, str) or not isinstance(self.mix, tuple):
            # A list from a CLI or JSON is fine; keep the dataclass hashable.
            object.__setattr__(
                self, "mix", tuple([self.mix] if isinstance(self.mix, str) else self.mix)
            )
        self._check_knobs()
        for name, low in (
            ("days", 1),
            ("notes_per_day", 0),
            ("queries_per_type", 0),
            ("update_versions", 1),
            ("redundancy_copies", 1),
            ("distractors_per_fact", 0),
            ("near_misses", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if not isinstance(self.digit_ids, bool):
            raise ValueError(f"digit_ids must be true or false, got {self.digit_ids!r}")
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
        unknown = [m for m in self.mix if m not in ALL_PHENOMENA]
        if unknown:
            raise ValueError(
                f"unknown phenomena in mix: {unknown}; choose from {list(ALL_PHENOMENA)}"
            )
        if len(set(self.mix)) != len(self.mix):
            raise ValueError(f"mix lists a phenomenon twice: {list(self.mix)}")
        if self.update_versions > fx.MAX_UPDATE_VERSIONS:
            raise ValueError(
                f"update_versions must be <= {fx.MAX_UPDATE_VERSIONS}, got {self.update_versions}"
            )
        if self.distractors_per_fact > fx.MAX_DISTRACTORS:
            raise ValueError(
                f"distractors_per_fact must be <= {fx.MAX_DISTRACTORS}, "
                f"got {self.distractors_per_fact}"
            )
        if self.near_misses > MAX_NEAR_MISSES:
            raise ValueError(f"near_misses must be <= {MAX_NEAR_MISSES}, got {self.near_misses}")
        # Versions and copies live on distinct days.
        for name, phen in (("update_versions", "update"), ("redundancy_copies", "redundancy")):
            if phen in self.mix and getattr(self, name) > self.days:
                raise ValueError(
                    f"{name} must be <= days ({self.days}) when {phen!r} is in mix, "
                    f"got {getattr(self, name)}"
                )

    def _check_knobs(self) -> None:
        """Validate (and coerce) the realism knobs; ``ValueError`` naming the field."""
        weights = self.mix_weights
        if isinstance(weights, str):  # "1,0.5,2" from `memlab synth --set`
            weights = tuple(w for w in weights.split(",") if w.strip())
        try:
            weights = tuple(float(w) for w in weights)
        except (TypeError, ValueError):
            raise ValueError(f"mix_weights must be numbers, got {self.mix_weights!r}") from None
        object.__setattr__(self, "mix_weights", weights)
        if weights and (len(weights) != len(self.mix) or min(weights) < 0):
            raise ValueError(
                f"mix_weights must give one number >= 0 per category of mix ({len(self.mix)}),"
                f" got {list(weights)}"
            )
        for name in ("paraphrase", "confusability"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1
            ):
                raise ValueError(f"{name} must be None or a number in [0, 1], got {value!r}")
        if self.style not in SYNTH_STYLES:
            raise ValueError(f"style must be one of {list(SYNTH_STYLES)}, got {self.style!r}")
        if self.level not in EVAL_LEVELS:
            raise ValueError(f"level must be one of {list(EVAL_LEVELS)}, got {self.level!r}")
        release = [m for m in self.mix if m in SYNTH_RELEASE_PHENOMENA]
        if self.style == "conversation" and release:
            raise ValueError(
                f"style='conversation' writes one session per day, and {release} need files of"
                " their own: use style='notes' for the release phenomena"
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


# The realism knobs and their defaults: at these the generator writes what it always wrote,
# and ``config_record`` leaves them out of dataset.json, so the committed corpora (and every
# cache of a corpus keyed by its config) stay what they were.
REALISM_KNOBS: dict[str, Any] = {
    "paraphrase": None,
    "style": "notes",
    "level": "unit",
    "confusability": None,
    "mix_weights": (),
}
# Every field added after the committed corpora, with its default (``config_record``).
LATER_FIELDS: dict[str, Any] = {**REALISM_KNOBS, "digit_ids": False}


def config_record(config: SynthConfig) -> dict[str, Any]:
    """``config`` as ``dataset.json`` records it: every field (tuples as lists), but one
    added later (``LATER_FIELDS``: a realism knob, ``digit_ids``) only when it differs from
    its default."""
    out = {}
    for k, v in asdict(config).items():
        if k in LATER_FIELDS and v == LATER_FIELDS[k]:
            continue
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


def random_stream(seed: int, stream: str) -> random.Random:
    """The random stream ``stream`` of run ``seed``: ``Random("memlab-synth|{seed}|{stream}")``.

    Seeding with a str goes through sha512: stable across runs and platforms (unlike
    ``hash()``), and distinct stream names give unrelated streams.
    """
    return random.Random(f"memlab-synth|{seed}|{stream}")


def other_days(rng: random.Random, days: int, exclude: set[int], k: int) -> list[int]:
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


class Reword(NamedTuple):
    """A word question as a template and its units, for the ``paraphrase`` knob.

    ``template`` holds ``{0}``, ``{1}``… one per unit. A unit is (the evidence's wording,
    the other wording, kind): kind ``""`` for words, or the alias list a name is replaced
    from (``"person"``, ``"project"``: ``realism_wording.ALIASES``), its other wording
    then ``""``.
    """

    template: str
    units: tuple[tuple[str, str, str], ...]


class Build:
    """Notes, questions and evidence under construction (notes are placed later)."""

    def __init__(self, cfg: SynthConfig) -> None:
        self.cfg = cfg
        ent = random_stream(cfg.seed, "entities")
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
        self.notes: list[tuple[int, str, str]] = []  # (day or MEMORY_DAY, section, text)
        self.queries: list[dict[str, Any]] = []
        self.spans: list[tuple[str, int, str, str, str]] = []  # qid, note, span_id, subtopic, fact
        self.negatives: list[tuple[str, int, str, str]] = []  # qid, note, kind, fact
        self.whole_file: set[str] = set()  # questions whose spans are their notes' whole files
        self.rewords: dict[str, Reword] = {}  # qid → how the ``paraphrase`` knob rewords it
        self.count: dict[str, int] = {}
        # Files beyond the daily logs and MEMORY.md (release phenomena): day index <= -2 →
        # (relative path, title line). Empty for the classic phenomena.
        self.files: dict[int, tuple[str, str]] = {}
        self.info: dict[str, Any] = {}  # extra keys of dataset.json's info (release phenomena)

    def note(self, day: int, section: str, text: str) -> int:
        """Add a note (placed later) on ``day`` under ``section``; returns its index."""
        self.notes.append((day, section, text))
        return len(self.notes) - 1

    def file(self, path: str, title: str) -> int:
        """The day index of the file ``path`` (written with the ``# title`` line): notes
        added on it go to that file. Indices count down from ``MEMORY_DAY - 1``; the same
        path gives the same index."""
        for day, (known, _) in self.files.items():
            if known == path:
                return day
        day = MEMORY_DAY - 1 - len(self.files)
        self.files[day] = (path, title)
        return day

    def ask(
        self,
        cat: str,
        query: str,
        answer: str,
        spans: list[tuple[int, str, str]],
        *,
        whole_file: bool = False,
        reword: Reword | None = None,
    ) -> str:
        """Record a question; ``spans`` are (note index, subtopic or "", fact) in order.

        Each span is its note's line, or with ``whole_file`` every line of the file the
        note is placed in (title to last line: "that day's log"). ``reword``: how the
        ``paraphrase`` knob words the question (kept; applied after every builder ran).
        """
        qid = f"{cat}-{self.count.get(cat, 0):04d}"
        if reword is not None:
            self.rewords[qid] = reword
        self.count[cat] = self.count.get(cat, 0) + 1
        self.queries.append({"qid": qid, "query": query, "category": cat, "answer": answer})
        for i, (note, sub, fact) in enumerate(spans):
            self.spans.append((qid, note, f"s{i}", sub or f"s{i}", fact))
        if whole_file:
            self.whole_file.add(qid)
        return qid

    def day(self, stream: random.Random, memory_share: float = 0.0) -> int:
        """A day index drawn from ``stream``: ``MEMORY_DAY`` with probability
        ``memory_share`` (no draw when 0), else uniform in ``[0, days)``."""
        if memory_share and stream.random() < memory_share:
            return MEMORY_DAY
        return stream.randrange(self.cfg.days)


def _team_size(days: int) -> int:
    # Longer histories mention more people; 30 at minimum keeps names non-distinctive.
    return min(len(lx.FIRST_NAMES) * len(lx.LAST_NAMES), max(30, days // 2))


Builder = Callable[[Build, int], None]
# Question category → builder adding ``n`` questions (with their notes) to a ``Build``.
GENERATORS: dict[str, Builder] = {}


def register(category: str) -> Callable[[Builder], Builder]:
    """Decorator: make the function the builder of ``category`` in ``GENERATORS``.

    ``category`` must be one of ``ALL_PHENOMENA`` and not registered yet (``ValueError``).
    """

    def deco(fn: Builder) -> Builder:
        if category not in ALL_PHENOMENA:
            raise ValueError(f"unknown category {category!r}; choose from {list(ALL_PHENOMENA)}")
        if category in GENERATORS:
            raise ValueError(f"a builder for {category!r} is already registered")
        GENERATORS[category] = fn
        return fn

    return deco
