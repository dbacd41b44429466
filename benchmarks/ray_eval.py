"""``memlab eval`` on Ray — local vs ``--ray local`` with 1 and 2 workers, the
per-worker embedding rate, and what a 16-node cluster would take for a whole study.

1. **Scaling.** The same evaluation (LoCoMo at turn level, the packaged all-MiniLM-L6-v2 on
   onnxruntime, presets ``bm25`` and ``memlab-best``; ``--quick``: a generated 20-day
   corpus) run cold — empty index folder and vector cache, the ONNX export already in the
   user cache — in a fresh process per mode: ``local`` (the lab as ``memlab eval`` runs
   it: 2 onnxruntime threads), ``ray-1`` and ``ray-2`` (``RayRunner("local", workers=n)``:
   a cluster started for the run, n task slots and embedding actors of one CPU each).
   Reported: wall seconds (the cluster's start included, and apart), speed-up over local,
   each Ray step's wall and its tasks' own seconds, the overhead per task (the median
   round trip of an empty task on the started cluster, and per step: (wall × workers −
   the tasks' own seconds) / tasks), peak memory of the driver and of each worker and
   actor process, and whether every per-question value equals the local run's.
2. **Per-worker embedding rate.** Each embedder on one thread (what one Ray actor of one
   CPU runs) over samples of each data set's own texts, turn and chunk (OpenClaw's
   chunker at its defaults), texts/s: ``onnx`` (fp32), ``onnx-int8``, ``torch``
   (sentence-transformers), ``hashing``. The actors' own rate in step 1 (texts / busy
   seconds) is printed beside it.
3. **Cost model.** Unique texts per data set and unit (LoCoMo and BEAM through memlab's
   loaders; RealMem's five dev personas counted from their JSON and doubled for ten, its
   chunks by rendering each session one line per turn; LongMemEval-S is not on this
   machine: its published size, 500 questions × ~50 sessions ≈ 115k tokens each, with
   BEAM's texts' rates, no text shared between questions — an upper bound). CPU seconds =
   texts / rate; on W workers: CPU seconds / W + the measured fixed costs (cluster start,
   model load per actor) + the measured overhead per task × tasks / W. A node here has 2
   cores: 16 nodes = 32 workers.

Figures are medians of one run on a shared 2-core machine: read the ratios.
``python benchmarks/ray_eval.py --json benchmarks/results/ray_eval.json`` (~15 min);
``--quick``: synthetic corpus, 16-text samples (~3 min).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import REPO, log, parser, peak_rss_mb, print_table, report

MODES = {"local": None, "ray-1": 1, "ray-2": 2}
SYSTEMS = ("bm25", "memlab-best")
METRICS = ["recall@6", "ndcg@10", "mrr"]
EMBEDDERS = ("onnx", "onnx-int8", "torch", "hashing")
WORKERS_PER_NODE = 2  # this machine's cores: a node of the cost model
NODES = 16
# LongMemEval-S (Wu et al. 2024) as published: 500 questions, each with its own haystack
# of ~50 sessions, ~115k tokens; not on this machine. Turns of ~ 10 per session.
LME_QUESTIONS, LME_SESSIONS, LME_TOKENS, LME_TURNS_PER_SESSION = 500, 50, 115_000, 10


# ------------------------------------------------------------------ data
def dataset(kind: str, root: Path) -> Any:
    """``locomo`` (the shared copy through memlab's loader) or ``synthetic`` (20 days)."""
    if kind == "locomo":
        from memlab.datasets.locomo import load_locomo

        return load_locomo()
    from memlab.datasets.base import load_folder
    from memlab.datasets.synthetic import SynthConfig, generate

    if (root / "synthetic" / "queries.jsonl").is_file():  # the first mode generated it
        return load_folder(root / "synthetic")
    return generate(SynthConfig(days=20, seed=3), root / "synthetic")


def unit_texts(ds: Any, unit: str) -> list[str]:
    """Every unique text the lab's indexes of ``ds`` hold at ``unit`` (turn or chunk)."""
    from memlab.eval.lab import Lab
    from memlab.eval.raylab import LabSpec, group_texts

    spec = LabSpec.of(Lab(ds, embedder=None, unit=unit, index_dir=tempfile.gettempdir()), None)
    seen: dict[str, None] = {}
    for g in ds.workspaces:
        for t in group_texts(spec, g)["texts"]:
            seen.setdefault(t, None)
    return list(seen)


def realmem_texts() -> dict[str, list[str]] | None:
    """RealMem's dev personas (../shared/datasets/realmem): every turn, and the OpenClaw
    chunks of each session rendered one line per turn (``Speaker: content``, newlines
    folded) — an estimate of what a loader writes."""
    from memlab.chunking import ChunkerConfig

    folder = REPO.parent / "shared" / "datasets" / "realmem"
    files = sorted(folder.glob("*_dialogues_*.json"))
    if not files:
        return None
    chunker = ChunkerConfig("openclaw")
    turns: list[str] = []
    chunks: list[str] = []
    for f in files:
        for session in json.loads(f.read_text())["dialogues"]:
            lines = [
                f"{t['speaker']}: {' '.join(str(t['content']).split())}"
                for t in session["dialogue_turns"]
            ]
            turns += lines
            chunks += [c.text for c in chunker.chunk("\n".join(lines) + "\n")]
    return {"turn": turns, "chunk": chunks, "personas": len(files)}


# ------------------------------------------------------------------ step 1: one mode
def child(mode: str, kind: str, out: Path, work: Path) -> None:
    """One cold evaluation in this process; its figures as JSON into ``out``."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    ds = dataset(kind, work)
    systems = [preset(s) for s in SYSTEMS]
    result: dict[str, Any] = {"mode": mode}
    runner = None
    t0 = time.perf_counter()
    if MODES[mode] is not None:
        from memlab.eval.raylab import RayRunner, embedder_factory

        runner = RayRunner("local", workers=MODES[mode], embedder_factory=embedder_factory("local"))
        runner.start()
        result["start_seconds"] = time.perf_counter() - t0
        ray = runner.ray

        @ray.remote(num_cpus=1)
        def nothing() -> int:
            return 0

        ray.get([nothing.remote() for _ in range(MODES[mode] * 2)])  # workers up
        trips = []
        for _ in range(50):
            t = time.perf_counter()
            ray.get(nothing.remote())
            trips.append(time.perf_counter() - t)
        result["empty_task_seconds"] = float(np.median(trips))
    lab = Lab(
        ds,
        cache_vectors=True,
        embedder="local",
        unit="turn",
        index_dir=work / mode,
        executor=runner,
    )
    res = run_experiment(systems, lab, METRICS)
    result["seconds"] = time.perf_counter() - t0
    result["driver_peak_mib"] = peak_rss_mb()
    result["table"] = {s: {m: float(res.table.loc[s, m]) for m in METRICS} for s in SYSTEMS}
    pq = res.per_query.sort_values(["system", "metric", "qid"])
    result["per_query"] = pq["value"].tolist()
    result["questions"] = int(res.table["n"].iloc[0])
    if runner is not None:
        result["stats"] = runner.stats
        runner.close()
    out.write_text(json.dumps(result, default=float))


def run_mode(mode: str, kind: str, work: Path) -> dict[str, Any]:
    out = work / f"{mode}.json"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, __file__, "--child", mode, "--dataset", kind]
    cmd += ["--work", str(work), "--child-out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{proc.stderr[-4000:]}")
    return json.loads(out.read_text())


def step_overhead(step: dict[str, Any], workers: int) -> float:
    """(wall × workers − the tasks' own seconds) / tasks: what a task costs beyond its work
    (scheduling, moving arguments and results, idle slots at the end of the step)."""
    return (step["seconds"] * workers - sum(step["task_seconds"])) / max(step["tasks"], 1)


def scaling(kind: str, work: Path) -> dict[str, Any]:
    runs = {}
    for mode in MODES:
        log(f"scaling: {mode}")
        runs[mode] = run_mode(mode, kind, work)
    base = runs["local"]
    rows = []
    for mode, r in runs.items():
        row: dict[str, Any] = {
            "mode": mode,
            "seconds": r["seconds"],
            "speed-up": base["seconds"] / r["seconds"],
            "same values": r["per_query"] == base["per_query"],
            "driver peak MiB": r["driver_peak_mib"],
        }
        if "stats" in r:
            n = MODES[mode]
            steps = [s for st in r["stats"] for s in (st.get("texts"), st["candidates"]) if s]
            embeds = [st["embed"] for st in r["stats"] if st.get("embed", {}).get("actors")]
            busy = sum(sum(e["actor_busy_seconds"]) for e in embeds)
            texts = sum(sum(e["actor_texts"]) for e in embeds)
            row.update(
                {
                    "cluster start s": r["start_seconds"],
                    "empty task ms": 1000 * r["empty_task_seconds"],
                    "overhead per task ms": 1000
                    * float(np.median([step_overhead(s, n) for s in steps])),
                    "tasks": sum(s["tasks"] for s in steps),
                    "embed step s": sum(e["seconds"] for e in embeds),
                    # the embedding step beyond its busiest actor's work: Ray Data's start,
                    # the actors' start and model load
                    "embed fixed s": sum(
                        e["seconds"] - max(e["actor_busy_seconds"]) for e in embeds
                    ),
                    "actor texts/s": texts / busy if busy else float("nan"),
                    "worker peak MiB": max(m for s in steps for m in s["worker_rss_mib"]),
                    "actor peak MiB": max(
                        (m for e in embeds for m in e["actor_rss_mib"]), default=float("nan")
                    ),
                }
            )
        rows.append(row)
    return {
        "rows": rows,
        "runs": {m: {k: v for k, v in r.items() if k != "per_query"} for m, r in runs.items()},
    }


# ------------------------------------------------------------------ step 2: rates
def one_thread_embedder(name: str) -> Any:
    """The embedder ``name`` on one thread, as one Ray actor of one CPU runs it."""
    from memlab.embed import HashingEmbedder, resolve_embedder
    from memlab.embed.onnx import OnnxEmbedder

    if name == "hashing":
        return HashingEmbedder()
    if name == "torch":
        import torch

        torch.set_num_threads(1)
        return resolve_embedder("local", backend="torch")
    return OnnxEmbedder(threads=1, precision="int8" if name == "onnx-int8" else "fp32")


def rates(samples: dict[str, dict[str, list[str]]], n: int) -> dict[str, dict[str, float]]:
    """texts/s of each embedder on one thread over ``n`` texts of each (data set, unit)."""
    rng = np.random.default_rng(0)
    out: dict[str, dict[str, float]] = {}
    for name in EMBEDDERS:
        e = one_thread_embedder(name)
        e.embed_documents(["warm up the model"] * 4)
        for ds, units in samples.items():
            for unit, texts in units.items():
                pick = [texts[i] for i in rng.choice(len(texts), min(n, len(texts)), False)]
                t = time.perf_counter()
                e.embed_documents(pick)
                out.setdefault(f"{ds}/{unit}", {})[name] = len(pick) / (time.perf_counter() - t)
                log(f"rate {name} {ds}/{unit}: {out[f'{ds}/{unit}'][name]:.1f} texts/s")
    return out


# ------------------------------------------------------------------ step 3: cost model
def cost_model(
    sizes: dict[str, dict[str, int]],
    rate: dict[str, dict[str, float]],
    fixed: dict[str, float],
    workers: list[int],
) -> list[dict[str, Any]]:
    """Hours of a study (every data set, turn and chunk, each embedder) on each worker
    count: Σ texts / rate (CPU), spread over the workers, plus the fixed costs."""
    rows = []
    for ds, units in sizes.items():
        src = ds if ds != "LongMemEval-S" else "BEAM"
        for unit in ("turn", "chunk"):
            texts = units[unit]
            row: dict[str, Any] = {"data set": ds, "unit": unit, "texts": texts}
            for name in EMBEDDERS:
                row[f"{name} CPU h"] = texts / rate[f"{src}/{unit}"][name] / 3600
            rows.append(row)
    total = {name: sum(r[f"{name} CPU h"] for r in rows) for name in EMBEDDERS}
    cpu_h = sum(total.values())
    groups = sum(units["groups"] for units in sizes.values())
    tasks = 2 * 2 * 2 * groups * len(EMBEDDERS)  # 2 steps × 2 labs × 2 units per group
    for w in workers:
        per_task_h = fixed["overhead_per_task_s"] * tasks / w / 3600
        loads = fixed["model_load_s"] * len(EMBEDDERS) * 2 / 3600  # per actor, in parallel
        rows.append(
            {
                "data set": f"study on {w} workers" + (f" ({w // WORKERS_PER_NODE} nodes)"),
                "unit": "both",
                "texts": sum(r["texts"] for r in rows if r["unit"] in ("turn", "chunk")),
                **{f"{n} CPU h": total[n] / w for n in EMBEDDERS},
                "wall h": cpu_h / w + per_task_h + loads + fixed["cluster_start_s"] / 3600,
            }
        )
    return rows


def sizes_and_samples() -> tuple[dict[str, Any], dict[str, Any]]:
    """Unique texts per data set and unit (with its number of workspaces), and the texts."""
    from memlab.datasets.beam import beam_default_path, load_beam
    from memlab.datasets.locomo import load_locomo, locomo_default_path

    sizes: dict[str, dict[str, int]] = {}
    samples: dict[str, dict[str, list[str]]] = {}
    for name, found, load in (
        ("LoCoMo", locomo_default_path(), load_locomo),
        ("BEAM", beam_default_path(), load_beam),
    ):
        if found is None:
            continue
        ds = load()
        texts = {u: unit_texts(ds, u) for u in ("turn", "chunk")}
        sizes[name] = {u: len(t) for u, t in texts.items()} | {"groups": len(ds.workspaces)}
        samples[name] = texts
    rm = realmem_texts()
    if rm is not None:
        scale = 10 / rm["personas"]
        sizes["RealMem (10 personas)"] = {
            "turn": round(len(set(rm["turn"])) * scale),
            "chunk": round(len(set(rm["chunk"])) * scale),
            "groups": 10,
        }
        samples["RealMem (10 personas)"] = {"turn": rm["turn"], "chunk": rm["chunk"]}
    # LongMemEval-S: published size (not here); 400-token chunks
    sizes["LongMemEval-S"] = {
        "turn": LME_QUESTIONS * LME_SESSIONS * LME_TURNS_PER_SESSION,
        "chunk": LME_QUESTIONS * LME_TOKENS // 400,
        "groups": LME_QUESTIONS,
    }
    return sizes, samples


def main() -> None:
    p = parser(__doc__.split("\n\n")[0], "ray_eval")
    p.add_argument("--dataset", choices=("locomo", "synthetic"), default=None)
    p.add_argument("--child", choices=tuple(MODES), help=argparse_hidden())
    p.add_argument("--child-out", help=argparse_hidden())
    p.add_argument("--work", help=argparse_hidden())
    args = p.parse_args()
    kind = args.dataset or ("synthetic" if args.quick else "locomo")
    if args.child:
        child(args.child, kind, Path(args.child_out), Path(args.work))
        return
    with tempfile.TemporaryDirectory(prefix="memlab-ray-bench-") as tmp:
        work = Path(tmp)
        # the ONNX export is made once, in the user cache, before any mode is timed
        from memlab.embed.onnx import OnnxEmbedder

        OnnxEmbedder().embed_documents(["export the graph once"])
        scale = scaling(kind, work)
    print_table(scale["rows"], columns(scale["rows"]))
    log("sizes")
    sizes, samples = sizes_and_samples()
    rate = rates(samples, 16 if args.quick else 64)
    rate["LongMemEval-S/turn"] = rate["BEAM/turn"]
    rate["LongMemEval-S/chunk"] = rate["BEAM/chunk"]
    print_table([{"texts": k, **{n: v[n] for n in EMBEDDERS}} for k, v in rate.items()])
    two = next(r for r in scale["rows"] if r["mode"] == "ray-2")
    fixed = {
        "cluster_start_s": two["cluster start s"],
        "overhead_per_task_s": two["overhead per task ms"] / 1000,
        "model_load_s": two["embed fixed s"],
    }
    cost = cost_model(sizes, rate, fixed, [WORKERS_PER_NODE, NODES * WORKERS_PER_NODE])
    print_table(cost, columns(cost))
    report(
        "ray_eval",
        args,
        {
            "dataset": kind,
            "systems": list(SYSTEMS),
            "metrics": METRICS,
            "embedder": "local (onnx fp32)",
            "unit": "turn",
            "sizes": sizes,
            "fixed": fixed,
            "nodes": NODES,
            "workers_per_node": WORKERS_PER_NODE,
        },
        {"scaling": scale, "rates": rate, "cost": cost},
    )


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """Every key of the rows, in order of first appearance (rows may lack some)."""
    return list(dict.fromkeys(k for r in rows for k in r))


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
