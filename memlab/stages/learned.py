"""A learned linear score over candidate features: the ``learned`` stage.

``Pipeline.learned_model`` (default ``()``: off) is a tuple of
``(feature, mean, scale, coef)`` rows, plain floats, plus optionally one row
``("bias", 0, 1, b)``. When it is set, the stage replaces the score of every
valid candidate with

    score = Σ_f coef_f · (x_f − mean_f) / scale_f  (+ b)

where ``x_f`` are the candidate features of `candidate_features` — exactly the
``decision_function`` of a scikit-learn ``StandardScaler`` + ``LogisticRegression``
(pointwise, or the lab's pairwise ranker), with no scikit-learn at query time. Features whose name is
``"a*b"`` are products of two base features: a product of a leg's score with a
query-level feature is a per-query leg weight (query-adaptive fusion).

The model is fitted in the lab (``memlab.eval.ltr``; ``studies/fit_learned.py``);
the engine only evaluates it. It runs after the heading filter (a dropped
heading stays dropped) and only in hybrid mode (both legs present). The stage is
declared in ``memlab.stages`` like every other (off while ``learned_model`` is ``()``);
this module holds its functions. The fitted model of the candidate preset
``memlab.pipeline.presets.memlab_learned`` is a data file, ``learned_model.json`` beside this module
(package data), that ``studies/fit_learned.py --write`` writes (`save_model`) and
`fitted_model` reads on first use.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.config.vocab import LEARNED_FEATURES
from memlab.retrieval.fusion import normalize
from memlab.stages.context import neighbor_columns, neighbor_positions

if TYPE_CHECKING:
    from memlab.retrieval.candidates import CandidateSet
    from memlab.stages.views import Params

__all__ = [
    "BASE_FEATURES",
    "MODEL_FILE",
    "QUERY_FEATURES",
    "candidate_features",
    "check_model",
    "chunk_lengths",
    "feature_matrix",
    "fitted_model",
    "learned_active",
    "learned_stage",
    "linear_score",
    "load_model",
    "model_path",
    "neighbor_columns",
    "save_model",
]

# Per-candidate features (0 where a leg did not find the candidate).
CANDIDATE_FEATURES: tuple[str, ...] = (
    "vz",  # cosine z-scored over the query's vector hits
    "tz",  # |bm25| z-scored over the query's keyword hits
    "vmm",  # cosine min-max over the query's vector hits
    "tmax",  # |bm25| / the query's best |bm25|
    "has_v",
    "has_t",
    "vrr",  # 1 / (1 + vector rank)
    "trr",  # 1 / (1 + keyword rank)
    "pvz",  # previous chunk's vz (0: no previous chunk among the candidates)
    "nvz",  # next chunk's vz
    "ptz",  # previous chunk's tz
    "ntz",  # next chunk's tz
    "loglen",  # ln(1 + characters of the chunk)
    "prior",  # the score of the stages before this one (memlab-best: z-sum + neighbours)
    "pvz+",  # max(pvz, 0): a neighbour lends score only when it is above the mean
    "nvz+",
    "ptz+",
    "ntz+",
)
# Query-level features, the same for every candidate of a query.
QUERY_FEATURES: tuple[str, ...] = (
    "qlen",  # ln(1 + words of the query)
    "vtop",  # the best cosine
    "vgap",  # best − second-best cosine
    "tgap",  # (best − second-best |bm25|) / best |bm25|
    "nt",  # ln(1 + keyword hits)
    "agree",  # |top-10 vector ∩ top-10 keyword| / 10
)
BASE_FEATURES: tuple[str, ...] = CANDIDATE_FEATURES + QUERY_FEATURES
# The allowed names live in memlab.config.vocab (one list for every module); these lists say
# what each means and in which order the stage computes them.
if set(BASE_FEATURES) != set(LEARNED_FEATURES) or len(BASE_FEATURES) != len(LEARNED_FEATURES):
    raise ImportError("memlab.config.vocab.LEARNED_FEATURES and memlab.stages.learned disagree")
AGREE_K = 10


def chunk_lengths(cs: CandidateSet, positions: np.ndarray) -> np.ndarray:
    """Characters of the chunk at each table position (0 for padding), shaped like
    ``positions``; texts are read once per table position and the lengths cached on it."""
    table = cs.table
    known: np.ndarray = table.derived("char_lengths", lambda t: np.full(len(t), -1.0))
    pos = np.asarray(positions, dtype=np.int64)
    flat = pos[pos >= 0]
    todo = np.unique(flat[known[flat] < 0]) if flat.size else flat
    if todo.size:
        known[todo] = [len(t) for t in cs.texts(todo)]
    return np.where(pos >= 0, known[np.maximum(pos, 0)], 0.0)


def _top2_gap(x: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: (best, best − second best) over present values; 0 where fewer exist."""
    v = np.where(present, x, -np.inf)
    if v.shape[1] == 0:
        z = np.zeros(v.shape[0])
        return z, z
    k = min(2, v.shape[1])
    top = -np.sort(-np.partition(v, v.shape[1] - k, axis=1)[:, -k:], axis=1)
    best = np.where(np.isfinite(top[:, 0]), top[:, 0], 0.0)
    second = top[:, 1] if k == 2 else np.full(v.shape[0], -np.inf)
    gap = np.where(np.isfinite(second), best - second, 0.0)
    return best, gap


