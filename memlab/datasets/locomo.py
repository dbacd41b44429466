"""LoCoMo loader: conversations become OpenClaw workspaces, evidence turns become line spans.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is never shipped with memlab:
this module reads the user's copy of its JSON and writes one workspace per
conversation, ``<out_dir>/<sample_id>/memory/YYYY-MM-DD.md``, one daily file per
session date. Each session starts with a heading line
``## Session 3 — 1:56 pm on 8 May, 2023`` followed by exactly one line per turn,
``[D3:5] Caroline: text [image: caption]``, so a line chunker sees one turn per
chunk and every evidence id maps to one line. Sessions sharing a date share a
file, separated by a blank line.

The file-writing helpers at the end are shared with the LongMemEval loader.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.datasets.base import Dataset, locate_data, shared_data_dir
from memlab.datasets.convwriter import (
    LINE_BREAKS,
    Session,
    cache_dir,
    check_dirname,
    evidence_frame,
    flatten,
    line_evidence,
    materialise,
    read_json,
    sha256_file,
    write_daily_files,
)

LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
LOCOMO_LICENSE = "CC BY-NC 4.0"
_FORMAT_VERSION = 1
# Where LoCoMo is looked for (``memlab.datasets.base.locate_data``) and what it is.
LOCOMO_ENV = "MEMLAB_LOCOMO"
LOCOMO_DEFAULT = shared_data_dir() / "locomo" / "locomo-dev.json"
LOCOMO_WHAT = (
    "the LoCoMo benchmark's JSON file (a list of conversations with their qa: locomo10.json,"
    " or memlab's dev split locomo-dev.json); memlab ships the loader, not the data (CC BY-NC)"
)

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_LOCOMO_DT = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_DIA_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_ID_SEPARATORS = re.compile(r"[;,\s]+")
# Every character str.splitlines() breaks on, so "one turn = one line" holds for any reader.


def locomo_default_path() -> Path | None:
    """Where LoCoMo is looked for when no path is given.

    Order: the environment variable ``MEMLAB_LOCOMO`` (returned even if the file
    is missing, so the load error names it), else
    ``../shared/datasets/locomo/locomo-dev.json`` beside the repository root
    when that file exists, else ``None``.
    """
    env = os.environ.get(LOCOMO_ENV)
    if env:
        return Path(env).expanduser()
    return LOCOMO_DEFAULT if LOCOMO_DEFAULT.is_file() else None


def parse_locomo_datetime(text: str) -> datetime:
    """Parse a LoCoMo session time such as ``"1:56 pm on 8 May, 2023"`` as UTC.

    12-hour clock: ``12:xx am`` is 00:xx and ``12:xx pm`` is 12:xx. Month names
    are full or abbreviated English (no locale dependence); the comma after the
    month is optional. Raises ``ValueError`` quoting the text when it does not
    match or names an impossible date or time.
    """
    m = _LOCOMO_DT.match(text) if isinstance(text, str) else None
    if m is None or m.group(5).lower() not in _MONTHS:
        raise ValueError(f"not a LoCoMo date like '1:56 pm on 8 May, 2023': {text!r}")
    hour, minute = int(m.group(1)), int(m.group(2))
    if not 1 <= hour <= 12 or minute > 59:
        raise ValueError(f"impossible 12-hour time in {text!r}")
    hour = hour % 12 + (12 if m.group(3).lower() == "p" else 0)
    try:
        return datetime(
            int(m.group(6)), _MONTHS[m.group(5).lower()], int(m.group(4)), hour, minute, tzinfo=UTC
        )
    except ValueError as exc:
        raise ValueError(f"impossible date in {text!r}: {exc}") from exc


def normalise_dia_id(raw: str) -> str | None:
    """Canonical form ``D<session>:<turn>`` of a dialog id, or ``None`` if malformed.

    Unambiguous slips are repaired: ``"D:11:26"`` → ``"D11:26"``, ``"D30:05"`` →
    ``"D30:5"`` (leading zeros dropped). Surrounding whitespace is ignored;
    anything else (``"D"``, ``"11:26"``, ``"D3"``) is malformed.
    """
    m = _DIA_ID.match(raw.strip()) if isinstance(raw, str) else None
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def load_locomo(
    path: str | Path | None = None,
    out_dir: str | Path | None = None,
    *,
    overwrite: bool = False,
) -> Dataset:
    """Load LoCoMo as a memlab `Dataset` (one workspace per conversation).

    Questions: ``qid = f"{sample_id}:q{i}"`` (``i`` the 0-based position in
    ``qa``), ``category`` from `LOCOMO_CATEGORIES`, ``time`` = the latest
    session's datetime + 1 day in Unix seconds (UTC; dated sessions without
    turns are ignored); extra columns ``answer``
    (``answer``, else ``adversarial_answer``, as str), ``answer_is_adversarial``
    and ``category_id``. Evidence: one span per valid dialog id, on that turn's
    line (``start_line == end_line``), grade 1, ``span_id`` the normalised id.

    Defects are repaired or dropped, never silently: see ``info["defects"]``
    (ids split, normalised, malformed, pointing at missing turns, duplicated;
    questions left without evidence; category-5 questions without ``answer``;
    multi-line turns flattened; dated sessions without turns).

    ``path`` defaults to `locomo_default_path`; ``out_dir`` defaults to
    ``$XDG_CACHE_HOME/memlab/locomo-<sha256[:12] of the file>`` (``~/.cache``
    without XDG), reused when complete unless ``overwrite``. Raises
    ``DataNotFoundError`` (a ``FileNotFoundError``) naming where it looked for a missing
    file (``locate_data``: ``path``, ``$MEMLAB_LOCOMO``, the default) and ``ValueError``
    for a file that is not JSON or not in LoCoMo's shape.
    """
    path = locate_data("LoCoMo", LOCOMO_ENV, LOCOMO_DEFAULT, LOCOMO_WHAT, path)
    digest = sha256_file(path)
    marker = {"loader": "locomo", "format_version": _FORMAT_VERSION, "source_sha256": digest}
    is_default = out_dir is None
    target = cache_dir(f"locomo-{digest[:12]}") if out_dir is None else Path(out_dir).expanduser()

    def build(root: Path) -> None:
        data = read_json(path, "LoCoMo")
        _build_locomo(data, root, source=path, digest=digest)

    return materialise(target, marker, build, overwrite=overwrite, rebuild_stale=is_default)


def _build_locomo(data: Any, root: Path, *, source: Path, digest: str) -> None:
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise ValueError(
            f"{source}: expected a JSON list of LoCoMo samples (objects with 'sample_id', "
            f"'conversation', 'qa'), got {type(data).__name__}"
        )
    defects: Counter[str] = Counter({k: 0 for k in _LOCOMO_DEFECTS})
    queries: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    workspaces: dict[str, Path] = {}
    stats: Counter[str] = Counter()
    n_entries = n_ids = 0
    for pos, sample in enumerate(data):
        for key, kind in (("sample_id", str), ("conversation", dict), ("qa", list)):
            if not isinstance(sample.get(key), kind):
                raise ValueError(
                    f"{source}: sample {pos} needs {key!r} ({kind.__name__}); "
                    f"expected LoCoMo samples with 'sample_id', 'conversation', 'qa'"
                )
        group = check_dirname(sample["sample_id"], "sample_id")
        if group in workspaces:
            raise ValueError(f"{source}: duplicate sample_id {group!r}")
        sessions, turn_lines = _locomo_sessions(sample["conversation"], group, defects, stats)
        placed = write_daily_files(root / group, sessions)
        workspaces[group] = root / group
        lookup = {
            dia: (placed[s].path, placed[s].first_line + t) for dia, (s, t) in turn_lines.items()
        }
        # The latest session, not the highest-numbered one, so no evidence lies in the future.
        asked_at = (max(s.when for s in sessions) + timedelta(days=1)).timestamp()
        for i, qa in enumerate(sample["qa"]):
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
                raise ValueError(f"{source}: {group} qa[{i}] needs a 'question' string")
            qid = f"{group}:q{i}"
            cat_id = qa.get("category")
            if cat_id not in LOCOMO_CATEGORIES:
                defects["unknown_categories"] += 1
            answer, adversarial = _locomo_answer(qa, defects)
            queries.append(
                {
                    "qid": qid,
                    "query": qa["question"],
                    "group": group,
                    "category": LOCOMO_CATEGORIES.get(cat_id, f"category-{cat_id}"),
                    "time": asked_at,
                    "answer": answer,
                    "answer_is_adversarial": adversarial,
                    "category_id": int(cat_id) if isinstance(cat_id, int) else -1,
                }
            )
            raw = qa.get("evidence", [])
            if isinstance(raw, str):
                defects["evidence_not_a_list"] += 1
                raw = [raw]
            elif not isinstance(raw, list):
                defects["evidence_not_a_list"] += 1
                raw = []
            n_entries += len(raw)
            ids, n_tokens = _clean_evidence(raw, lookup, defects)
            n_ids += n_tokens
            if not ids:
                defects["questions_without_evidence"] += 1
            evidence.extend(line_evidence(qid, ids, lookup))
    per_category = Counter(q["category"] for q in queries)
    info = {
        "source": source.name,
        "source_sha256": digest,
        "license": LOCOMO_LICENSE,
        "citation": "Maharana et al., Evaluating Very Long-Term Conversational Memory "
        "of LLM Agents, ACL 2024",
        "conversations": len(workspaces),
        "sessions": stats["sessions"],
        "turns": stats["turns"],
        "images": stats["images"],
        "questions": len(queries),
        "questions_per_category": {c: per_category[c] for c in sorted(per_category)},
        "evidence_entries": n_entries,
        "evidence_ids_total": n_ids,
        "evidence_ids_valid": len(evidence),
        "defects": dict(defects),
        "time_rule": "last session datetime + 1 day (UTC)",
        "format_version": _FORMAT_VERSION,
    }
    Dataset(
        "locomo", root, workspaces, pd.DataFrame(queries), evidence_frame(evidence), info
    ).save()


_LOCOMO_DEFECTS = (
    "evidence_multi_id_strings",
    "evidence_ids_normalised",
    "evidence_ids_malformed",
    "evidence_ids_unknown_turn",
    "evidence_ids_duplicate",
    "evidence_not_a_list",
    "questions_without_evidence",
    "adversarial_without_answer",
    "questions_without_answer",
    "unknown_categories",
    "turns_multiline_flattened",
    "turns_missing_text",
    "turn_ids_normalised",
    "turn_ids_malformed",
    "turn_ids_duplicate",
    "dated_sessions_without_turns",
)


def _locomo_sessions(
    conv: dict[str, Any], group: str, defects: Counter[str], stats: Counter[str]
) -> tuple[list[Session], dict[str, tuple[int, int]]]:
    """Sessions in session-number order and dia_id -> (session index, turn index)."""
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    dated = {int(k[len("session_") : -len("_date_time")]) for k in conv if _is_date_key(k)}
    sessions: list[Session] = []
    turn_lines: dict[str, tuple[int, int]] = {}
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not isinstance(turns, list):
            raise ValueError(f"{group}: session_{n} should be a list of turns")
        if not turns:
            continue
        raw_date = conv.get(f"session_{n}_date_time")
        if raw_date is None:
            raise ValueError(f"{group}: session_{n} has turns but no session_{n}_date_time")
        lines = []
        for t_index, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise ValueError(f"{group}: session_{n} turn {t_index} should be an object")
            dia = normalise_dia_id(turn.get("dia_id", ""))
            if dia is None:
                defects["turn_ids_malformed"] += 1
                dia = f"D{n}:{t_index + 1}"
            elif dia != turn["dia_id"]:
                defects["turn_ids_normalised"] += 1
            if dia in turn_lines:
                defects["turn_ids_duplicate"] += 1
            else:
                turn_lines[dia] = (len(sessions), t_index)
            if not isinstance(turn.get("text"), str):
                defects["turns_missing_text"] += 1
            text = str(turn.get("text") or "")
            caption = str(turn.get("blip_caption") or "")
            if LINE_BREAKS.search(text) or LINE_BREAKS.search(caption):
                defects["turns_multiline_flattened"] += 1
            line = f"[{dia}] {flatten(str(turn.get('speaker', '?')))}: {flatten(text)}"
            if caption.strip():
                stats["images"] += 1
                line += f" [image: {flatten(caption)}]"
            lines.append(line)
        heading = f"## Session {n} — {flatten(str(raw_date))}"
        sessions.append(Session(parse_locomo_datetime(raw_date), heading, lines))
        stats["sessions"] += 1
        stats["turns"] += len(lines)
    defects["dated_sessions_without_turns"] += len(
        dated - {n for n in numbers if conv[f"session_{n}"]}
    )
    if not sessions:
        raise ValueError(f"{group}: conversation has no session with turns")
    return sessions, turn_lines


def _is_date_key(key: str) -> bool:
    return key.startswith("session_") and key.endswith("_date_time") and key[8:-10].isdigit()


def _locomo_answer(qa: dict[str, Any], defects: Counter[str]) -> tuple[str, bool]:
    if qa.get("category") == 5 and "answer" not in qa:
        defects["adversarial_without_answer"] += 1
    if "answer" in qa:
        return str(qa["answer"]), False
    if "adversarial_answer" in qa:
        return str(qa["adversarial_answer"]), True
    defects["questions_without_answer"] += 1
    return "", False


def _clean_evidence(
    raw: list[Any], lookup: dict[str, Any], defects: Counter[str]
) -> tuple[list[str], int]:
    """Valid, unique, normalised dialog ids in order, and the number of ids seen after splitting."""
    kept: list[str] = []
    seen = 0
    for entry in raw:
        tokens = [t for t in _ID_SEPARATORS.split(str(entry)) if t]
        if len(tokens) > 1:
            defects["evidence_multi_id_strings"] += 1
        for token in tokens:
            seen += 1
            dia = normalise_dia_id(token)
            if dia is None:
                defects["evidence_ids_malformed"] += 1
            elif dia not in lookup:
                defects["evidence_ids_unknown_turn"] += 1
            elif dia in kept:
                defects["evidence_ids_duplicate"] += 1
            else:
                if dia != token:
                    defects["evidence_ids_normalised"] += 1
                kept.append(dia)
        if not tokens:
            seen += 1
            defects["evidence_ids_malformed"] += 1
    return kept, seen
