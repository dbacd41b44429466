"""What the quality studies share: the dev sets and their halves, the studied systems, the
means over a half, memlab-best's tuning grid and the tie rule.

The studies (``studies/*.py``) each answered one question once and produced the
tables of its page under docs/studies/ (docs/benchmarks.md for the speed and guard benchmarks,
which stay in ``benchmarks/``). Each study's docstring ends in the one command that
reproduces its tables (``Reproduce:``); docs/studies/index.md lists them all.

- **Dev sets** (`dev_sets`): LoCoMo dev (``../shared/datasets/locomo``, or
  ``MEMLAB_LOCOMO``) split by question (`locomo_split`: ``split_queries`` 0.5, seed 0,
  stratified by category) and BEAM chats 1–10 of 100K (``../shared/datasets/beam``, or
  ``MEMLAB_BEAM``) split by conversation (`beam_split`: odd chats tune, even report), as
  ``memlab.eval.protocol`` defines them. Every choice is made on the tune halves.
- **Systems**: `base_embedder` (the packaged model on onnxruntime behind the lab's own vector
  cache), `committed_lab` (a lab over a committed ``datasets/`` corpus, its index shared with
  ``benchmarks/quality.py``). memlab-best-chunk scoring each chunk as one unit, the system
  the chunk-level studies measured their figures with, is ``benchmarks._common.chunk_as_unit``
  (``benchmarks/best_line_cost.py`` times it too).
- **Word pieces and windows**: `piece_counts`, `piece_stats` (what the packaged model's 256
  word pieces leave out), `warm_windows` (a pooled embedder's windows, embedded resumably).
- **Means**: `part_means` (one row per system, each metric on each named half),
  `per_query_means` ({system: {metric: mean}}), `pivot_means`.
- **Tuning**: `GRID` and `grid_search` (the LoCoMo study's grid around memlab-best, chosen on
  tune);
  `choose_simplest` (the best objective; a tie goes to the simplest system).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchmarks._common import REPO, cache_dir, log, print_table

if TYPE_CHECKING:
    from memlab.eval.lab import Lab
    from memlab.pipeline import Pipeline

# name → (dataset, tune qids, report qids)
DevSets = dict[str, tuple[Any, list[str], list[str]]]


# ------------------------------------------------------------------ dev sets
def locomo_split(ds: Any) -> tuple[list[str], list[str]]:
    """The tune / held-out halves of the questions that have evidence
    (`memlab.eval.protocol.question_halves`: 0.5, seed 0, stratified by category)."""
    from memlab.eval.protocol import question_halves

    return question_halves(ds)


def beam_split(ds: Any) -> tuple[list[str], list[str]]:
    """Tune / report qids of BEAM with evidence, by conversation (chat number odd / even:
    `memlab.eval.protocol.conversation_halves`)."""
    from memlab.eval.protocol import conversation_halves

    return conversation_halves(ds)


def dev_sets() -> DevSets:
    """Both dev sets with their halves: name (``locomo``, ``beam``) → (dataset, tune qids,
    report qids)."""
    from memlab.datasets.beam import load_beam
    from memlab.datasets.locomo import load_locomo

    out = {}
    ds = load_locomo()
    out["locomo"] = (ds, *locomo_split(ds))
    ds = load_beam()
    out["beam"] = (ds, *beam_split(ds))
    return out


def split_summary(sets: DevSets) -> dict[str, Any]:
    """What `dev_sets` split, for a study's JSON: the rule of each set's halves
    (`memlab.eval.protocol.HALVES`) and their sizes."""
    from memlab.eval.protocol import HALVES

    return {
        "locomo": HALVES["question"],
        "beam": HALVES["conversation"],
        **{f"{k} tune/report": [len(v[1]), len(v[2])] for k, v in sets.items()},
    }


def fingerprints(sets: DevSets) -> dict[str, str]:
    """Each dev set's fingerprint: the ``inputs`` of a study's JSON."""
    return {k: v[0].fingerprint for k, v in sets.items()}


def unit_lines_of(ws: Any) -> list[str]:
    """The unit lines of one workspace folder: every non-heading, non-blank line of its
    memory files (one unit each at ``unit="turn"``)."""
    lines = []
    for f in sorted(Path(ws).rglob("*.md")):
        lines += [ln for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return [ln for ln in lines if not ln.lstrip().startswith("#")]


def unit_lines(ds: Any) -> list[str]:
    """`unit_lines_of` every workspace of the dataset, in its workspaces' order."""
    return [ln for ws in ds.workspaces.values() for ln in unit_lines_of(ws)]