def _top_k_positions(pos: np.ndarray, rank: np.ndarray, found: np.ndarray, fill: int) -> np.ndarray:
    """[Q, AGREE_K] table positions of each query's top-K of one leg (``fill`` = none)."""
    out = np.full((pos.shape[0], AGREE_K), fill, dtype=np.int64)
    qi, ci = np.nonzero(found & (rank >= 0) & (rank < AGREE_K))
    out[qi, rank[qi, ci]] = pos[qi, ci]
    return out


def _top_overlap(cs: CandidateSet, has_vec: np.ndarray, has_text: np.ndarray) -> np.ndarray:
    """Per query: |top-K vector ∩ top-K keyword| / K (K = AGREE_K), by chunk."""
    vt = _top_k_positions(cs.pos, cs.vec_rank, has_vec, -1)
    tt = _top_k_positions(cs.pos, cs.text_rank, has_text, -2)
    return (vt[:, :, None] == tt[:, None, :]).any(axis=2).sum(axis=1) / AGREE_K


def candidate_features(
    cs: CandidateSet,
    has_vec: np.ndarray,
    has_text: np.ndarray,
    valid: np.ndarray,
    prior: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every feature of `BASE_FEATURES` as a finite [Q, C] float array (0 where not valid).

    ``has_vec`` / ``has_text``: the candidates each leg found within the system's
    depth; ``valid``: the candidates scored. z-scores and min–max use
    ``memlab.retrieval.fusion.normalize`` per query over that leg's hits (one hit → z 0,
    min–max 1). Neighbours are the previous / next chunk of the same file
    (``neighbor_positions``) when that chunk is a valid candidate of the query.
    ``prior``: the score so far ([Q, C], NaN → 0; None → 0 everywhere).
    """
    vec = np.where(has_vec, cs.vec_score, np.nan)
    text = np.where(has_text, np.abs(cs.text_raw), np.nan)
    f: dict[str, np.ndarray] = {}
    f["vz"] = np.nan_to_num(normalize(vec, "zscore"), nan=0.0)
    f["tz"] = np.nan_to_num(normalize(text, "zscore"), nan=0.0)
    f["vmm"] = np.nan_to_num(normalize(vec, "minmax"), nan=0.0)
    f["tmax"] = np.nan_to_num(normalize(text, "max"), nan=0.0)
    f["has_v"] = has_vec.astype(np.float64)
    f["has_t"] = has_text.astype(np.float64)
    f["vrr"] = np.where(has_vec, 1.0 / (1.0 + np.maximum(cs.vec_rank, 0)), 0.0)
    f["trr"] = np.where(has_text, 1.0 / (1.0 + np.maximum(cs.text_rank, 0)), 0.0)
    n = len(cs.table)
    shape = valid.shape
    if valid.any():
        prev, nxt = neighbor_positions(cs.table)
        rows = np.arange(shape[0])[:, None]
        for side, nb in (("p", prev), ("n", nxt)):
            col = neighbor_columns(cs.pos, valid, nb, n)
            safe = np.maximum(col, 0)
            f[side + "vz"] = np.where(col >= 0, f["vz"][rows, safe], 0.0)
            f[side + "tz"] = np.where(col >= 0, f["tz"][rows, safe], 0.0)
    else:
        for k in ("pvz", "nvz", "ptz", "ntz"):
            f[k] = np.zeros(shape)
    for k in ("pvz", "nvz", "ptz", "ntz"):
        f[k + "+"] = np.maximum(f[k], 0.0)
    f["prior"] = np.zeros(shape) if prior is None else np.nan_to_num(prior, nan=0.0)
    f["loglen"] = np.log1p(chunk_lengths(cs, np.where(valid, cs.pos, -1)))
    words = np.array([len(q.split()) for q in cs.queries], dtype=np.float64).reshape(-1)
    vtop, vgap = _top2_gap(cs.vec_score, has_vec)
    ttop, tgap = _top2_gap(np.abs(np.nan_to_num(cs.text_raw)), has_text)
    nt = has_text.sum(axis=1).astype(np.float64)
    agree = _top_overlap(cs, has_vec, has_text)
    qf = {
        "qlen": np.log1p(words),
        "vtop": vtop,
        "vgap": vgap,
        "tgap": np.where(ttop > 0, tgap / np.where(ttop > 0, ttop, 1.0), 0.0),
        "nt": np.log1p(nt),
        "agree": np.asarray(agree, dtype=np.float64),
    }
    for k, v in qf.items():
        f[k] = np.broadcast_to(v.reshape(-1, 1), shape).copy() if len(v) else np.zeros(shape)
    return {k: np.where(valid, v, 0.0) for k, v in f.items()}


def feature_matrix(base: Mapping[str, np.ndarray], names: Sequence[str]) -> np.ndarray:
    """The named features stacked on a last axis: [..., F]. A name ``"a*b"`` is the
    product of base features ``a`` and ``b``; ``"bias"`` is a column of ones."""
    cols = []
    for name in names:
        if name == "bias":
            cols.append(np.ones_like(next(iter(base.values()))))
        elif "*" in name:
            a, b = name.split("*", 1)
            cols.append(base[a] * base[b])
        else:
            cols.append(base[name])
    return np.stack(cols, axis=-1)


def linear_score(features: np.ndarray, model: Sequence[Sequence[Any]]) -> np.ndarray:
    """Σ coef · (x − mean) / scale over the last axis of ``features`` [..., F], the model
    rows ``(name, mean, scale, coef)`` in the order of the columns."""
    mean = np.array([float(r[1]) for r in model])
    scale = np.array([float(r[2]) for r in model])
    coef = np.array([float(r[3]) for r in model])
    return ((features - mean) / scale) @ coef


def check_model(name: str, value: Any) -> None:
    """A model is a tuple of ``(feature, mean, scale, coef)`` rows with known feature
    names (base, ``a*b`` products of two base names, or ``bias``), finite floats, scale > 0."""
    if not isinstance(value, tuple | list):
        raise ValueError(f"{name} must be a tuple of (feature, mean, scale, coef); got {value!r}")
    for row in value:
        if not isinstance(row, tuple | list) or len(row) != 4:
            raise ValueError(f"{name}: each row must be (feature, mean, scale, coef); got {row!r}")
        feat = str(row[0])
        parts = feat.split("*", 1) if "*" in feat else [feat]
        if feat != "bias" and any(p not in BASE_FEATURES for p in parts):
            raise ValueError(
                f"{name}: unknown feature {feat!r}; known: {', '.join(BASE_FEATURES)}, "
                "a*b products of two of them, or bias"
            )
        nums = row[1:]
        if any(isinstance(x, bool) or not isinstance(x, int | float) for x in nums):
            raise ValueError(f"{name}: mean, scale and coef of {feat!r} must be numbers")
        if not all(math.isfinite(float(x)) for x in nums) or float(row[2]) <= 0:
            raise ValueError(f"{name}: {feat!r} needs finite numbers and scale > 0; got {row!r}")


def learned_stage(
    p: Params, cs: CandidateSet, st: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``learned`` (the linear score minus the score so far, so explain adds up) and
    ``final`` = the linear score of `linear_score` over `candidate_features`; NaN where
    not valid."""
    valid, final = st["valid"], st["final"]
    model = p.learned_model
    base = candidate_features(cs, st["has_vec"], st["has_text"], valid, final)
    score = linear_score(feature_matrix(base, [str(r[0]) for r in model]), model)
    score = np.where(valid, score, np.nan)
    return {"learned": np.where(valid, score - final, np.nan), "final": score}


