"""Chunk level (OpenClaw's ~400-token chunks): pooled chunk vectors and cheap ideas, both dev sets.

The chunk-level goal is ``memlab-best-chunk`` ≥ plain BM25 + 5 points recall@6 on
conversations it never saw. all-MiniLM-L6-v2 reads the first 256 word pieces of a chunk
([CLS] and [SEP] included); this study embeds each chunk in windows instead
(``memlab.embed.pooled.PooledEmbedder``: ≤ 254 pieces per window, 32 shared, max or mean
pooled) and measures what that does to the vector leg and to the fused presets.
``memlab-best-chunk`` here is its chunk-as-unit system (``benchmarks._common.chunk_as_unit``,
printed as "memlab-best-chunk (chunks as units)"), the system these figures were measured
with; the preset now ranks chunks by their best line (``studies/chunk_lines.py``).

Parts (``--parts``; each prints its tables, every figure goes to ``--json``):

- ``tokens``: how many chunks exceed 256 word pieces (so are truncated today);
- ``pool``: recall@6, recall@10, nDCG@10 of ``vector``, ``bm25``, ``memlab-best-chunk`` and
  ``memlab-best`` with truncated, max-pooled and mean-pooled chunk vectors;
- ``grid``: ``studies/locomo_quality.py``'s 150-point grid (leg normalisation × vector
  weight × neighbour weights) around ``memlab-best-chunk``, with truncated and with
  max-pooled vectors, chosen on recall@6; then the chosen point on BEAM;
- ``ideas``: cheap variants of ``memlab-best-chunk``, one change each (keyword leg alone,
  RRF, stemming off, heading lines kept, the shape rule, z-scored legs, vector weights,
  neighbour weights), per pooling;
- ``maxsim``: the vector leg scored by a chunk's best window, ``max_w cos(q, w)``, instead
  of one vector per chunk (benchmark only: the index holds one vector per chunk, so the
  lab's cached candidates are rescored in place, ``maxsim_scores``);
- ``joint``: a 192-point grid (legs × vector weight × neighbour weights) chosen on BOTH tune
  halves at once (best LoCoMo-tune recall@6 among the points no worse than
  ``memlab-best-chunk`` on BEAM's tune chats), with the truncated and the MaxSim vector leg.

Protocol. Dev sets: LoCoMo dev and BEAM chats 1–10 of 100K, ``--unit chunk``. Halves as in
``studies.shared.dev_sets``: LoCoMo by question (``split_queries`` 0.5, seed 0,
stratified by category: 498 tune / 498 report), BEAM by conversation (tune = chats 1, 3, 5,
7, 9; report = 2, 4, 6, 8, 10). Every choice is made on the tune halves (the grid's
objective: recall@6 on LoCoMo's tune half; its choice is then checked on BEAM's tune
chats); report halves are only printed. Caveat: the LoCoMo report questions come from the
same five conversations as the tune ones (their text was seen, the questions were not).

Reproduce (docs/studies/chunk-ideas.md; ``--parts tokens,pool`` to choose;
``--poolings`` for ``grid`` and ``ideas``, default ``truncated,max``):

    nice -n 10 .venv/bin/python studies/chunk_quality.py --poolings truncated,max,mean --json chunk.json

Chunk vectors are cached in the lab's vector cache
(window vectors under the truncated model's identity, pooled chunk vectors under the pooled
identity): the first ``pool`` run embeds every window of BEAM's and LoCoMo's chunks (minutes
on 2 cores), later runs take about a minute per part.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import CHUNK_UNIT_NAME, chunk_as_unit, log, parser, print_table, report
from memlab.eval.lab import Lab
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import memlab_best, preset
from studies.shared import (
    LEGS,
    base_embedder,
    dev_sets,
    fingerprints,
    grid_search,
    part_means,
    piece_counts,
    piece_stats,
    split_summary,
    warm_windows,
)

METRICS = ["recall@6", "recall@10", "ndcg@10"]
POOLINGS = ("truncated", "max", "mean")


def chunk_texts(lab: Lab) -> list[str]:
    """The text of every chunk of every workspace group of ``lab`` (index order)."""
    out: list[str] = []
    for group in lab.dataset.workspaces:
        idx = lab.index(group)
        out += idx.texts(np.arange(len(idx.table)))
    return out


def embedder_for(inner: Any, pooling: str) -> Any:
    """``inner`` itself (``truncated``) or a `PooledEmbedder` over it."""
    from memlab.embed.pooled import PooledEmbedder

    return inner if pooling == "truncated" else PooledEmbedder(inner, pooling=pooling)


def labs(ds: Any, poolings: tuple[str, ...] = POOLINGS) -> dict[str, Lab]:
    """One chunk-level lab per pooling, all over the same cached inner model; the windows
    of every long chunk are embedded first (resumable: saved after each batch)."""
    inner = base_embedder(ds)
    truncated = Lab(ds, embedder=inner, unit="chunk", progress=False, cache_vectors=True)
    out = {"truncated": truncated}
    pooled = [p for p in poolings if p != "truncated"]
    if pooled:
        t0 = time.perf_counter()
        n = warm_windows(embedder_for(inner, pooled[0]), inner, chunk_texts(truncated))
        log(f"{ds.name}: {n} windows ready in {time.perf_counter() - t0:.0f} s")
    for p in pooled:
        emb = embedder_for(inner, p)
        out[p] = Lab(ds, embedder=emb, unit="chunk", progress=False, cache_vectors=True)
    return out


def systems(suffix: str = "") -> list[Pipeline]:
    """The systems every pooling is measured with."""
    return [
        preset("vector").replace(name=f"vector{suffix}"),
        preset("bm25").replace(name=f"bm25{suffix}"),
        chunk_as_unit(name=f"{CHUNK_UNIT_NAME}{suffix}"),
        memlab_best(name=f"memlab-best{suffix}"),
    ]


def part_tokens(sets: dict[str, Any]) -> dict[str, Any]:
    """Chunks whose word pieces ([CLS], [SEP] included) exceed the model's 256."""
    out = {}
    for name, (ds, _, _) in sets.items():
        lab = Lab(ds, embedder=base_embedder(ds), unit="chunk", progress=False, cache_vectors=True)
        n = piece_counts(chunk_texts(lab))
        out[name] = {
            "chunks": int(n.size),
            **piece_stats(n),
            "share_over_256": round(float((n > 256).mean()), 4),
            "pieces_p90": float(np.percentile(n, 90)),
        }
    print("\ntokens: chunks over the packaged model's 256 word pieces (specials included)")
    print_table([{"set": k, **v} for k, v in out.items()])
    return out