# ------------------------------------------------------------------ systems
def base_embedder(ds: Any) -> Any:
    """The packaged model on onnxruntime behind the lab's own vector cache (same identity
    as the torch model, so the truncated vectors the lab already holds are reused)."""
    from memlab.embed.cached import CachedEmbedder
    from memlab.embed.onnx import OnnxEmbedder
    from memlab.eval.lab import default_lab_index_dir

    return CachedEmbedder(OnnxEmbedder(), default_lab_index_dir(ds) / "vectors")


def committed_lab(name: str, embedder: str = "local") -> Lab:
    """A fresh `Lab` over the committed corpus ``datasets/<name>`` at OpenClaw's chunks, its
    index and vectors kept in ``cache_dir()/quality-<name>`` (shared with
    ``benchmarks/quality.py``, so nothing is embedded twice)."""
    from memlab.datasets.base import load_folder
    from memlab.eval.lab import Lab

    return Lab(
        load_folder(REPO / "datasets" / name),
        embedder=embedder,
        unit="chunk",
        index_dir=cache_dir() / f"quality-{name}",
        progress=False,
        cache_vectors=True,
    )


# ------------------------------------------------------------------ word pieces and windows
def piece_counts(texts: list[str]) -> np.ndarray:
    """Word pieces of each text ([CLS] and [SEP] included) under the packaged model's
    tokenizer, untruncated: int [len(texts)]."""
    from memlab.embed.base import load_word_pieces
    from memlab.embed.local import packaged_model_path

    tok = load_word_pieces(packaged_model_path(), "studies")
    return np.array([len(e.ids) for e in tok.encode_batch(texts)])


def piece_stats(n: np.ndarray) -> dict[str, Any]:
    """How many of ``n`` (word pieces per text) exceed the model's 256, their median / max,
    and the share of all pieces that lie beyond the 256th of their text."""
    return {
        "over_256": int((n > 256).sum()),
        "pieces_median": float(np.median(n)),
        "pieces_max": int(n.max()),
        "share_of_pieces_beyond_256": round(float(np.maximum(n - 256, 0).sum() / n.sum()), 4),
    }


def warm_windows(pooled: Any, inner: Any, lines: list[str], batch: int = 96) -> int:
    """Embed the windows of every long line into ``inner``'s cache, saving after each batch
    (a long first run can be stopped and resumed); returns how many windows there were."""
    wins = list(dict.fromkeys(w for ln in lines if len(ws := pooled.windows(ln)) > 1 for w in ws))
    for s in range(0, len(wins), batch):
        inner.embed_documents(wins[s : s + batch])
        inner.save()
        log(f"  windows {min(s + batch, len(wins))}/{len(wins)}")
    return len(wins)


# ------------------------------------------------------------------ means
def part_means(
    res: Any, parts: dict[str, list[str]], metrics: Sequence[str], *, counts: bool = False
) -> list[dict[str, Any]]:
    """One row per system of ``res`` (an ``ExperimentResult``): each metric's mean on each
    named subset of questions, rounded to 4 digits (``counts``: each part's question count
    first, as ``"<part> n"``)."""
    pq = res.per_query
    rows = []
    for s in res.systems:
        row: dict[str, Any] = {"system": s.name}
        d = pq[pq["system"] == s.name]
        for part, qids in parts.items():
            dd = d[d["qid"].isin(set(qids))]
            if counts:
                row[f"{part} n"] = int(dd["qid"].nunique())
            for m in metrics:
                row[f"{part} {m}"] = round(float(dd[dd["metric"] == m]["value"].mean()), 4)
        rows.append(row)
    return rows


