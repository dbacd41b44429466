"""Learning to rank over candidate features, with splits by conversation (lab).

Rows are (query, candidate) pairs of a `LabCandidates` under a base pipeline
(its depth, legs and heading filter decide which candidates are scored); the
features are the engine's (`memlab.stages.learned.candidate_features`, so what
is trained is what the ``learned`` stage computes); the label is "covers an
evidence span". Models are scikit-learn's: ``StandardScaler`` +
``LogisticRegression`` (exported as plain floats for the engine stage), and
``HistGradientBoostingClassifier`` for comparison (lab only). Rows are weighted
so that each query weighs the same within its data set and each data set the
same in total (``row_weights``).

Protocol helpers: `conversation_split` (a fixed split of a data set's groups),
`grouped_folds` (cross-validation folds that never split a conversation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.stages.learned import candidate_features, feature_matrix

if TYPE_CHECKING:
    from memlab.eval.lab import LabCandidates
    from memlab.pipeline import Pipeline

__all__ = [
    "RankData",
    "Rows",
    "conversation_split",
    "export_linear",
    "fit_coordinate_ascent",
    "fit_gbm",
    "fit_linear",
    "fit_pairwise",
    "grouped_folds",
    "natural_key",
    "per_query_metrics",
    "query_rows",
    "rank_data",
    "row_weights",
    "score_metrics",
    "topk_metrics",
    "training_rows",
]


def natural_key(name: str) -> list[Any]:
    """Sort key with digit runs compared as numbers (``100K-2`` < ``100K-10``)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(name))]


def conversation_split(groups: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tune, report) groups: the distinct groups in natural order, even positions (0, 2,
    …) tune, odd positions report. LoCoMo dev: conv-26/41/43 tune, conv-30/42 report;
    BEAM 100K chats 1–10: odd chats tune, even chats report."""
    names = sorted(dict.fromkeys(str(g) for g in groups), key=natural_key)
    return names[0::2], names[1::2]


def grouped_folds(groups: Sequence[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """k (train rows, test rows) folds over items labelled by group: every group's items
    in exactly one test fold, never on both sides (groups dealt round-robin in natural
    order). ``k`` is capped at the number of groups; fewer than 2 groups is an error."""
    g = np.asarray([str(x) for x in groups], dtype=object)
    names = sorted(set(g.tolist()), key=natural_key)
    if len(names) < 2:
        raise ValueError(f"grouped_folds needs at least 2 groups, got {names}")
    k = max(2, min(int(k), len(names)))
    fold_of = {n: i % k for i, n in enumerate(names)}
    f = np.array([fold_of[x] for x in g.tolist()], dtype=np.int64)
    idx = np.arange(len(g))
    return [(idx[f != i], idx[f == i]) for i in range(k)]


@dataclass
class Rows:
    """Training rows: features ``X`` [n, F] (``names``), labels ``y`` [n], the row's query
    (index into the `LabCandidates`), and its group and data-set tag."""

    X: np.ndarray
    y: np.ndarray
    query: np.ndarray
    group: np.ndarray
    dataset: np.ndarray
    names: list[str]


def query_rows(lc: LabCandidates, base: Pipeline) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(base features [Q, C] each, valid [Q, C]) of ``lc`` under pipeline ``base`` (with
    its learned model switched off): the very inputs of the ``learned`` stage."""
    p = base.replace(learned_model=())
    st = p.scores(lc.cs)
    feats = candidate_features(lc.cs, st["has_vec"], st["has_text"], st["valid"], st["final"])
    return feats, st["valid"]


def training_rows(
    lc: LabCandidates,
    base: Pipeline,
    names: Sequence[str],
    qids: Sequence[str],
    *,
    group_of: dict[str, str],
    dataset: str = "",
    max_rank: int | None = None,
) -> Rows:
    """Rows of the valid candidates of the questions ``qids`` that have evidence; label 1
    when the candidate covers an evidence span. ``max_rank`` keeps only candidates some
    leg ranks below it (the region a top-10 is drawn from; None = all). ``group_of``
    maps a question id to its conversation (the dataset's ``queries["group"]``)."""
    want = set(map(str, qids))
    rows = np.array(
        [i for i, q in enumerate(lc.qids) if q in want and lc.has_evidence[i]], dtype=np.int64
    )
    sub = lc.subset(rows)
    feats, valid = query_rows(sub, base)
    keep = valid.copy()
    if max_rank is not None:
        cs = sub.cs
        near = ((cs.vec_rank >= 0) & (cs.vec_rank < max_rank)) | (
            (cs.text_rank >= 0) & (cs.text_rank < max_rank)
        )
        keep &= near
    qi, ci = np.nonzero(keep)
    X = feature_matrix(feats, names)[qi, ci]
    y = sub.covers.any(axis=2)[qi, ci].astype(np.int64)
    q = lc.qids
    return Rows(
        X=X,
        y=y,
        query=rows[qi],
        group=np.asarray([group_of[q[r]] for r in rows[qi].tolist()], dtype=object),
        dataset=np.full(len(qi), dataset, dtype=object),
        names=list(names),
    )


