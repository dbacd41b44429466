"""The lab: a dataset bound to its indexes, with candidates computed once and cached.

`Lab` indexes every workspace of a `Dataset` (one index per group) and
retrieves candidates for all its questions; a `LabCandidates` then holds one
merged `CandidateSet` over all groups plus the evidence coverage of every
candidate, so that scoring any system — any fusion, decay, MMR or threshold
setting — is array work: ``Pipeline.rank`` → ``hits_from_topk`` →
``evaluate_hits``.

Each system runs on the index its ``Pipeline.retrieval_spec().fts_tokenizer``
names (``Lab.lab_for``); ``cache_vectors=True`` keeps query and chunk vectors
on disk (`memlab.embed.CachedEmbedder`).

A retrieval is one `Lab.group_candidates` per workspace group, merged by
`Lab.merge_groups`; an ``executor`` (`memlab.eval.raylab.RayRunner`) runs the
groups elsewhere (one Ray task each) and hands the parts back to the same merge.

Modules: ``labs`` (`Lab`, `GroupExecutor`, `unit_chunker`, `default_lab_index_dir`) and
``candidates`` (`LabCandidates`, `keyed_evidence`, `deep`).
"""

from __future__ import annotations

from memlab.eval.lab.candidates import GROUP_SEP, LabCandidates, deep, keyed_evidence
from memlab.eval.lab.labs import UNITS, GroupExecutor, Lab, default_lab_index_dir, unit_chunker

__all__ = [
    "GROUP_SEP",
    "UNITS",
    "GroupExecutor",
    "Lab",
    "LabCandidates",
    "deep",
    "default_lab_index_dir",
    "keyed_evidence",
    "unit_chunker",
]