def per_query_means(res: Any, qids: Any, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """{system: {metric: mean over ``qids`` (all when None)}} from ``res.per_query``
    (NaN for a metric a system has no value of)."""
    pq = res.per_query
    if qids is not None:
        pq = pq[pq["qid"].isin(set(qids))]
    pq = pq[pq["metric"].isin(metrics)]
    means = pq.groupby(["system", "metric"])["value"].mean()
    return {
        s: {m: float(means.get((s, m), float("nan"))) for m in metrics}
        for s in dict.fromkeys(pq["system"])
    }


def pivot_means(per_query: pd.DataFrame, qids: list[str]) -> pd.DataFrame:
    """Mean of each (system, metric) over the given questions: rows systems, columns metrics."""
    d = per_query[per_query["qid"].isin(set(qids))]
    return d.pivot_table(index="system", columns="metric", values="value", aggfunc="mean")


# ------------------------------------------------------------------ tuning
# The LoCoMo study's grid around memlab-best (docs/studies/locomo.md): the legs' normalisations (with
# their score floor), the vector weight (text weight 1 − it) and the neighbour weights.
LEGS = {"minmax/max": ("minmax", "max", 0.0), "zscore/zscore": ("zscore", "zscore", -1e6)}
GRID: dict[str, list[Any]] = {
    "legs": list(LEGS),
    "vector_weight": [0.3, 0.4, 0.5, 0.6, 0.7],
    "neighbor_prev": [0.0, 0.3, 0.5, 0.7, 1.0],
    "neighbor_next": [0.0, 0.3, 0.5],
}


def grid_search(
    lab: Lab, base: Pipeline, metrics: list[str], tune: list[str], test: list[str]
) -> dict[str, Any]:
    """Score ``base`` at every ``GRID`` point on all questions; choose on tune by the sum of
    ``metrics``; report the choice on held-out and the best point per category on tune."""
    from memlab.eval.experiment import run_experiment

    points = list(itertools.product(*GRID.values()))
    systems = []
    for i, values in enumerate(points):
        setting = dict(zip(GRID, values, strict=True))
        vnorm, tnorm, floor = LEGS[setting.pop("legs")]
        setting.update(vector_norm=vnorm, text_norm=tnorm, min_score=floor)
        setting["text_weight"] = round(1.0 - setting["vector_weight"], 10)
        systems.append(base.replace(name=f"g{i:04d}", **setting))
    t0 = time.perf_counter()
    res = run_experiment(systems, lab, metrics)
    seconds = time.perf_counter() - t0
    pq = res.per_query
    tune_tab = pivot_means(pq, tune)
    test_tab = pivot_means(pq, test)
    objective = tune_tab[metrics].sum(axis=1).sort_index()
    # Ties go to the first point in grid order (names sort in grid order).
    chosen = str(objective.idxmax())

    def point(name: str) -> dict[str, Any]:
        return dict(zip(GRID, points[int(name[1:])], strict=True))

    legs = next(k for k, v in LEGS.items() if v[:2] == (base.vector_norm, base.text_norm))
    preset_point = {k: legs if k == "legs" else getattr(base, k) for k in GRID}
    cats = pq[pq["qid"].isin(set(tune))].pivot_table(
        index=["category", "system"], columns="metric", values="value", aggfunc="mean"
    )
    per_cat = []
    for cat in sorted(pq["category"].unique()):
        c = cats.loc[cat][metrics]
        best = str(c.sum(axis=1).idxmax())
        per_cat.append(
            {
                "category": cat,
                "best setting": point(best),
                **{f"best {m}": round(float(c.loc[best, m]), 4) for m in metrics},
                **{f"preset {m}": round(float(c.loc[chosen, m]), 4) for m in metrics},
            }
        )
    return {
        "settings": len(points),
        "seconds": round(seconds, 1),
        "chosen": point(chosen),
        "preset": base.name,
        "chosen_is_preset": point(chosen) == preset_point,
        "tune": {m: round(float(tune_tab.loc[chosen, m]), 4) for m in metrics},
        "held_out": {m: round(float(test_tab.loc[chosen, m]), 4) for m in metrics},
        "top5_on_tune": [
            {**point(n), **{f"tune {m}": round(float(tune_tab.loc[n, m]), 4) for m in metrics}}
            for n in objective.sort_values(ascending=False, kind="stable").index[:5]
        ],
        "per_category_on_tune": per_cat,
    }


def print_grid(g: dict[str, Any], what: str) -> None:
    """A `grid_search`'s choice and its five best points on tune."""
    print(f"\n{what} ({g['settings']} settings, {g['seconds']} s), chosen on tune:")
    print(f"   {g['chosen']} tune {g['tune']} held-out {g['held_out']}")
    print(f"   same as {g['preset']}: {g['chosen_is_preset']}")
    print_table(g["top5_on_tune"])


def choose_simplest(objective: dict[str, float], simplest_first: tuple[str, ...]) -> str:
    """The system with the highest objective rounded to 4 digits; a tie goes to the system
    earliest in ``simplest_first``, then to any system not in it (in ``objective``'s order)."""
    order = [*simplest_first, *(s for s in objective if s not in simplest_first)]
    rank = {s: i for i, s in enumerate(order)}
    return max(objective, key=lambda s: (round(objective[s], 4), -rank[s]))
