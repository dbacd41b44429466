"""The example agent (datasets/example-agent) harvested into a folder, and its answer key
keyed by question id: what the judging and reporting tests run on."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.conftest import REPO

EXAMPLE = REPO / "datasets" / "example-agent"


def harvest_example(out: Path, *, snapshot: bool = False) -> Path:
    """``memlab harvest`` of the example agent into ``out`` (returned)."""
    from memlab.datasets.harvest import harvest

    harvest(EXAMPLE / "workspace", out, sessions=EXAMPLE / "sessions", snapshot=snapshot)
    return out


def answer_key(folder: Path) -> pd.DataFrame:
    """``answers.jsonl`` (by query) with the ``qid`` each query has in the harvested
    ``folder``: ``qid, path, start_line, end_line``."""
    key = pd.read_json(EXAMPLE / "answers.jsonl", lines=True)
    queries = pd.read_json(folder / "queries.jsonl", lines=True)
    qid = dict(zip(queries["query"], queries["qid"], strict=True))
    return key.assign(qid=key["query"].map(qid))[["qid", "path", "start_line", "end_line"]]


def key_answer(key: pd.DataFrame, qid: str, path: str, start: int, end: int) -> str:
    """``"y"`` when lines ``start``–``end`` of ``path`` hold a line of the key's answer to
    ``qid``, else ``"n"``: the judgment a reader of the span gives."""
    k = key[(key["qid"] == qid) & (key["path"] == path)]
    hit = ((k["start_line"] <= end) & (k["end_line"] >= start)).any()
    return "y" if hit else "n"