def part_pool(sets: dict[str, Any]) -> dict[str, Any]:
    """Every system of ``systems`` on each pooling's lab, tune and report halves."""
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    for name, (ds, tune, rep) in sets.items():
        rows = []
        for label, lab in labs(ds).items():
            t0 = time.perf_counter()
            res = run_experiment(systems(f" ({label})"), lab, METRICS)
            secs = round(time.perf_counter() - t0, 1)
            log(f"pool {name} {label}: {secs} s")
            rows += [
                {**r, "seconds": secs}
                for r in part_means(res, {"tune": tune, "report": rep}, METRICS)
            ]
        out[name] = rows
        print(f"\npool: {name}, OpenClaw chunks (tune / report halves)")
        print_table(rows)
    return out


def at_point(name: str, legs: str, vector_weight: float, **neighbors: float) -> Pipeline:
    """memlab-best-chunk's chunk-as-unit system (``chunk_as_unit``) at one grid point: leg
    normalisations ``LEGS[legs]`` (with their score floor), ``vector_weight`` and
    ``1 − vector_weight``, the neighbour weights."""
    vnorm, tnorm, floor = LEGS[legs]
    return chunk_as_unit(
        name=name,
        vector_norm=vnorm,
        text_norm=tnorm,
        min_score=floor,
        vector_weight=vector_weight,
        text_weight=round(1.0 - vector_weight, 10),
        **neighbors,
    )


