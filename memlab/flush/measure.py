"""Which memory answers later questions better — the flush notes, the transcripts (the
sessions corpus) or both — and at what cost (the flush experiment;
studies/flush_quality.py and notebook 10 run it).

``compare_memories`` scores each memory of a `FlushWorkspaces` under the same systems with
the lab (``Lab(level="file")``: a file is a session's memory — its transcript, or the notes
one flush wrote about it in the ``session`` layout — ranked by its best unit; the
questions' time cut-offs apply), and tests each system's per-question differences
``notes − transcripts`` and ``both − transcripts`` (paired t-test, Holm over all the
comparisons of one call). Cost per memory: tokens (``turn_tokens`` of every non-empty line
of every memory file), files, bytes on disk of the lab's index folder (SQLite index +
vector cache) and the seconds the lab took to index, embed and retrieve.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab.flush.transcript import turn_tokens
from memlab.flush.workspaces import FlushWorkspaces

MEMORY_METRICS = ("recall_any@5", "recall_any@10", "ndcg_jk@10")
BASE_MEMORY = "transcripts"


@dataclass
class MemoryComparison:
    """``table``: one row per (memory, system) with each metric's mean, ``n`` and, for
    notes/both, the difference to transcripts and its Holm-adjusted p; ``cost``: one row per
    memory; ``per_query``: long frame ``memory, system, qid, metric, value``."""

    table: pd.DataFrame
    cost: pd.DataFrame
    per_query: pd.DataFrame


def memory_cost(root: Path) -> dict[str, int]:
    """``files`` (``*.md`` under ``root``), ``tokens`` (Σ ``turn_tokens`` of their non-empty
    lines) and ``bytes`` (their UTF-8 size)."""
    files = tokens = size = 0
    for p in sorted(root.rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        files += 1
        size += len(text.encode("utf-8"))
        tokens += sum(turn_tokens(line) for line in text.split("\n") if line.strip())
    return {"files": files, "tokens": tokens, "bytes": size}


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under ``folder`` (0 when it does not exist)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def compare_memories(
    fw: FlushWorkspaces,
    systems: Sequence[str],
    *,
    embedder: Any = "hashing",
    unit: str = "turn",
    level: str = "file",
    metrics: Sequence[str] = MEMORY_METRICS,
    memories: Sequence[str] = ("notes", "transcripts", "both"),
    index_root: str | Path | None = None,
) -> MemoryComparison:
    """Score ``memories`` of ``fw`` under the presets ``systems`` (module docstring).
    ``unit`` and ``level``: the lab's (``"turn"`` / ``"chunk"``; ``"file"`` scores sessions,
    ``"unit"`` the ranked lines or chunks themselves, the protocol for the ``daily`` layout,
    whose files mix the notes of many sessions). ``index_root``: where each memory's lab
    index goes (``<index_root>/<memory>``; default the lab's own folder in the cache)."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.significance import holm, paired_ttest
    from memlab.pipeline.presets import preset

    frames, cost_rows, means = [], [], []
    for memory in memories:
        ds = fw.datasets[memory]
        index_dir = Path(index_root) / memory if index_root else None
        t0 = time.perf_counter()
        lab = Lab(
            ds, embedder=embedder, unit=unit, level=level, cache_vectors=True, index_dir=index_dir
        )
        res = run_experiment([preset(s) for s in systems], lab, list(metrics))
        seconds = time.perf_counter() - t0
        pq = res.per_query.copy()
        pq["memory"] = memory
        frames.append(pq[["memory", "system", "qid", "metric", "value"]])
        cost_rows.append(
            {
                "memory": memory,
                **memory_cost(ds.root),
                "index_bytes": folder_bytes(lab.index_dir),
                "lab_seconds": round(seconds, 1),
            }
        )
        for s in systems:
            row = res.table.loc[s]
            means.append(
                {"memory": memory, "system": s, "n": int(row["n"])}
                | {m: float(row[m]) for m in metrics}
            )
    per_query = pd.concat(frames, ignore_index=True)
    table = pd.DataFrame(means)
    tests = []
    for memory in memories:
        if memory == BASE_MEMORY or BASE_MEMORY not in memories:
            continue
        for s in systems:
            for m in metrics:
                a = per_query[(per_query.memory == memory) & (per_query.system == s)]
                b = per_query[(per_query.memory == BASE_MEMORY) & (per_query.system == s)]
                a, b = (x[x.metric == m].set_index("qid")["value"] for x in (a, b))
                common = a.index.intersection(b.index)
                d = float(np.mean(a[common] - b[common])) if len(common) else float("nan")
                p = paired_ttest(a[common], b[common])[1] if len(common) >= 2 else float("nan")
                tests.append({"memory": memory, "system": s, "metric": m, "diff": d, "p": p})
    if tests:
        t = pd.DataFrame(tests)
        t["p_adj"] = holm(t["p"].fillna(1.0).to_numpy())
        for m in metrics:
            sub = t[t.metric == m].set_index(["memory", "system"])
            key = list(zip(table.memory, table.system, strict=True))
            table[f"{m} diff"] = [sub["diff"].get(k, np.nan) for k in key]
            table[f"{m} p_adj"] = [sub["p_adj"].get(k, np.nan) for k in key]
    return MemoryComparison(table, pd.DataFrame(cost_rows), per_query)
