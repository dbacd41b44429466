"""The prior stage: rank by a query-blind order instead of the score — the baselines a
memory benchmark needs beside any retrieval (RealMem: "a recency-only order of past
sessions already reaches about 0.56 recall_any@10").

``rank_by`` (``memlab.config.vocab.RANK_BY``; ``"score"`` = off):

- ``"recency"``: ``final`` = the unit's file time in days since 1970
  (``memlab.store.asof.unit_time``: the date of a dated memory file, plus its ``-HHMM``),
  so the newest file comes first and the units of one file tie (insertion order). A unit
  without a time (``MEMORY.md``, undated notes) is not ranked (not valid).
- ``"random"``: ``final`` = a uniform number in [0, 1) per (``rank_seed``, query id, file
  path) — blake2b of the three, so the order of a query's files is a seeded random
  permutation whatever the candidate order, the same in every run, and every unit of one
  file shares it (reduced to files, each order of the files is equally likely).

Both rank only the candidates the legs found, and the score stages before them only
decide validity; the ``recency`` and ``random`` presets (``memlab.pipeline.presets``) therefore run
the vector leg over every unit (their depth is every unit an index can hold), so that the
candidates are the whole memory — as of each query's cut-off when it has one
(``memlab.store.asof``). Engine layer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from memlab.config.vocab import RANK_BY
from memlab.stages.shape import file_ids
from memlab.store.asof import unit_times

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = ["PRIOR_PARAMS", "check_prior", "prior_active", "prior_stage", "random_key"]

PRIOR_PARAMS = {"rank_by": "score", "rank_seed": 0}
DAY_SECONDS = 86_400.0


def check_prior(name: str, value: object) -> None:
    """``rank_by``: one of ``RANK_BY``; ``rank_seed``: an integer ≥ 0 (not a bool)."""
    if name == "rank_by":
        if value not in RANK_BY:
            raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}; got {value!r}")
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def prior_active(p: Params, mode: str) -> bool:
    """On when ``rank_by`` is not ``"score"``."""
    return p.rank_by != "score"


def random_key(seed: int, qid: str, path: str) -> float:
    """A uniform number in [0, 1): the first 8 bytes of blake2b(``seed`` · ``qid`` ·
    ``path``) / 2⁶⁴ (joined by U+001F). Stable across runs and platforms."""
    digest = hashlib.blake2b(f"{seed}\x1f{qid}\x1f{path}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def prior_stage(p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``prior`` and ``final`` = the prior (module docstring); ``valid`` drops the units a
    recency order cannot place (no time)."""
    pos = np.maximum(cs.pos, 0)
    valid = st["valid"]
    if p.rank_by == "recency":
        days = unit_times(cs.table)[pos] / DAY_SECONDS
        valid = valid & np.isfinite(days)
        value = np.where(valid, days, np.nan)
    else:
        # A file is a path within a segment of the table (a lab's groups may share paths):
        # one hash per (query, file), every unit of the file gets it.
        files = file_ids(cs.table)
        seg = cs.table.segments
        value = np.full(cs.pos.shape, np.nan)
        qi, ci = np.nonzero(valid)
        f = files[pos[qi, ci]]
        pairs, inv = np.unique(qi * (int(files.max(initial=0)) + 1) + f, return_inverse=True)
        first = np.unique(inv, return_index=True)[1]
        keys = []
        for q, c in zip(qi[first].tolist(), ci[first].tolist(), strict=True):
            k = int(pos[q, c])
            where = f"{0 if seg is None else int(seg[k])}:{cs.table.paths[k]}"
            keys.append(random_key(p.rank_seed, cs.qids[q], where))
        value[qi, ci] = np.asarray(keys, dtype=np.float64)[inv] if len(pairs) else 0.0
    return {"valid": valid, "prior": value, "final": value}