def part_grid(sets: dict[str, Any], poolings: tuple[str, ...]) -> dict[str, Any]:
    """The 150-point grid on each pooling's LoCoMo lab, chosen on LoCoMo's tune half by
    recall@6, around memlab-best-chunk's chunk-as-unit system (``chunk_as_unit``); the chosen
    point and that system then on BEAM (tune and report)."""
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    (lds, ltune, lrep), (bds, btune, brep) = sets["locomo"], sets["beam"]
    llabs, blabs = labs(lds, poolings), labs(bds, poolings)
    for label in poolings:
        g = grid_search(llabs[label], chunk_as_unit(), ["recall@6"], ltune, lrep)
        point = at_point(f"grid choice ({label})", **g["chosen"])
        both = [point, chunk_as_unit(name=f"{CHUNK_UNIT_NAME} ({label})")]
        bres = run_experiment(both, blabs[label], METRICS)
        lres = run_experiment(both, llabs[label], METRICS)
        out[label] = {
            **g,
            "locomo": part_means(lres, {"tune": ltune, "report": lrep}, METRICS),
            "beam": part_means(bres, {"tune": btune, "report": brep}, METRICS),
        }
        print(f"\ngrid ({label} vectors): {g['settings']} points, {g['seconds']} s")
        print(
            f"   chosen on LoCoMo tune: {g['chosen']} (same as {CHUNK_UNIT_NAME}: "
            f"{g['chosen_is_preset']})"
        )
        print_table(g["top5_on_tune"])
        print("   LoCoMo:")
        print_table(out[label]["locomo"])
        print("   BEAM:")
        print_table(out[label]["beam"])
    return out


def variants() -> list[Pipeline]:
    """Cheap variants of memlab-best-chunk's chunk-as-unit system (``chunk_as_unit``), one
    change each."""
    best = chunk_as_unit()
    rrf = {"fusion": "rrf", "vector_weight": 1.0, "text_weight": 1.0}
    steps = {
        CHUNK_UNIT_NAME: best,
        "keyword leg alone (porter)": best.replace(vector=False),
        "no neighbours": best.replace(neighbor_prev=0.0, neighbor_next=0.0),
        "unicode61 (no stemming)": best.replace(fts_tokenizer=None),
        "heading lines kept": best.replace(drop_headings=False),
        "shape rule (roles)": best.replace(neighbor_shape="roles"),
        "RRF k=60": best.replace(**rrf),
        "RRF k=10": best.replace(**rrf, rrf_k=10.0),
        "z-score legs 0.3/0.7": best.replace(
            vector_norm="zscore", text_norm="zscore", min_score=-1e6
        ),
    }
    for w in (0.1, 0.2, 0.4, 0.5):
        steps[f"vector weight {w}"] = best.replace(vector_weight=w, text_weight=round(1.0 - w, 10))
    for a, b in itertools.product((0.1, 0.2, 0.3, 0.5), (0.1, 0.2, 0.3, 0.5)):
        steps[f"neighbours {a}/{b}"] = best.replace(neighbor_prev=a, neighbor_next=b)
    return [p.replace(name=n) for n, p in steps.items()]


def part_ideas(sets: dict[str, Any], poolings: tuple[str, ...]) -> dict[str, Any]:
    """``variants`` on both dev sets, per pooling; printed sorted by LoCoMo tune recall@6."""
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    for label in poolings:
        rows: dict[str, dict[str, Any]] = {}
        for name, (ds, tune, rep) in sets.items():
            lab = labs(ds, (label,))[label]
            res = run_experiment(variants(), lab, METRICS)
            for r in part_means(res, {f"{name} tune": tune, f"{name} report": rep}, METRICS):
                rows.setdefault(r["system"], {"system": r["system"]}).update(r)
        out[label] = list(rows.values())
        print(f"\nideas ({label} vectors), one change each to {CHUNK_UNIT_NAME}")
        cols = ["system"] + [
            f"{s} {h} {m}"
            for s in sets
            for h in ("tune", "report")
            for m in ("recall@6", "ndcg@10")
        ]
        print_table(out[label], cols)
    return out