def row_weights(rows: Rows) -> np.ndarray:
    """Weights w = 1 / (rows of its query × queries of its data set), scaled to mean 1:
    every query weighs the same within its data set, every data set the same in total."""
    key = np.char.add(rows.dataset.astype(str), np.char.add("\x1f", rows.query.astype(str)))
    _, qinv, qcount = np.unique(key, return_inverse=True, return_counts=True)
    ds_names, dinv = np.unique(rows.dataset.astype(str), return_inverse=True)
    nq = np.array(
        [len(np.unique(rows.query[rows.dataset.astype(str) == d])) for d in ds_names], dtype=float
    )
    w = 1.0 / (qcount[qinv] * nq[dinv])
    return w / w.mean()


def fit_linear(rows: Rows, C: float = 1.0) -> Any:
    """``StandardScaler`` + ``LogisticRegression(C)`` fitted on the rows (weighted by
    `row_weights`): a scikit-learn Pipeline."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000))
    model.fit(rows.X, rows.y, logisticregression__sample_weight=row_weights(rows))
    return model


def fit_pairwise(rows: Rows, C: float = 1.0, negatives: int = 20, seed: int = 0) -> Any:
    """A linear pairwise ranker (RankNet-style logistic loss on feature differences):
    features standardised by a ``StandardScaler`` fitted on the rows; for each
    positive row up to ``negatives`` negatives of the same query (drawn at random) give
    the pair (x⁺ − x⁻, 1) and its mirror (x⁻ − x⁺, 0); ``LogisticRegression(C)``
    without intercept on those, each pair weighted by its query's `row_weights`
    share. Returns a scaler + regression Pipeline, exportable by `export_linear`
    (intercept 0: only the order within a query matters)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline as SkPipeline
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(rows.X)
    Z = scaler.transform(rows.X)
    w = row_weights(rows)
    rng = np.random.default_rng(seed)
    key = np.char.add(rows.dataset.astype(str), np.char.add("\x1f", rows.query.astype(str)))
    diffs, weights = [], []
    for k in np.unique(key):
        idx = np.nonzero(key == k)[0]
        pos, neg = idx[rows.y[idx] == 1], idx[rows.y[idx] == 0]
        if pos.size == 0 or neg.size == 0:
            continue
        n = min(negatives, neg.size)
        for i in pos:
            js = rng.choice(neg, size=n, replace=False)
            diffs.append(Z[i] - Z[js])
            weights.append(np.full(n, w[idx].sum() / (pos.size * n)))
    D = np.concatenate(diffs)
    W = np.concatenate(weights)
    X = np.concatenate([D, -D])
    y = np.concatenate([np.ones(len(D), dtype=np.int64), np.zeros(len(D), dtype=np.int64)])
    lr = LogisticRegression(C=C, fit_intercept=False, max_iter=2000)
    lr.fit(X, y, sample_weight=np.concatenate([W, W]) / W.mean())
    return SkPipeline([("standardscaler", scaler), ("logisticregression", lr)])


