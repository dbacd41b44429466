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

Each category is built in ``memlab.datasets.phenomena``; this module holds the
config, the placement of notes into files and the folder format.

Determinism: every random choice comes from ``random.Random`` streams seeded by
a string of (seed, stream name), never from global state or ``hash()``, so the
same config writes byte-identical files. Streams are per phenomenon, so e.g.
changing ``paraphrase_strength`` changes only the paraphrase queries.
"""

from __future__ import annotations

import datetime as dt
import json
from bisect import bisect
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets import lexicon as lx
from memlab.datasets.base import Dataset
from memlab.datasets.phenomena import (
    _GENERATORS,
    _MEMORY_DAY,
    _Build,
    _multi_pools,
    _rng,
    _Slots,
)

__all__ = ["PHENOMENA", "SynthConfig", "capacity", "generate", "load_negatives"]

PHENOMENA = ("paraphrase", "exact", "update", "redundancy", "distractor", "multi", "cjk")
GENERATOR = "memlab.datasets.synthetic"
FORMAT_VERSION = 1
MEMORY_PATH = "MEMORY.md"


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
