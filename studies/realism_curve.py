"""The realism curve: the tuned vector weight and the presets' order as a function of term
overlap, with every real dev group placed on it (docs/studies/realism.md).

CURVE. The committed paraphrase ladders ``datasets/realism-notes`` and
``datasets/realism-conversation`` (one synthetic workspace per style asked at paraphrase
0, 0.25, 0.5, 0.75 and 1; ``memlab.eval.realism.LADDERS``): per level, its term overlap
(``memlab.eval.stats``), the plateau of the ``wsum`` vector weight (0–1 by 0.05, within
0.01 of the best recall@10) and each preset's recall@10, one line per unit.

GROUPS. Every dev group, each on its own: LoCoMo's five conversations and BEAM's ten chats
(recall@10, one line per unit) and RealMem's five personas (recall_any@10, sessions
ranked as of each query), read from ../shared via the loaders (a set that is not found is
skipped with a message). Each group's overlap places it on the curve of its style; the
curve predicts a weight (its plateau midpoints, interpolated) and a preset order; the
group's own plateau and order say whether the prediction holds: inside or not, and
Kendall's tau-b of the orders. A second prediction per set: a corpus fitted to the set's
statistics (``memlab synth --like``), its plateau midpoint and preset order.

Reproduce (docs/studies/realism.md; all-MiniLM-L6-v2; the first run embeds the ladders and the dev
sets, ~10 min on 2 shared cores, cached after; ``--embedder hashing`` for a fast check):

    nice -n 10 .venv/bin/python studies/realism_curve.py --json benchmarks/results/realism_curve.json

``--make-datasets`` writes the two ladders into ``datasets/`` (deterministic per config).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import REPO, cache_dir, log, parser, print_table, report
from memlab.eval.realism import (
    CURVE_PRESETS,
    LADDERS,
    LEVELS,
    PLATEAU_TOLERANCE,
    WEIGHTS,
    Point,
    curve_table,
    judge,
    ladder_points,
    like_point,
    measure_points,
    place,
)
from studies.shared import base_embedder

# Each real set: loader name, unit, metric (RealMem's own, at its file level).
REAL = {
    "locomo": ("turn", "recall@10"),
    "beam": ("turn", "recall@10"),
    "realmem": ("turn", "recall_any@10"),
}
TAU_GOAL = 0.8


def make_datasets() -> None:
    """(Re)write ``datasets/realism-<style>`` from ``LADDERS`` at ``LEVELS``."""
    from memlab.datasets.synthetic import SynthConfig
    from memlab.datasets.synthetic.ladder import write_ladder

    for style, cfg in LADDERS.items():
        ds = write_ladder(
            SynthConfig(**cfg), list(LEVELS), REPO / "datasets" / f"realism-{style}", overwrite=True
        )
        print(f"realism-{style}: {len(ds.queries)} questions at {len(LEVELS)} levels")


def embedder_for(ds: Any, name: str) -> Any:
    """The packaged model behind the lab's vector cache (``shared.base_embedder``), or a
    provider name the lab resolves (``hashing``)."""
    return base_embedder(ds) if name == "local" else name


def curve(name: str) -> list[Point]:
    """The synthetic points of both styles."""
    from memlab.datasets.base import load_folder
    from memlab.eval.lab import Lab

    points: list[Point] = []
    for style in LADDERS:
        log(f"ladder {style}")
        ds = load_folder(REPO / "datasets" / f"realism-{style}")
        lab = Lab(
            ds, embedder=embedder_for(ds, name), unit="turn", progress=False, cache_vectors=True
        )
        points += ladder_points(lab, style)
    return points


def groups(name: str) -> tuple[list[Point], dict[str, Point]]:
    """Every real dev group's point, and per set the point of a synthetic corpus fitted to
    the set's statistics (``--like``: ``memlab.eval.realism.like_point``, written under the
    benchmark cache). A set not found is skipped, said on stderr."""
    from memlab.cli.labsetup import LabError, load_dataset
    from memlab.eval.lab import Lab
    from memlab.eval.stats import corpus_stats

    out: list[Point] = []
    like: dict[str, Point] = {}
    for kind, (unit, metric) in REAL.items():
        try:
            ds = load_dataset(kind, None)
        except LabError as exc:
            print(f"{exc} Skipped.", file=sys.stderr)
            continue
        log(kind)
        stats = corpus_stats(ds)
        lab = Lab(
            ds,
            embedder=embedder_for(ds, name),
            unit=unit,
            level=ds.info.get("level", "unit"),
            progress=False,
            cache_vectors=True,
        )
        q = ds.queries
        parts = {f"{kind}:{g}": q.loc[q["group"] == g, "qid"].tolist() for g in ds.workspaces}
        by = {f"{kind}:{g}": s for g, s in stats["by_group"].items()}
        out += measure_points(lab, parts, metric, by, style=stats["style"])
        log(f"{kind}: a corpus like it")
        stats.pop("per_query")
        emb = "hashing" if name == "hashing" else "local"
        like[kind], fit = like_point(
            stats, f"like {kind}", cache_dir() / f"realism-like-{kind}", metric, embedder=emb
        )
        print(f"\nsynth --like {kind}:\n{fit.format()}")
    return out, like


def main() -> int:
    ap = parser(__doc__.split("\n\n")[0], "realism_curve")
    ap.add_argument("--embedder", choices=("local", "hashing"), default="local")
    ap.add_argument("--make-datasets", action="store_true", help="write the ladders, then stop")
    args = ap.parse_args()
    if args.make_datasets:
        make_datasets()
        return 0
    points = curve(args.embedder)
    print(
        f"\nThe curve ({args.embedder}; recall@10; plateau: vector weights within {PLATEAU_TOLERANCE} of the best)"
    )
    print_table(curve_table(points))
    real, like = groups(args.embedder)
    placed, liked = [], []
    for g in real:
        line = [p for p in points if p.style == g.style]
        placed.append(place(g, line))
        twin = like[g.name.split(":")[0]]
        liked.append(judge(g, twin.middle, twin.figures))
    rows = [
        {
            "group": r["group"],
            "n": r["n"],
            "overlap": round(r["overlap"], 3),
            "distractor": round(r["distractor"], 3),
            "plateau": f"{r['plateau'][0]:.2f}–{r['plateau'][1]:.2f}",
            "predicted": round(r["predicted"], 2),
            "inside": "yes" if r["inside"] else "NO",
            "tau": round(r["tau"], 3),
            "best preset": r["best_preset"],
            "predicted best": r["predicted_best_preset"],
        }
        for r in placed
    ]
    summary: dict[str, Any] = {}
    if placed:
        print(
            "\nEach dev group on the curve of its style (tau: Kendall's tau-b of the preset orders)"
        )
        print_table(rows)
        print_table(
            [{"group": g.name, **{k: round(v, 3) for k, v in g.figures.items()}} for g in real]
        )
        inside = sum(r["inside"] for r in placed)
        taus = np.array([r["tau"] for r in placed])
        summary = {
            "groups": len(placed),
            "inside": inside,
            "tau_at_least_goal": int((taus >= TAU_GOAL).sum()),
            "tau_median": float(np.nanmedian(taus)),
        }
        print(
            f"\nprediction inside the group's plateau: {inside} of {len(placed)} groups; tau >="
            f" {TAU_GOAL}: {summary['tau_at_least_goal']} of {len(placed)} (median"
            f" {summary['tau_median']:.3f})"
        )
        missed = [r["group"] for r in placed if not r["inside"]]
        if missed:
            print(f"not inside: {', '.join(missed)}")
        print("\nThe corpora fitted to each set (synth --like), as points")
        print_table(curve_table(list(like.values())))
        print("\nEach dev group against the corpus fitted to its set")
        print_table(
            [
                {
                    "group": r["group"],
                    "plateau": f"{r['plateau'][0]:.2f}–{r['plateau'][1]:.2f}",
                    "predicted": round(r["predicted"], 2),
                    "inside": "yes" if r["inside"] else "NO",
                    "tau": round(r["tau"], 3),
                    "predicted best": r["predicted_best_preset"],
                }
                for r in liked
            ]
        )
        taus_like = np.array([r["tau"] for r in liked])
        summary["like"] = {
            "inside": sum(r["inside"] for r in liked),
            "tau_at_least_goal": int((taus_like >= TAU_GOAL).sum()),
            "tau_median": float(np.nanmedian(taus_like)),
        }
        print(
            f"\nfitted corpora: inside {summary['like']['inside']} of {len(liked)}; tau >="
            f" {TAU_GOAL}: {summary['like']['tau_at_least_goal']} (median"
            f" {summary['like']['tau_median']:.3f})"
        )
    report(
        "realism_curve",
        args,
        {
            "embedder": args.embedder,
            "presets": CURVE_PRESETS,
            "weights": WEIGHTS,
            "plateau_tolerance": PLATEAU_TOLERANCE,
            "ladders": LADDERS,
            "levels": LEVELS,
            "real": REAL,
        },
        {
            "curve": [p.to_json() for p in points],
            "groups": [g.to_json() for g in real],
            "placed": placed,
            "like": {k: v.to_json() for k, v in like.items()},
            "placed_like": liked,
            "summary": summary,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