def learned_active(p: Params, mode: str) -> bool:
    """The stage runs when ``p.learned_model`` is set, in hybrid mode only."""
    return bool(p.learned_model) and mode == "hybrid"


# The fitted model's file, package data beside this module.
MODEL_FILE = "learned_model.json"
ModelRows = tuple[tuple[str, float, float, float], ...]


def model_path() -> Path:
    """Where ``studies/fit_learned.py --write`` writes the fitted model (this module's
    folder, in a source checkout)."""
    return Path(__file__).with_name(MODEL_FILE)


def load_model(path: str | Path | None = None) -> ModelRows:
    """The ``rows`` of a model file as ``learned_model`` rows ``(feature, mean, scale, coef)``
    (checked like the parameter, `check_model`); ``path`` None = the packaged `MODEL_FILE`."""
    if path is None:
        from importlib import resources  # here: a search that runs no learned model skips it

        text = resources.files("memlab.stages").joinpath(MODEL_FILE).read_text(encoding="utf-8")
        where = MODEL_FILE
    else:
        text, where = Path(path).read_text(encoding="utf-8"), str(path)
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ValueError(f"{where}: expected an object with a 'rows' list")
    check_model(where, data["rows"])
    return tuple((str(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in data["rows"])


def save_model(
    model: Sequence[Sequence[Any]], path: str | Path | None = None, **about: str
) -> Path:
    """Write ``model`` (``learned_model`` rows) as a model file that `load_model` reads:
    JSON, the ``about`` strings first (when and how it was fitted), then ``rows``, one row
    a line; floats as ``repr`` writes them, so the rows read back bit-identical.
    ``path`` None = `model_path`. Returns the path written."""
    check_model("model", model)
    rows = [[str(r[0]), float(r[1]), float(r[2]), float(r[3])] for r in model]
    head = "".join(
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in about.items()
    )
    body = ",\n".join(f"  {json.dumps(r)}" for r in rows)
    out = Path(path) if path is not None else model_path()
    out.write_text("{\n" + head + '  "rows": [\n' + body + "\n  ]\n}\n", encoding="utf-8")
    return out


@cache
def fitted_model() -> ModelRows:
    """The model ``memlab.pipeline.presets.memlab_learned`` runs: the packaged `MODEL_FILE`'s rows,
    read on first use (not at import: every search imports this module through
    ``memlab.stages``)."""
    return load_model()
