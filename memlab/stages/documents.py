"""The ``qmd_documents`` stage: QMD's hybrid query without its models, one result per file
(tobi/qmd ``src/store.ts``: ``hybridQuery`` with no expansion and no reranker,
``searchVec``, ``reciprocalRankFusion``, ``getHybridRrfWeights``).

Per query, QMD fuses two lists of *documents* (files):

- keyword: the ``keyword_mode="qmd"`` leg's files (``memlab.qmd.DocumentSearch``: whole
  files, QMD's query syntax), at most 20, each already placed on its best chunk;
- vector: the files of the query's 60 nearest chunks (``VECTOR_CHUNK_LIMIT``), each at
  its best chunk's cosine, best first, at most 20 (``QMD_LIST_LIMIT``);

then ``score = Σ_list W·w_leg / (k + rank + 1)`` with ``W = 2`` (the original query's
lists weigh 2; expansion lists, which need a model, would weigh 1) and ``w_leg`` the
pipeline's ``vector_weight`` / ``text_weight`` (1 in ``qmd-like``), plus the top-rank
bonus (``rrf_top_bonus``: +0.05 for a file first in a list, +0.02 for second or third:
``memlab.retrieval.fusion.rrf_top_bonus``); equal scores in the order QMD meets the files (keyword
list first, then the vector list's new files: ``tie_break``); the best 40 files kept
(``CANDIDATE_LIMIT``). A file's result is its best chunk (``memlab.qmd.best_chunk``: the
most query words), among the chunks the candidates hold (every chunk of the file when the
vector leg reaches the whole index, as ``qmd-like``'s depth does up to 1,000 chunks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.retrieval.fusion import rrf_top_bonus

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = ["ORIGINAL_LIST_WEIGHT", "check_qmd_documents", "qmd_documents_stage"]

# QMD's weight of a list of the original query (getHybridRrfWeights).
ORIGINAL_LIST_WEIGHT = 2.0


def check_qmd_documents(name: str, value: Any) -> None:
    """``qmd_documents`` must be True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def _vector_files(paths: np.ndarray, ranks: np.ndarray, scores: np.ndarray) -> dict[str, int]:
    """{path: rank} of QMD's vector list: the files of the given chunks (their vector ranks
    and cosines), each at its best cosine, best first (ties: the file met first in rank
    order), the first ``QMD_LIST_LIMIT``."""
    from memlab.qmd.query import QMD_LIST_LIMIT

    best: dict[str, tuple[float, int]] = {}
    for i in np.argsort(ranks, kind="stable"):
        path = str(paths[i])
        if path not in best or scores[i] > best[path][0]:
            first = best[path][1] if path in best else int(ranks[i])
            best[path] = (float(scores[i]), first)
    ordered = sorted(best, key=lambda f: (-best[f][0], best[f][1]))
    return {f: r for r, f in enumerate(ordered[:QMD_LIST_LIMIT])}


def qmd_documents_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``qmd_doc`` (= ``final``): each file's fused score on its best chunk, NaN elsewhere
    (the file's other chunks leave the results: ``valid``); ``tie_break``: the order QMD
    meets the files. See the module docstring for the formula."""
    # imported when the stage runs: the stage table is built by every search
    from memlab.qmd.query import CANDIDATE_LIMIT, QMD_LIST_LIMIT, VECTOR_CHUNK_LIMIT, best_chunk

    nq, nc = cs.pos.shape
    score = np.full((nq, nc), np.nan)
    tie = np.full((nq, nc), np.inf)
    w = ORIGINAL_LIST_WEIGHT * np.array([p.vector_weight, p.text_weight], dtype=np.float64)
    paths = cs.table.paths
    starts = cs.table.start_lines
    for qi in range(nq):
        cols = np.flatnonzero(st["valid"][qi])
        if cols.size == 0:
            continue
        pos = cs.pos[qi, cols]
        col_paths = paths[pos]
        near = st["has_vec"][qi, cols] & (cs.vec_rank[qi, cols] < VECTOR_CHUNK_LIMIT)
        vec = _vector_files(
            col_paths[near], cs.vec_rank[qi, cols][near], st["vec_in"][qi, cols][near]
        )
        hit = np.flatnonzero(st["has_text"][qi, cols])
        hit = hit[np.argsort(cs.text_rank[qi, cols][hit], kind="stable")]
        kw = {str(col_paths[i]): r for r, i in enumerate(hit[:QMD_LIST_LIMIT])}
        rep = {str(col_paths[i]): int(cols[i]) for i in hit[:QMD_LIST_LIMIT]}
        met = [*kw, *(f for f in vec if f not in kw)]  # QMD's order of first sight
        ranks = np.array([[vec.get(f, -1) for f in met], [kw.get(f, -1) for f in met]], float)
        fused = np.where(ranks >= 0, w[:, None] / (p.rrf_k + ranks + 1.0), 0.0).sum(axis=0)
        if p.rrf_top_bonus:
            fused = fused + rrf_top_bonus(ranks)
        keep = np.argsort(-fused, kind="stable")[:CANDIDATE_LIMIT]
        need = [met[j] for j in keep if met[j] not in rep]
        if need:  # the best chunk of a file only the vector list found
            own = {f: np.flatnonzero(col_paths == f) for f in need}
            every = np.concatenate(list(own.values()))
            texts = dict(zip(every.tolist(), cs.texts(pos[every]), strict=True))
            for f, idx in own.items():
                idx = idx[np.argsort(starts[pos[idx]], kind="stable")]
                rep[f] = int(cols[idx[best_chunk(cs.queries[qi], [texts[i] for i in idx])]])
        for j in keep:
            c = rep[met[j]]
            score[qi, c], tie[qi, c] = fused[j], j
    valid = ~np.isnan(score)
    return {"valid": valid, "qmd_doc": score, "tie_break": tie, "final": score}