def maxsim_scores(lc: Any, inner: Any, pooled: Any, embedder: Any) -> None:
    """Replace, in place, the vector leg of ``lc`` (a lab's cached candidates) by MaxSim:
    ``s(q, c) = max_w cos(q, w)`` over the windows ``w`` of chunk ``c`` (a chunk that fits
    in one window keeps its own cosine); the leg's ranks are recomputed from the new scores
    (0 = best, ties by position; −1 stays −1 where the leg did not find the chunk)."""
    cs = lc.cs
    pos = np.unique(cs.pos[cs.pos >= 0])
    wins = [pooled.windows(t) for t in cs.texts(pos)]
    flat = [w for ws in wins for w in ws]
    wv = np.asarray(inner.embed_documents(flat), dtype=np.float32)
    qv = np.vstack([embedder.embed_query(q) for q in cs.queries]).astype(np.float32)
    starts = np.cumsum([0] + [len(ws) for ws in wins[:-1]])
    best = np.maximum.reduceat(qv @ wv.T, starts, axis=1)  # [Q, len(pos)]
    col = np.full(len(cs.table), -1, dtype=np.int64)
    col[pos] = np.arange(len(pos))
    has = cs.has_vec & (cs.pos >= 0)
    rows, cols = np.nonzero(has)
    cs.vec_score[rows, cols] = best[rows, col[cs.pos[rows, cols]]]
    score = np.where(has, cs.vec_score, -np.inf)
    order = np.argsort(-score, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[1])[None, :], axis=1)
    cs.vec_rank[...] = np.where(has, rank, -1)


def rescore_maxsim(lab: Lab, systems: list[Pipeline], inner: Any) -> None:
    """Apply `maxsim_scores` once to each distinct cached candidate set ``systems`` rank on
    ``lab`` (several systems share one), with ``inner``'s max-pooled windows."""
    from memlab.embed.pooled import PooledEmbedder

    pooled = PooledEmbedder(inner, pooling="max")
    done: set[int] = set()
    for lc in lab.candidates_for(systems).values():
        if id(lc) not in done:
            maxsim_scores(lc, inner, pooled, lab.embedder)
            done.add(id(lc))


def part_maxsim(sets: dict[str, Any]) -> dict[str, Any]:
    """MaxSim vector leg (``maxsim_scores``) against the truncated chunk vector, for the
    vector leg alone (every chunk a candidate), memlab-best-chunk's chunk-as-unit system
    (``chunk_as_unit``) and its vector weights
    0.4 / 0.5 (a stronger vector leg may deserve more weight)."""
    from memlab.eval.experiment import run_experiment

    best = chunk_as_unit()
    pts = [
        preset("vector", candidate_multiplier=200.0, max_candidates=1000).replace(name="vector"),
        best,
        *[
            best.replace(
                name=f"{CHUNK_UNIT_NAME}, vector {w}",
                vector_weight=w,
                text_weight=round(1.0 - w, 10),
            )
            for w in (0.4, 0.5)
        ],
    ]
    out: dict[str, Any] = {}
    for name, (ds, tune, rep) in sets.items():
        inner = base_embedder(ds)
        lab = Lab(ds, embedder=inner, unit="chunk", progress=False, cache_vectors=True)
        halves = {"tune": tune, "report": rep}
        rows = [
            {**r, "system": f"{r['system']} (truncated)"}
            for r in part_means(run_experiment(pts, lab, METRICS), halves, METRICS)
        ]
        rescore_maxsim(lab, pts, inner)
        rows += [
            {**r, "system": f"{r['system']} (maxsim)"}
            for r in part_means(run_experiment(pts, lab, METRICS), halves, METRICS)
        ]
        out[name] = rows
        print(f"\nmaxsim: {name}, vector leg = best window's cosine (tune / report halves)")
        print_table(rows)
    return out


JOINT_GRID: dict[str, list[Any]] = {
    "legs": ["minmax/max", "zscore/zscore"],
    "vector_weight": [0.2, 0.3, 0.4, 0.5],
    "neighbor_prev": [0.0, 0.1, 0.2, 0.3],
    "neighbor_next": [0.0, 0.1, 0.2, 0.3, 0.5, 0.7],
}


