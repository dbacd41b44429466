"""The `Dataset` type and memlab's plain on-disk format for evaluation data (for users:
docs/folder-format.md; ``memlab synth`` and ``memlab harvest`` write it).

A dataset is one or more OpenClaw workspaces plus questions and evidence spans. Evidence
is given as line spans of memory files, not as chunk ids, so the same judgements score any
chunker and any chunk size (a retrieved chunk is relevant when its line range overlaps a span).

On disk (the "folder" format, also what `memlab synth` writes)::

    ROOT/dataset.json      {"name", "workspaces": {group: relative dir}, "info": {...}}
    ROOT/queries.jsonl     {"qid", "query", "group", "category", "time"[, "cutoff"]} per line
    ROOT/evidence.jsonl    {"qid", "path", "start_line", "end_line", "grade", "span_id"}
    ROOT/<workspace dirs>  MEMORY.md, memory/YYYY-MM-DD.md, ...

`group` names the workspace a question is asked against (LoCoMo has one per
conversation); single-workspace datasets use the group "default". `time` is
the question's own "now" in Unix seconds (NaN when unknown); decay uses it.

``cutoff`` (optional; Unix seconds, null/NaN = none): the memory as of the question.
The lab then answers it from the units older than the cut-off only (``memlab.eval.lab.
Lab(as_of=True)``, the default; ``memlab.store.asof``): a unit's time is its file's — the
date of a dated memory file ``memory/**/YYYY-MM-DD.md``, plus ``HH:MM`` for
``YYYY-MM-DD-HHMM.md`` — and a unit of an undated file (``MEMORY.md``, notes) is always
visible. Give several sessions of one day ``-HHMM`` names so they keep their order, and
a question asked during a session the cut-off of that session's time (its own session is
then hidden). Without the column every question sees the whole workspace.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

QUERY_COLUMNS = ("qid", "query", "group", "category", "time")
EVIDENCE_COLUMNS = ("qid", "path", "start_line", "end_line", "grade", "span_id")


@dataclass
class Dataset:
    """Workspaces, questions and evidence spans, backed by a folder on disk.

    Attributes:
        name: short name, e.g. ``"synthetic"`` or ``"locomo"``.
        root: the folder holding ``dataset.json`` and the workspaces.
        workspaces: group name -> workspace folder (absolute).
        queries: DataFrame with columns ``qid, query, group, category, time``.
        evidence: DataFrame with columns ``qid, path, start_line, end_line, grade,
            span_id``; lines 1-based inclusive, ``path`` relative to its workspace with ``/``.
        info: provenance (generator parameters, defect counts, licence...).
        judged: every span a judge labelled, relevant or not (``qid, path, start_line,
            end_line, grade``; ``memlab.datasets.judgments.select_qrels``), when the labels
            are incomplete (a harvested or judged folder): judged@k reads it. None when the
            evidence is complete (generated or hand-written: every other line is not
            relevant).
    """

    name: str
    root: Path
    workspaces: dict[str, Path]
    queries: pd.DataFrame
    evidence: pd.DataFrame
    info: dict[str, Any] = field(default_factory=dict)
    judged: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.queries = _coerce_queries(self.queries)
        self.evidence = _coerce_evidence(self.evidence)
        unknown = set(self.queries["group"]) - set(self.workspaces)
        if unknown:
            raise ValueError(f"queries refer to unknown workspace groups: {sorted(unknown)}")
        dup = self.queries["qid"].duplicated()
        if dup.any():
            raise ValueError(f"duplicate qids: {self.queries['qid'][dup].tolist()[:5]}")

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, root={str(self.root)!r}, "
            f"workspaces={len(self.workspaces)}, queries={len(self.queries)}, "
            f"evidence_spans={len(self.evidence)})"
        )

    @property
    def fingerprint(self) -> str:
        """sha256 over queries, evidence and the workspaces' file hashes (for saved results)."""
        import hashlib

        h = hashlib.sha256()
        h.update(self.queries.to_json(orient="records").encode())
        h.update(self.evidence.to_json(orient="records").encode())
        for group in sorted(self.workspaces):
            ws = self.workspaces[group]
            for p in sorted(ws.rglob("*.md")):
                if p.is_file() and not p.is_symlink():
                    h.update(str(p.relative_to(ws)).encode())
                    h.update(hashlib.sha256(p.read_bytes()).digest())
        return h.hexdigest()

    def subset(self, qids: list[str] | set[str], name: str | None = None) -> Dataset:
        """The same workspaces restricted to the given questions (for train/test splits)."""
        keep = set(qids)
        q = self.queries[self.queries["qid"].isin(keep)].reset_index(drop=True)
        e = self.evidence[self.evidence["qid"].isin(keep)].reset_index(drop=True)
        return Dataset(
            name or self.name,
            self.root,
            dict(self.workspaces),
            q,
            e,
            dict(self.info),
            self.judged_of(keep),
        )

    def judged_of(self, qids: set[str]) -> pd.DataFrame | None:
        """``judged`` restricted to the questions ``qids`` (None stays None)."""
        if self.judged is None:
            return None
        return self.judged[self.judged["qid"].isin(qids)].reset_index(drop=True)

    def select_groups(
        self, groups: list[str] | tuple[str, ...], name: str | None = None
    ) -> Dataset:
        """The data set restricted to the workspaces ``groups`` and the questions asked
        against them (with their evidence), in the data set's own order. An empty list or
        a group the data set does not have raises ``ValueError`` naming it."""
        wanted = [str(g) for g in groups]
        unknown = [g for g in wanted if g not in self.workspaces]
        if unknown or not wanted:
            raise ValueError(
                f"{self.name}: no workspace group {', '.join(map(repr, unknown)) or '(none given)'}"
                f"; it has {', '.join(self.workspaces)}"
            )
        keep = set(wanted)
        q = self.queries[self.queries["group"].isin(keep)].reset_index(drop=True)
        e = self.evidence[self.evidence["qid"].isin(set(q["qid"]))].reset_index(drop=True)
        ws = {g: p for g, p in self.workspaces.items() if g in keep}
        judged = self.judged_of(set(q["qid"]))
        return Dataset(name or self.name, self.root, ws, q, e, dict(self.info), judged)

    def first_sessions(self, n: int, root: str | Path) -> Dataset:
        """The data set as it stood after its first ``n`` dated files: each workspace's
        dated memory files (``memlab.store.asof.unit_time``, in time order) up to the
        ``n``-th, with its undated files, copied under ``root/<group>``; and the questions
        whose ``cutoff`` is at most the time of the first file left out (they saw no later
        file), with their evidence. A smaller run of an as-of data set (RealMem) that
        answers every kept question from exactly the memory it had. ``n`` < 1 raises
        ``ValueError``; a data set without a ``cutoff`` column raises ``KeyError``."""
        import shutil

        from memlab.store.asof import unit_time

        if n < 1:
            raise ValueError(f"first_sessions needs n >= 1, got {n}")
        if "cutoff" not in self.queries.columns:
            raise KeyError(f"{self.name}: first_sessions needs a 'cutoff' column in the queries")
        out, root = {}, Path(root)
        end: dict[str, float] = {}
        for group, ws in self.workspaces.items():
            files = [p for p in sorted(ws.rglob("*.md")) if p.is_file() and not p.is_symlink()]
            rel = [p.relative_to(ws).as_posix() for p in files]
            dated = sorted((t, r) for r in rel if not math.isnan(t := unit_time(r)))
            kept = {r for _, r in dated[:n]} | {r for r in rel if math.isnan(unit_time(r))}
            end[group] = dated[n][0] if len(dated) > n else math.inf
            for r in sorted(kept):
                dest = root / group / r
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ws / r, dest)
            out[group] = root / group
        q = self.queries
        keep = q["cutoff"].to_numpy() <= q["group"].map(end).to_numpy()
        q = q[keep].reset_index(drop=True)
        e = self.evidence[self.evidence["qid"].isin(set(q["qid"]))].reset_index(drop=True)
        return Dataset(self.name, root, out, q, e, dict(self.info), self.judged_of(set(q["qid"])))

    def save(self) -> Path:
        """Write ``dataset.json``, ``queries.jsonl`` and ``evidence.jsonl`` under ``root``."""
        self.root.mkdir(parents=True, exist_ok=True)
        meta = {
            "name": self.name,
            "workspaces": {
                g: _relative_or_absolute(p, self.root) for g, p in self.workspaces.items()
            },
            "info": self.info,
        }
        (self.root / "dataset.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        write_jsonl(self.root / "queries.jsonl", self.queries.to_dict(orient="records"))
        write_jsonl(self.root / "evidence.jsonl", self.evidence.to_dict(orient="records"))
        return self.root


class DataNotFoundError(FileNotFoundError):
    """A dataset's file or folder is not where memlab looked; the message names every place
    looked at, what the data is, and how to point memlab at it (``locate_data``)."""


def shared_data_dir() -> Path:
    """``../shared/datasets`` beside the repository root: where a checkout next to the
    shared data finds LoCoMo, BEAM, RealMem … without being told (it may not exist)."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def locate_data(
    name: str,
    env_var: str,
    default: Path | None,
    what: str,
    path: str | Path | None = None,
    *,
    folder: bool | None = False,
) -> Path:
    """Where dataset ``name`` is: the one rule of every loader (LoCoMo, BEAM, LongMemEval,
    RealMem …) for finding its data, and for saying where it looked when it is not there.

    Order: ``path`` when given (the caller's ``--path`` / ``path=``), else the environment
    variable ``env_var`` when set, else ``default`` (e.g. under ``shared_data_dir()``; None:
    no default place). The first of these that is given is the answer and must exist as a
    file (with ``folder=True`` a folder; ``folder=None``: either) — an explicit place that is wrong is not silently
    replaced by another. Returns it with ``~`` expanded. Otherwise raises
    ``DataNotFoundError``: ``"NAME not found: looked at PLACE (why), …; NAME is WHAT. Pass
    its path (--path, or path= in Python) or set ENV_VAR."``.
    """
    kind = {True: "folder", False: "file", None: "file or folder"}[folder]

    def why_not(p: Path) -> str | None:
        if not p.exists():
            return f"no such {kind}"
        if folder is None:
            return None
        if folder and not p.is_dir():
            return "not a folder"
        if not folder and not p.is_file():
            return "not a file"
        return None

    looked: list[str] = []
    env = os.environ.get(env_var) or None
    if path is not None:
        candidates = [(Path(path).expanduser(), f"the path given, {Path(path).expanduser()}")]
    elif env is not None:
        candidates = [(Path(env).expanduser(), f"${env_var}={env}")]
    else:
        looked.append(f"${env_var} (not set)")
        candidates = [] if default is None else [(default, f"the default {kind} {default}")]
    for p, label in candidates:
        problem = why_not(p)
        if problem is None:
            return p
        looked.append(f"{label} ({problem})")
    if default is None and path is None and env is None:
        looked.append("no default place")
    raise DataNotFoundError(
        f"{name} not found: looked at {', '.join(looked)}. {name} is {what}. Pass its path"
        f" (--path, or path= in Python) or set {env_var}."
    )


def load_folder(root: str | Path, qrels: str = "both", *, check_spans: bool = True) -> Dataset:
    """Read a dataset in memlab's folder format (see the module docstring).

    A folder with ``queries.jsonl`` but no ``dataset.json`` is read as one
    workspace: ``ROOT/workspace`` if it exists, else ``ROOT`` itself.
    The relevance labels are ``evidence.jsonl`` and the human judgments of
    ``judgments.jsonl`` (``memlab judge``), chosen by ``qrels`` (``"human"``,
    ``"implicit"``: harvest's, ``"both"``; ``memlab.datasets.judgments.select_qrels``).
    Every label's span is checked against its workspace (``memlab.datasets.validate``;
    ``check_spans=False`` for a writer whose spans may lie outside it by design, e.g. a
    simulated memory that lost the file its evidence was on).
    Raises ``FileNotFoundError`` naming the missing file, ``ValueError`` on a
    malformed line (with its line number), on a span outside the workspace (naming
    question, file and line), and when ``qrels`` leaves no relevant span at all.
    """
    from memlab.datasets.judgments import JUDGMENTS_FILE, human_judgments, select_qrels
    from memlab.datasets.validate import check_spans as check
    from memlab.datasets.validate import check_workspace_folder, groups_of

    root = Path(root).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"dataset folder not found: {root}")
    meta_path = root / "dataset.json"
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        name = meta.get("name", root.name)
        workspaces = {g: (root / p).resolve() for g, p in meta.get("workspaces", {}).items()}
        info = meta.get("info", {})
    else:
        name = root.name
        ws = root / "workspace"
        workspaces = {"default": (ws if ws.is_dir() else root).resolve()}
        info = {}
    for required in ("queries.jsonl", "evidence.jsonl"):
        if not (root / required).exists():
            raise FileNotFoundError(f"{root / required} is missing (see memlab.datasets.base)")
    for group, ws in workspaces.items():
        check_workspace_folder(root, group, ws)
    queries = pd.DataFrame(_read_jsonl(root / "queries.jsonl"))
    evidence = pd.DataFrame(_read_jsonl(root / "evidence.jsonl"))
    human = human_judgments(root)
    group_of = groups_of(queries)
    sizes: dict[tuple[str, str], int] = {}
    if check_spans:
        read: dict[str, Any] = {}  # each workspace's files, read once for both
        sizes = check(evidence, workspaces, group_of, str(root / "evidence.jsonl"), read)
        sizes |= check(human, workspaces, group_of, str(root / JUDGMENTS_FILE), read)
    relevant, judged = select_qrels(evidence, human, qrels)
    if judged is not None:  # each judged file's lines: judged@k reads a span's true end
        keys = zip(judged["qid"].map(group_of), judged["path"], strict=True)
        judged["last_line"] = [sizes.get(k, 0) for k in keys]
    if len(evidence) + len(human) and relevant.empty:
        what = {
            "human": f"no human judgment (run memlab judge {root}, or pick --qrels implicit)",
            "implicit": "no implicit evidence (evidence rows with judge 'implicit', as memlab"
            " harvest writes)",
        }.get(qrels, "no relevant span")
        raise ValueError(f"{root}: --qrels {qrels} leaves {what}")
    return Dataset(name, root, workspaces, queries, relevant, info, judged)


def _coerce_queries(df: pd.DataFrame) -> pd.DataFrame:
    df = pd.DataFrame(df).copy()
    for col in ("qid", "query"):
        if col not in df.columns:
            raise ValueError(f"queries need a {col!r} column; got {list(df.columns)}")
    if "group" not in df.columns:
        df["group"] = "default"
    if "category" not in df.columns:
        df["category"] = ""
    if "time" not in df.columns:
        df["time"] = math.nan
    df["qid"] = df["qid"].astype(str)
    df["query"] = df["query"].astype(str)
    df["group"] = df["group"].astype(str)
    df["category"] = df["category"].fillna("").astype(str)
    df["time"] = pd.to_numeric(df["time"], errors="coerce").astype(float)
    if "cutoff" in df.columns:
        df["cutoff"] = pd.to_numeric(df["cutoff"], errors="coerce").astype(float)
    extra = [c for c in df.columns if c not in QUERY_COLUMNS]
    return df[list(QUERY_COLUMNS) + extra].reset_index(drop=True)


def _coerce_evidence(df: pd.DataFrame) -> pd.DataFrame:
    df = pd.DataFrame(df).copy()
    if df.empty and not len(df.columns):
        df = pd.DataFrame(columns=list(EVIDENCE_COLUMNS))
    for col in ("qid", "path", "start_line", "end_line"):
        if col not in df.columns:
            raise ValueError(f"evidence needs a {col!r} column; got {list(df.columns)}")
    if "grade" not in df.columns:
        df["grade"] = 1
    df["qid"] = df["qid"].astype(str)
    df["path"] = df["path"].astype(str)
    df["start_line"] = df["start_line"].astype(int)
    df["end_line"] = df["end_line"].astype(int)
    df["grade"] = df["grade"].astype(int)
    bad = df[(df["start_line"] < 1) | (df["end_line"] < df["start_line"])]
    if len(bad):
        raise ValueError(
            f"evidence spans need 1 <= start_line <= end_line: {bad.head(3).to_dict('records')}"
        )
    if "span_id" not in df.columns:
        df["span_id"] = df.groupby("qid").cumcount().astype(str)
    df["span_id"] = df["span_id"].astype(str)
    extra = [c for c in df.columns if c not in EVIDENCE_COLUMNS]
    return df[list(EVIDENCE_COLUMNS) + extra].reset_index(drop=True)


def _relative_or_absolute(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return str(Path(path).resolve())


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """The folder format's JSONL: a JSON object per row and line (UTF-8 kept, NaN → null)."""
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            clean = {
                k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()
            }
            fh.write(json.dumps(clean, ensure_ascii=False, default=str) + "\n")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
    return rows
