"""Embedding throughput of the packaged all-MiniLM-L6-v2 per backend (docs/benchmarks.md §11).

1. Throughput. 1600-character chunks (synthetic note lines cut by OpenClaw's chunker at its
   defaults, as in ``index_throughput.py``) and short one-line notes are embedded by every
   backend with one ``embed_documents`` call: ``torch`` (sentence-transformers, the
   current path), ``onnx`` (fp32; one session with 2 intra-op threads, or 2 sessions of
   1 thread running different batches) and ``onnx-int8`` (dynamically quantised). The
   backends take turns within each repeat (so a busy neighbour slows them alike); docs/s
   is the median over repeats and every ratio is against torch in the same run. Each
   backend's vectors are compared with torch's (minimum cosine over the texts).
2. Where the time goes (onnx fp32, the long chunks): tokenisation alone, one batch's
   session run with 1 and 2 threads, mean pooling, the padding a batch carries with and
   without length sorting, and the arithmetic rate each backend reaches (the matrix
   products of 6 layers at the batch's sequence length, counted exactly).
3. ``--locomo PATH``: LoCoMo at turn level through memlab's lab (``Lab` with ``cache_vectors=True``` +
   ``run_experiment``, the code behind ``memlab eval``), preset ``vector``, each backend
   in its own index folder under the benchmark cache (so onnx embeds every turn itself
   instead of reusing torch's vectors): queries whose top-10 differ from torch's, and
   recall@5 / recall@10. The indexes are cached; a second run embeds nothing.

Full: 48 long chunks, 256 short lines, 3 repeats. ``--quick``: 24 long chunks, 128 short
lines, 1 repeat, no LoCoMo.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import cache_dir, log, note_lines, parser, print_table, report, stats

# The backends compared: label → (resolve_embedder backend, OnnxEmbedder keyword arguments).
BACKENDS: dict[str, tuple[str, dict[str, Any]]] = {
    "torch": ("torch", {}),
    # one session of 2 threads, stated: the OnnxEmbedder default became 2 sessions × 1 thread
    "onnx": ("onnx", {"sessions": 1}),
    "onnx, 2 sessions × 1 thread": ("onnx", {"sessions": 2}),
    "onnx-int8": ("onnx-int8", {"sessions": 1}),
    "onnx-int8, 2 sessions × 1 thread": ("onnx-int8", {"sessions": 2}),
}
# all-MiniLM-L6-v2: 6 layers, width 384, feed-forward 1536.
LAYERS, WIDTH, FFN = 6, 384, 1536


def long_chunks(n: int, seed: int = 0) -> list[str]:
    """``n`` chunks of OpenClaw's default chunker (400 tokens / 1600 characters) over
    daily logs of 64 synthetic note lines each."""
    from memlab.chunking import ChunkerConfig

    chunker = ChunkerConfig()
    out: list[str] = []
    lines = note_lines(n * 20, seed)
    for f in range(0, len(lines), 64):
        body = "# log\n\n" + "".join(f"- {t}\n" for t in lines[f : f + 64])
        out += [c.text for c in chunker.chunk(body)]
        if len(out) >= n:
            break
    return out[:n]


def matmul_flops(seq_lengths: list[int]) -> float:
    """Floating-point operations of the encoder's matrix products for texts of these
    lengths: per layer and text of length L, 2·L·(4·d² + 2·d·f) for the projections and
    the feed-forward plus 2·2·L²·d for the attention scores and their weighted sum."""
    total = 0.0
    for n in seq_lengths:
        total += LAYERS * (2 * n * (4 * WIDTH * WIDTH + 2 * WIDTH * FFN) + 4 * n * n * WIDTH)
    return total


def make(label: str) -> Any:
    """The embedder of a backend label (torch: sentence-transformers, batch 32)."""
    from memlab.embed import OnnxEmbedder, SentenceTransformerEmbedder

    backend, kw = BACKENDS[label]
    if backend == "torch":
        return SentenceTransformerEmbedder(show_progress=False)
    return OnnxEmbedder(precision="int8" if backend == "onnx-int8" else "fp32", **kw)


def throughput(sets: dict[str, list[str]], repeats: int) -> dict[str, Any]:
    """docs/s of every backend on every text set, taking turns within each repeat."""
    embs = {label: make(label) for label in BACKENDS}
    for label, emb in embs.items():  # untimed: loads, exports, quantises, warms up
        t = time.perf_counter()
        emb.embed_documents(sets["long"][:4])
        log(f"{label}: ready in {time.perf_counter() - t:.1f} s")
    vecs = {
        (label, s): embs[label].embed_documents(texts)
        for label in embs
        for s, texts in sets.items()
    }
    rates: dict[tuple[str, str], list[float]] = {(la, s): [] for la in embs for s in sets}
    for r in range(repeats):
        for s, texts in sets.items():
            for label, emb in embs.items():
                t = time.perf_counter()
                emb.embed_documents(texts)
                rates[(label, s)].append(len(texts) / (time.perf_counter() - t))
        log(f"repeat {r + 1}/{repeats} done")
    out: dict[str, Any] = {}
    for label in embs:
        row: dict[str, Any] = {}
        for s in sets:
            ref = vecs[("torch", s)]
            cos = (vecs[(label, s)] * ref).sum(axis=1)
            row[s] = {
                "docs_per_s": stats(rates[(label, s)]),
                "over_torch": stats(
                    [a / b for a, b in zip(rates[(label, s)], rates[("torch", s)], strict=True)]
                ),
                "min_cosine_to_torch": float(cos.min()),
            }
        out[label] = row
    return out


def where_time_goes(texts: list[str], batch: int, repeats: int) -> dict[str, Any]:
    """Stage timings of the onnx fp32 path on ``texts`` (see the module docstring)."""
    from memlab.embed.onnxexport import quiet_onnxruntime

    quiet_onnxruntime()
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from memlab.embed import OnnxEmbedder
    from memlab.embed.onnx import mean_pool

    emb = OnnxEmbedder()
    tok = Tokenizer.from_file(str(emb.model_path / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=emb.max_seq_length)
    t_tok = min(_timed(lambda: tok.encode_batch(texts)) for _ in range(repeats))
    encs = tok.encode_batch(texts[:batch])
    width = max(len(e.ids) for e in encs)
    ids = np.zeros((len(encs), width), dtype=np.int64)
    for i, e in enumerate(encs):
        ids[i, : len(e.ids)] = e.ids
    mask = (ids != 0).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    run_s: dict[str, float] = {}
    hidden = None
    for threads in (1, 2):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        sess = ort.InferenceSession(str(emb.graph_file()), opts, providers=["CPUExecutionProvider"])
        names = {i.name for i in sess.get_inputs()}
        f = {k: v for k, v in feeds.items() if k in names}
        hidden = sess.run(None, f)[0]
        run_s[str(threads)] = min(
            _timed(lambda s=sess, f=f: s.run(None, f)) for _ in range(repeats)
        )
    t_pool = min(_timed(lambda: mean_pool(hidden, mask)) for _ in range(repeats))
    flops = matmul_flops([width] * len(encs))
    return {
        "texts": len(texts),
        "batch": len(encs),
        "seq_length": width,
        "untruncated_word_pieces_mean": float(np.mean(emb.token_counts(texts))),
        "tokenise_ms_per_doc": t_tok / len(texts) * 1000,
        "session_ms_per_doc": {k: v / len(encs) * 1000 for k, v in run_s.items()},
        "two_threads_speedup": run_s["1"] / run_s["2"],
        "pool_ms_per_doc": t_pool / len(encs) * 1000,
        "matmul_gflop_per_doc": flops / len(encs) / 1e9,
        "gflops_per_s": {k: flops / v / 1e9 for k, v in run_s.items()},
    }


def padding(texts: list[str], batch: int) -> dict[str, float]:
    """Share of padded positions in the batches of ``texts``: in input order and sorted by
    word-piece count (what the onnx path does)."""
    from memlab.embed import OnnxEmbedder

    emb = OnnxEmbedder()
    n = [min(c, emb.max_seq_length) for c in emb.token_counts(texts)]

    def share(lengths: list[int]) -> float:
        cells = sum(
            max(lengths[s : s + batch]) * len(lengths[s : s + batch])
            for s in range(0, len(lengths), batch)
        )
        return 1.0 - sum(lengths) / cells

    return {"input_order": share(n), "length_sorted": share(sorted(n, reverse=True))}


def _timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def locomo(path: str) -> dict[str, Any]:
    """LoCoMo turn level, preset ``vector``: top-10 agreement with torch and recall per
    backend (each backend on its own cached index folder)."""
    from memlab.datasets.locomo import load_locomo
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.pipeline.presets import preset

    ds = load_locomo(path)
    tops: dict[str, dict[str, list[tuple[str, int]]]] = {}
    out: dict[str, Any] = {"dataset": ds.name, "queries": len(ds.queries)}
    for label in ("torch", "onnx", "onnx-int8"):
        emb = make(label)
        folder = cache_dir() / f"embed-locomo-turn-{label}"
        lab = Lab(
            ds, cache_vectors=True, embedder=emb, unit="turn", index_dir=folder, progress=False
        )
        t = time.perf_counter()
        res = run_experiment([preset("vector")], lab, ["recall@5", "recall@10"], keep_runs=True)
        seconds = time.perf_counter() - t
        means = res.means().iloc[0]
        runs = res.runs.sort_values(["qid", "rank"])
        tops[label] = {
            str(q): list(zip(g["path"], g["start_line"].astype(int), strict=True))[:10]
            for q, g in runs.groupby("qid", sort=False)
        }
        out[label] = {
            "recall@5": float(means["recall@5"]),
            "recall@10": float(means["recall@10"]),
            "seconds": seconds,
            "index_dir": str(folder),
        }
        log(f"locomo {label}: {out[label]}")
    for label in ("onnx", "onnx-int8"):
        qids = set(tops["torch"]) | set(tops[label])
        a, b = tops["torch"], tops[label]
        out[label]["top10_differ_from_torch"] = sum(a.get(q) != b.get(q) for q in qids)
        out[label]["top10_sets_differ_from_torch"] = sum(
            set(a.get(q, [])) != set(b.get(q, [])) for q in qids
        )
        out[label]["top10_mean_overlap_with_torch"] = float(
            np.mean([len(set(a.get(q, [])) & set(b.get(q, []))) for q in qids])
        )
        out[label]["top1_same_as_torch"] = float(
            np.mean([a.get(q, [None])[:1] == b.get(q, [None])[:1] for q in qids])
        )
    for m in ("recall@5", "recall@10"):
        out["onnx-int8"][f"{m}_minus_fp32"] = out["onnx-int8"][m] - out["onnx"][m]
    return out


def main() -> int:
    p = parser(__doc__.splitlines()[0], "embed_throughput")
    p.add_argument("--locomo", metavar="PATH", help="LoCoMo JSON (locomo-dev.json): part 3")
    args = p.parse_args()
    quick = args.quick
    reps = args.repeats or (1 if quick else 3)
    sets = {
        "long": long_chunks(24 if quick else 48),
        "short": note_lines(128 if quick else 256, seed=1),
    }
    log(
        f"{len(sets['long'])} long chunks (mean {np.mean([len(t) for t in sets['long']]):.0f} chars), {len(sets['short'])} short lines"
    )
    results: dict[str, Any] = {"throughput": throughput(sets, reps)}
    results["stages"] = where_time_goes(sets["long"], 32, max(reps, 3))
    results["padding"] = {s: padding(texts, 32) for s, texts in sets.items()}
    import torch

    results["torch_threads"] = torch.get_num_threads()
    from memlab.embed import OnnxEmbedder

    # What the encoder multiplies per long chunk (each truncated at 256 word pieces).
    limit = OnnxEmbedder().max_seq_length
    lengths = [min(c, limit) for c in OnnxEmbedder().token_counts(sets["long"])]
    per_doc = matmul_flops(lengths) / len(lengths)
    for row in results["throughput"].values():
        row["long"]["gflops_per_s"] = per_doc * row["long"]["docs_per_s"]["median"] / 1e9
    print_table(
        [
            {
                "backend": label,
                **{f"{s} docs/s": row[s]["docs_per_s"]["median"] for s in sets},
                **{f"{s} × torch": row[s]["over_torch"]["median"] for s in sets},
                "min cos": min(row[s]["min_cosine_to_torch"] for s in sets),
            }
            for label, row in results["throughput"].items()
        ]
    )
    print(results["stages"])
    inputs = {
        "long_chunks": len(sets["long"]),
        "long_mean_chars": float(np.mean([len(t) for t in sets["long"]])),
        "short_lines": len(sets["short"]),
        "short_mean_chars": float(np.mean([len(t) for t in sets["short"]])),
        "repeats": reps,
        "batch_size": 32,
        "locomo": args.locomo,
    }
    report("embed_throughput", args, inputs, results)
    if args.locomo and not quick:
        # Written again with part 3: a failure there keeps parts 1–2 on disk.
        results["locomo"] = locomo(args.locomo)
        print(results["locomo"])
        report("embed_throughput", args, inputs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
