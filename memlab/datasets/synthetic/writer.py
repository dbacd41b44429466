"""Writing a synthetic data set: notes placed into daily logs and MEMORY.md, then the
folder format of ``memlab.datasets.base`` plus ``negatives.jsonl`` (``generate``).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from bisect import bisect
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import lexicon as lx
from memlab.datasets.synthetic.base import (
    FORMAT_VERSION,
    GENERATOR,
    GENERATORS,
    MEMORY_DAY,
    MEMORY_PATH,
    Build,
    SynthConfig,
    config_record,
    random_stream,
)
from memlab.datasets.synthetic.conversation import render_session
from memlab.datasets.synthetic.phenomena import capacity
from memlab.datasets.synthetic.realism import add_confusers, apply_paraphrase
from memlab.datasets.synthetic.slots import Slots

__all__ = [
    "CORPUS_ENTRIES",
    "SynthTargetError",
    "check_target",
    "generate",
    "generated_with",
    "load_negatives",
]

# Everything `generate` writes into its folder: a folder holding anything else is not one
# it made, and it is never written into.
CORPUS_ENTRIES = ("dataset.json", "queries.jsonl", "evidence.jsonl", "negatives.jsonl", "workspace")
# Root entries that make a folder an OpenClaw workspace (spec §1; 2026.9.6's USER.md).
WORKSPACE_ENTRIES = ("MEMORY.md", "memory.md", "USER.md", "memory")


class SynthTargetError(FileExistsError):
    """The folder given to ``generate`` is not one it may write: ``what`` says why;
    ``overwritable``: it holds a corpus this generator wrote, which ``overwrite`` replaces
    (the caller names its own switch: ``overwrite=True``, ``--overwrite``)."""

    def __init__(self, what: str, overwritable: bool = False) -> None:
        super().__init__(what + ("; overwrite=True replaces it" if overwritable else ""))
        self.what = what
        self.overwritable = overwritable


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


def _filler_day(slots: Slots, n: int, cjk_share: float) -> dict[str, list[str | int]]:
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


def _write_workspace(
    b: Build, ws: Path
) -> tuple[list[tuple[str, int] | None], dict[str, int], int]:
    """Write the daily logs and MEMORY.md; returns note locations, the lines of each path
    written, and the total."""
    cfg = b.cfg
    frng, prng, mrng = (random_stream(cfg.seed, s) for s in ("filler", "place", "memory"))
    slots = Slots(frng, b.team, b.reserved, b.pools)
    where: list[tuple[str, int] | None] = [None] * len(b.notes)
    talk = cfg.style == "conversation"
    crng = random_stream(cfg.seed, "conversation")
    by_day: dict[int, list[int]] = {}
    for i, (day, _, _) in enumerate(b.notes):
        if talk and day == MEMORY_DAY:  # no MEMORY.md: said in a session on some day
            day = crng.randrange(cfg.days)
        by_day.setdefault(day, []).append(i)
    cjk_share = cfg.cjk_fraction if "cjk" in cfg.mix else 0.0

    def place(items: dict[str, list[str | int]], day: int) -> None:
        for ni in by_day.get(day, []):
            lst = items.setdefault(b.notes[ni][1], [])
            lst.insert(prng.randrange(len(lst) + 1), ni)

    (ws / "memory").mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for day in range(cfg.days):
        items = _filler_day(slots, cfg.notes_per_day, cjk_share)
        place(items, day)
        when = cfg.start_date + dt.timedelta(days=day)
        date = when.isoformat()
        path = f"memory/{date}.md"
        if talk:
            said = [it for lst in items.values() for it in lst]  # MEMORY.md sections too
            text = render_session(when, said, b.notes, path, where, crng)
        else:
            text = _render([f"# {date}", ""], lx.DAILY_SECTIONS, items, b.notes, path, where)
        (ws / path).write_text(text, encoding="utf-8", newline="\n")
        written[path] = text.count("\n")

    for day, (path, title) in b.files.items():
        # Sections in the order their first note was added; no filler.
        sections = tuple(dict.fromkeys(b.notes[ni][1] for ni in by_day.get(day, [])))
        items: dict[str, list[str | int]] = {}
        place(items, day)
        text = _render([f"# {title}", ""], sections, items, b.notes, path, where)
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text, encoding="utf-8", newline="\n")
        written[path] = text.count("\n")

    if talk:
        return where, written, sum(written.values())
    mem: dict[str, list[str | int]] = {s: [] for s in lx.MEMORY_SECTIONS}
    for sec, lines in lx.MEMORY_STATIC.items():
        mem[sec].extend("- " + x for x in lines)
    for person in b.team[:12]:
        mem["People"].append(
            f"- {person}: {mrng.choice(lx.ROLES)}, works on {mrng.choice(lx.PROJECTS)}"
        )
    for project in lx.PROJECTS[:10]:
        mem["Projects"].append(f"- {project}: {mrng.choice(lx.PROJECT_BLURBS)}")
    place(mem, MEMORY_DAY)
    intro = (
        "Long-term memory: durable preferences, people, projects and infrastructure. "
        "Day-to-day detail lives in memory/YYYY-MM-DD.md."
    )
    text = _render(
        ["# MEMORY", "", intro, ""], lx.MEMORY_SECTIONS, mem, b.notes, MEMORY_PATH, where
    )
    (ws / MEMORY_PATH).write_text(text, encoding="utf-8", newline="\n")
    written[MEMORY_PATH] = text.count("\n")
    return where, written, sum(written.values())


def check_target(out: Path, overwrite: bool) -> None:
    """Raise ``SynthTargetError`` unless ``generate`` may write into ``out``.

    Allowed: a folder that does not exist or is empty; with ``overwrite``, a corpus this
    generator wrote (``dataset.json`` naming it) and nothing else. Refused, whatever
    ``overwrite`` says: a path that is not a folder; a folder holding memory files
    (``MEMORY.md``, ``memory.md``, ``USER.md``, ``memory/``: an OpenClaw workspace, which
    memlab never writes into); a folder holding anything ``generate`` does not write
    (``CORPUS_ENTRIES``); a ``dataset.json`` that does not name this generator.
    """
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise SynthTargetError(f"{out} is not a folder")
    entries = sorted(os.listdir(out))
    if not entries:
        return
    memory = [e for e in entries if e in WORKSPACE_ENTRIES]
    if memory:
        raise SynthTargetError(
            f"{out} holds memory files ({', '.join(memory)}): it is a workspace, and memlab"
            " writes a synthetic corpus only into a new or empty folder of its own"
        )
    foreign = [e for e in entries if e not in CORPUS_ENTRIES]
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise SynthTargetError(
            f"{out} holds files memlab did not write ({shown}); a synthetic corpus goes into a"
            " new or empty folder"
        )
    try:
        generator = json.loads((out / "dataset.json").read_text())["info"]["generator"]
    except (OSError, ValueError, KeyError, TypeError):
        generator = None
    if generator != GENERATOR:
        raise SynthTargetError(
            f"refusing to overwrite {out}: {out / 'dataset.json'} does not name {GENERATOR}"
            " as its generator"
        )
    if not overwrite:
        raise SynthTargetError(f"{out} holds a synthetic corpus generated before", True)


def _previous_files(out: Path, ws: Path, overwrite: bool) -> set[Path]:
    """Markdown files of an earlier synthetic workspace at ``ws`` (to prune after writing),
    once ``check_target`` allowed ``out``.

    Rewriting a file in place is much cheaper than deleting and re-creating it,
    so files are overwritten and only those not written again are removed.
    """
    check_target(out, overwrite)
    if not ws.is_dir():
        return set()
    return {p for p in ws.rglob("*.md") if p.is_file() and not p.is_symlink()}


def generate(
    config: SynthConfig | None, out_dir: str | Path, *, overwrite: bool = False, **overrides: Any
) -> Dataset:
    """Write a synthetic workspace with questions and evidence; return its ``Dataset``.

    ``overrides`` replace fields of ``config`` (``SynthConfig()`` when None). Per
    category in ``mix`` order, ``min(queries_per_type, capacity)`` questions are
    made (``info["counts"]``). Evidence rows are single lines (grade 1; a ``dated``
    question's row is its day's whole log, title to last line) with
    ``span_id`` unique per question, ``subtopic`` (copies of one redundant fact
    share it; otherwise equal to ``span_id``) and ``fact`` (text the line
    contains); queries carry ``answer``. ``out_dir`` must be new or empty, or, with
    ``overwrite=True``, a corpus this generator wrote and nothing else (``check_target``:
    a folder holding memory files or anything else is refused, ``SynthTargetError``).
    """
    cfg = config if config is not None else SynthConfig()
    if overrides:
        cfg = replace(cfg, **overrides)
    out = Path(out_dir).expanduser()
    ws = out / "workspace"
    previous = _previous_files(out, ws, overwrite)
    b = Build(cfg)
    caps = capacity(cfg)
    counts = {}
    weights = cfg.mix_weights or (1.0,) * len(cfg.mix)
    for cat, w in zip(cfg.mix, weights, strict=True):
        want = cfg.queries_per_type if w == 1.0 else math.floor(w * cfg.queries_per_type + 0.5)
        counts[cat] = min(want, caps[cat])
        GENERATORS[cat](b, counts[cat])
    apply_paraphrase(b)
    add_confusers(b)
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
        if qid in b.whole_file or cfg.level == "file":  # the file's every line, title included
            rows.append((qid, path, 1, written[path], 1, span_id, sub, fact))
        else:
            rows.append((qid, path, line, line, 1, span_id, sub, fact))
    evidence = pd.DataFrame(
        rows,
        columns=["qid", "path", "start_line", "end_line", "grade", "span_id", "subtopic", "fact"],
    )
    info = {
        "generator": GENERATOR,
        "format_version": FORMAT_VERSION,
        "config": config_record(cfg),
        "counts": counts,
        "capacity": {c: caps[c] for c in cfg.mix},
        "now": dt.datetime.fromtimestamp(now, dt.UTC).isoformat().replace("+00:00", "Z"),
        "files": len(written),
        "lines": n_lines,
        "team_size": len(b.team),
        "negatives": "negatives.jsonl",
        **b.info,
    }
    if cfg.level != "unit":  # the lab scores files (Lab(level=...)), as for RealMem
        info["level"] = cfg.level
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


def generated_with(root: str | Path, config: SynthConfig) -> bool:
    """Whether ``root`` holds a corpus this generator wrote from ``config``: its
    ``dataset.json`` names ``GENERATOR`` and records exactly ``config``'s fields (as
    ``generate`` writes them) and ``queries.jsonl`` exists. A missing or unreadable file,
    another generator or a config of an older memlab (a field added since, a different
    default mix) → ``False``, so a cache of an older corpus is regenerated, not reused.
    """
    root = Path(root).expanduser()
    want = config_record(config)
    try:
        info = json.loads((root / "dataset.json").read_text(encoding="utf-8"))["info"]
        return (
            info["generator"] == GENERATOR
            and info["config"] == want
            and (root / "queries.jsonl").is_file()
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def load_negatives(root: str | Path) -> pd.DataFrame:
    """Lines that resemble evidence but are not: ``qid, path, start_line, end_line, kind, fact``.

    ``kind`` is ``"stale"`` (an earlier version of an updated fact),
    ``"distractor"`` (a sibling attribute of the same person), ``"near-miss"`` (an
    identifier one edit away from the one asked), ``"partial"`` (a fact holding some of a
    keyword query's keywords), or one of the release phenomena's (``"low-importance"``,
    ``"other-project"``, ``"transient"``). Raises
    ``FileNotFoundError`` when ``root/negatives.jsonl`` is missing.
    """
    path = Path(root).expanduser() / "negatives.jsonl"
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    cols = ["qid", "path", "start_line", "end_line", "kind", "fact"]
    return pd.DataFrame(rows, columns=cols)
