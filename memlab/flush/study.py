"""The whole flush chain on a loaded data set: read its conversations, replay them under a
flush config and policy, write the memory they imply (``memlab flush simulate``)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from memlab.config.vocab import FLUSH_POLICIES
from memlab.datasets.base import Dataset
from memlab.flush.config import FlushConfig
from memlab.flush.lifecycle import simulate
from memlab.flush.policies import POLICIES, FlushPolicy
from memlab.flush.transcript import Conversation, attach_realmem_extracted, read_conversations
from memlab.flush.workspaces import FlushWorkspaces, write_flush_workspaces


def evidence_lines(dataset: Dataset) -> dict[str, frozenset[tuple[str, int]]]:
    """Per workspace group, every ``(path, line)`` inside an evidence span of one of its
    questions (grade ≥ 1): what the ``oracle`` policy may write."""
    group_of = dict(zip(dataset.queries["qid"], dataset.queries["group"], strict=True))
    out: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for row in dataset.evidence.itertuples(index=False):
        if row.qid in group_of and row.grade >= 1:
            for ln in range(int(row.start_line), int(row.end_line) + 1):
                out[group_of[row.qid]].add((row.path, ln))
    return {g: frozenset(v) for g, v in out.items()}


def attach_extracted(
    dataset: Dataset, conversations: list[Conversation], extracted_from: str | Path | None
) -> int:
    """Attach the data set's own extracted memory points; returns how many. RealMem only
    (``extracted_memory`` per session): read from ``extracted_from`` (a persona folder or
    file), else where ``load_realmem`` finds RealMem. ``ValueError`` for another data set
    or when no point could be placed (the ``extracted`` policy would write nothing)."""
    if dataset.name != "realmem" and extracted_from is None:
        raise ValueError(
            f"the {dataset.name!r} data set carries no extracted memory points (RealMem's"
            " extracted_memory does); choose the extractive or oracle policy"
        )
    from memlab.datasets.base import locate_data
    from memlab.datasets.realmem import (
        REALMEM_DEFAULT,
        REALMEM_ENV,
        REALMEM_WHAT,
        find_personas,
    )

    root = locate_data(
        "RealMem", REALMEM_ENV, REALMEM_DEFAULT, REALMEM_WHAT, extracted_from, folder=None
    )
    counts = attach_realmem_extracted(conversations, find_personas(Path(root)))
    if not counts["attached"]:
        raise ValueError(f"no extracted_memory point of {root} matched a session of the data set")
    return counts["attached"]


def flush_study(
    dataset: Dataset,
    config: FlushConfig | None = None,
    policy: str | FlushPolicy = "extractive",
    *,
    out_dir: str | Path | None = None,
    layout: str = "daily",
    budget_tokens: int | None = None,
    extracted_from: str | Path | None = None,
) -> FlushWorkspaces:
    """Replay ``dataset``'s conversations (``memlab.flush.lifecycle``) under ``config``
    (default: the spec's) with ``policy`` (a name of ``FLUSH_POLICIES`` or a function) and
    write the notes / transcripts / both data sets (``memlab.flush.workspaces``: the cache
    unless ``out_dir``). ``ValueError`` for an unknown policy name, naming the valid ones."""
    cfg = config or FlushConfig()
    convs = read_conversations(dataset)
    if isinstance(policy, str):
        if policy not in FLUSH_POLICIES:
            raise ValueError(f"policy must be one of {', '.join(FLUSH_POLICIES)}; got {policy!r}")
        name, fn = policy, POLICIES[policy]
    else:
        name, fn = getattr(policy, "__name__", "custom"), policy
    if name == "extracted":
        attach_extracted(dataset, convs, extracted_from)
    evidence = evidence_lines(dataset) if name == "oracle" else None
    run = simulate(convs, cfg, fn, policy_name=name, budget_tokens=budget_tokens, evidence=evidence)
    return write_flush_workspaces(dataset, run, out_dir, layout=layout)
