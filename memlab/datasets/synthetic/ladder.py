"""One synthetic workspace asked at several paraphrase levels: a paraphrase ladder.

Rewording changes a corpus's questions and nothing else (``SynthConfig.paraphrase``: its
own streams), so the corpora of one config at levels p_1 … p_k share their workspace byte
for byte. ``write_ladder`` writes that workspace once with every level's questions in
one folder-format dataset: qids ``p050-update-0003`` (the level in hundredths), a
``paraphrase`` column on each question, each level's evidence under its own qids (no
``negatives.jsonl``: the curve reads none). One index then serves every level (the realism curve indexes each style once), and
``level_subset`` gives one level back as the corpus ``generate`` writes for it (same
questions, evidence and workspace; only qids and the extra column differ).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

from memlab.datasets.base import Dataset, load_folder
from memlab.datasets.synthetic.base import GENERATOR, SynthConfig, config_record
from memlab.datasets.synthetic.writer import (
    CORPUS_ENTRIES,
    check_target,
    generate,
)

__all__ = ["LADDER_COLUMN", "level_qid", "level_subset", "write_ladder"]

LADDER_COLUMN = "paraphrase"


def level_qid(level: float, qid: str) -> str:
    """``p050-update-0003``: a question's id at paraphrase ``level`` (hundredths, 3 digits)."""
    return f"p{round(level * 100):03d}-{qid}"


def write_ladder(
    config: SynthConfig, levels: list[float], out: str | Path, *, overwrite: bool = False
) -> Dataset:
    """Write ``config``'s corpus at each paraphrase level of ``levels`` into ``out`` as one
    dataset (module docstring). ``config.confusability`` must be None (look-alike lines
    are built from the questions' words, so each level would have its own workspace):
    ``ValueError``. ``out`` follows ``generate``'s rule (new or empty, or with
    ``overwrite`` a corpus this generator wrote)."""
    if config.confusability is not None:
        raise ValueError("a paraphrase ladder shares one workspace: confusability must be None")
    if not levels or len(set(levels)) != len(levels):
        raise ValueError(f"levels must be distinct and not empty, got {levels}")
    out = Path(out).expanduser()
    check_target(out, overwrite)
    queries, evidence = [], []
    with tempfile.TemporaryDirectory(prefix="memlab-ladder-") as tmp:
        first = None
        for level in levels:
            ds = generate(replace(config, paraphrase=level), Path(tmp) / f"{level}")
            tree = _tree(ds.workspaces["default"])
            if first is None:
                first = ds
                base = tree
            elif tree != base:  # the premise of the layout: never silently broken
                raise RuntimeError(f"paraphrase {level} changed the workspace; a generator bug")
            q = ds.queries.copy()
            q[LADDER_COLUMN] = float(level)
            for frame, target in ((q, queries), (ds.evidence.copy(), evidence)):
                frame["qid"] = [level_qid(level, x) for x in frame["qid"]]
                target.append(frame)
        assert first is not None
        for name in CORPUS_ENTRIES:  # check_target allowed nothing else in ``out``
            old = out / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
        out.mkdir(parents=True, exist_ok=True)
        (out / "workspace").mkdir()
        for rel, data in base.items():
            (out / "workspace" / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / "workspace" / rel).write_bytes(data)
    record = config_record(config)
    record.pop("paraphrase", None)
    info = {
        **first.info,
        "config": record,
        "ladder": {"column": LADDER_COLUMN, "levels": [float(x) for x in levels]},
        "counts": {k: v * len(levels) for k, v in first.info["counts"].items()},
        "generator": GENERATOR,
    }
    info.pop("negatives", None)  # the curve reads none: the ladder keeps its size down
    ds = Dataset(
        "synthetic",
        out,
        {"default": out / "workspace"},
        pd.concat(queries),
        pd.concat(evidence),
        info,
    )
    ds.save()
    return load_folder(out)


def level_subset(ds: Dataset, level: float) -> Dataset:
    """The questions (and their evidence) of one paraphrase level of a ladder dataset."""
    q = ds.queries
    return ds.subset(q.loc[(q[LADDER_COLUMN] - level).abs() < 1e-9, "qid"].tolist())


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