def joint_points() -> list[Pipeline]:
    """memlab-best-chunk's chunk-as-unit system (``at_point``) at every point of
    ``JOINT_GRID`` (named by the point)."""
    pts = []
    for legs, w, a, b in itertools.product(*JOINT_GRID.values()):
        name = f"{legs} v{w} n{a}/{b}"
        pts.append(at_point(name, legs, w, neighbor_prev=a, neighbor_next=b))
    return pts


def part_joint(sets: dict[str, Any]) -> dict[str, Any]:
    """``JOINT_GRID`` on both tune halves at once, truncated and MaxSim vector legs.

    Choice rule (tune halves only): the highest LoCoMo-tune recall@6 among the points whose
    BEAM-tune recall@6 is at least the chunk-as-unit system's (the issue's chunk target is on
    LoCoMo; BEAM must not lose); also shown: the best sum of both tune recall@6."""
    import pandas as pd

    from memlab.eval.experiment import run_experiment

    pts = joint_points()
    ref = CHUNK_UNIT_NAME
    pts.append(chunk_as_unit())
    out: dict[str, Any] = {}
    tables: dict[str, dict[str, pd.DataFrame]] = {"truncated": {}, "maxsim": {}}
    for name, (ds, tune, rep) in sets.items():
        inner = base_embedder(ds)
        lab = Lab(ds, embedder=inner, unit="chunk", progress=False, cache_vectors=True)
        halves = {f"{name} tune": tune, f"{name} report": rep}
        for variant in ("truncated", "maxsim"):
            if variant == "maxsim":
                rescore_maxsim(lab, pts, inner)
            t0 = time.perf_counter()
            res = run_experiment(pts, lab, METRICS)
            log(f"joint {name} {variant}: {len(pts)} points, {time.perf_counter() - t0:.0f} s")
            tables[variant][name] = pd.DataFrame(part_means(res, halves, METRICS)).set_index(
                "system"
            )
    for variant, t in tables.items():
        df = t["locomo"].join(t["beam"])
        floor = df.loc[ref, "beam tune recall@6"]
        ok = df[df["beam tune recall@6"] >= floor]
        # Ties go to the first point in grid order.
        chosen = str(ok["locomo tune recall@6"].idxmax())
        by_sum = str((df["locomo tune recall@6"] + df["beam tune recall@6"]).idxmax())
        show = list(dict.fromkeys([ref, chosen, by_sum]))
        rows = df.loc[show].reset_index().to_dict("records")
        out[variant] = {"chosen": chosen, "best_sum": by_sum, "rows": rows}
        print(
            f"\njoint grid ({variant} vector leg), {len(pts) - 1} points, chosen on both tune halves"
        )
        print(f"   chosen (best LoCoMo tune, BEAM tune >= preset): {chosen}; best sum: {by_sum}")
        cols = ["system"] + [
            f"{s} {h} {m}" for s in sets for h in ("tune", "report") for m in METRICS
        ]
        print_table(rows, cols)
    return out


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--parts", default="tokens,pool,grid,ideas,maxsim,joint", help="parts to run")
    ap.add_argument(
        "--poolings", default="truncated,max", help="poolings of the grid and ideas parts"
    )
    args = ap.parse_args()
    parts = args.parts.split(",")
    poolings = tuple(args.poolings.split(","))
    sets = dev_sets()
    out: dict[str, Any] = {"split": split_summary(sets)}
    log(f"halves: {out['split']}")
    if "tokens" in parts:
        out["tokens"] = part_tokens(sets)
    if "pool" in parts:
        out["pool"] = part_pool(sets)
    if "grid" in parts:
        out["grid"] = part_grid(sets, poolings)
    if "ideas" in parts:
        out["ideas"] = part_ideas(sets, poolings)
    if "maxsim" in parts:
        out["maxsim"] = part_maxsim(sets)
    if "joint" in parts:
        out["joint"] = part_joint(sets)
    report("chunk_quality", args, fingerprints(sets), out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