def fit_gbm(rows: Rows, seed: int = 0) -> Any:
    """A small ``HistGradientBoostingClassifier`` (100 trees of ≤ 15 leaves) on the rows,
    weighted by `row_weights`: the non-linear comparison (lab only)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    m = HistGradientBoostingClassifier(
        max_iter=100, max_leaf_nodes=15, learning_rate=0.1, random_state=seed
    )
    m.fit(rows.X, rows.y, sample_weight=row_weights(rows))
    return m


def export_linear(model: Any, names: Sequence[str]) -> tuple[tuple[str, float, float, float], ...]:
    """The fitted scaler + logistic regression as the engine's ``learned_model`` rows
    ``(feature, mean, scale, coef)`` plus ``("bias", 0, 1, intercept)``: the stage's score
    equals ``model.decision_function`` on the same features."""
    scaler, lr = model[0], model[-1]
    rows = [
        (str(n), float(m), float(s), float(c))
        for n, m, s, c in zip(names, scaler.mean_, scaler.scale_, lr.coef_[0], strict=True)
    ]
    rows.append(("bias", 0.0, 1.0, float(lr.intercept_[0])))
    return tuple(rows)


def per_query_metrics(
    lc: LabCandidates, p: Pipeline, qids: Sequence[str], metrics: Sequence[str], *, k: int = 10
) -> dict[str, np.ndarray]:
    """Per-query values of ``metrics`` for system ``p`` (asked for ≥ k results, as
    ``run_experiment`` does) over the questions ``qids`` that have evidence, in ``lc`` order."""
    want = set(map(str, qids))
    rows = np.array(
        [i for i, q in enumerate(lc.qids) if q in want and lc.has_evidence[i]], dtype=np.int64
    )
    sub = lc.subset(rows)
    return sub.score(p.at_k(k), metrics)


def score_metrics(
    lc: LabCandidates, score: np.ndarray, metrics: Sequence[str], *, k: int = 10
) -> dict[str, np.ndarray]:
    """Per-query metric values of a ranking by ``score`` [Q, C] (descending; −inf or NaN =
    not a result; ties by column, as a stable sort): for models the engine cannot run."""
    from memlab.eval.metrics import evaluate_hits, parse_metric
    from memlab.eval.relevance import hits_from_topk

    s = np.where(np.isfinite(score), score, -np.inf)
    order = np.argsort(-s, axis=1, kind="stable")[:, :k]
    cols = np.where(np.isfinite(np.take_along_axis(s, order, axis=1)), order, -1)
    h = hits_from_topk(lc.covers, cols, lc.spans, include_no_evidence=True)
    values = evaluate_hits(h, [parse_metric(m) for m in metrics])
    return {m: np.where(lc.has_evidence, v, np.nan) for m, v in values.items()}


@dataclass
class RankData:
    """One data set's questions prepared for direct metric optimisation: ``lc`` (those
    questions only), ``X`` [Q, C, F] raw features (``names``), ``valid`` [Q, C]."""

    lc: LabCandidates
    X: np.ndarray
    valid: np.ndarray


def rank_data(
    lc: LabCandidates, base: Pipeline, names: Sequence[str], qids: Sequence[str]
) -> RankData:
    """`RankData` of the questions ``qids`` that have evidence, under pipeline ``base``."""
    want = set(map(str, qids))
    rows = np.array(
        [i for i, q in enumerate(lc.qids) if q in want and lc.has_evidence[i]], dtype=np.int64
    )
    sub = lc.subset(rows)
    feats, valid = query_rows(sub, base)
    return RankData(sub, feature_matrix(feats, names), valid)


def topk_metrics(d: RankData, coef: np.ndarray, metrics: Sequence[str], k: int = 10) -> dict:
    """Per-query metrics of the ranking by ``X @ coef`` (valid candidates only; ties in
    column order), the top ``k`` kept."""
    s = np.where(d.valid, d.X @ coef, -np.inf)
    kk = min(k, s.shape[1])
    part = np.argpartition(-s, kk - 1, axis=1)[:, :kk] if kk else np.zeros((len(s), 0), int)
    ps = np.take_along_axis(s, part, axis=1)
    order = np.take_along_axis(part, np.argsort(-ps, axis=1, kind="stable"), axis=1)
    cols = np.where(np.isfinite(np.take_along_axis(s, order, axis=1)), order, -1)
    from memlab.eval.metrics import evaluate_hits, parse_metric
    from memlab.eval.relevance import hits_from_topk

    h = hits_from_topk(d.lc.covers, cols, d.lc.spans, include_no_evidence=True)
    return evaluate_hits(h, [parse_metric(m) for m in metrics])


def fit_coordinate_ascent(
    data: Sequence[RankData],
    names: Sequence[str],
    metrics: Sequence[str] = ("recall@5", "recall@10", "ndcg@10"),
    *,
    start: str = "prior",
    steps: Sequence[float] = (-1.0, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1.0),
    rounds: int = 3,
    min_gain: float = 1e-4,
) -> tuple[tuple[str, float, float, float], ...]:
    """A linear ranker fitted directly on the ranking metrics (coordinate ascent, as
    RankLib's): features standardised over the valid candidates of all ``data``; the
    weights start at 1 on ``start`` (memlab-best's score) and 0 elsewhere; each round
    tries, feature by feature, adding each of ``steps`` to its weight and keeps the best
    change that raises the objective by more than ``min_gain``. Objective: the mean over
    data sets of the mean over questions of Σ ``metrics``. Returns the engine's model
    rows (bias 0)."""
    allv = np.concatenate([d.X[d.valid] for d in data])
    mean = allv.mean(axis=0)
    scale = allv.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    Z = [
        RankData(d.lc, np.where(d.valid[..., None], (d.X - mean) / scale, 0.0), d.valid)
        for d in data
    ]
    names = list(names)
    w = np.zeros(len(names))
    if start in names:
        w[names.index(start)] = 1.0

    def objective(coef: np.ndarray) -> float:
        per = []
        for d in Z:
            v = topk_metrics(d, coef, metrics)
            per.append(float(np.mean(sum(v[m] for m in v))))
        return float(np.mean(per))

    best = objective(w)
    for _ in range(rounds):
        improved = False
        for j in range(len(names)):
            trial_best, trial_w = best, None
            for step in steps:
                t = w.copy()
                t[j] += step
                val = objective(t)
                if val > trial_best + min_gain:
                    trial_best, trial_w = val, t
            if trial_w is not None:
                best, w, improved = trial_best, trial_w, True
        if not improved:
            break
    rows = [
        (n, float(m), float(s), float(c)) for n, m, s, c in zip(names, mean, scale, w, strict=True)
    ]
    return tuple(rows)
