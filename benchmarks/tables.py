"""Markdown tables for docs/benchmarks.md, and the Results page, from the committed benchmark JSON.

    python benchmarks/tables.py                 # every table, from benchmarks/results/*.json
    python benchmarks/tables.py search memory   # some of them
    python benchmarks/tables.py --update docs/benchmarks.md   # refresh the doc's tables
    python benchmarks/tables.py --results docs/results.md     # write the Results page

``--update`` rewrites every block between ``<!-- table:NAME -->`` and
``<!-- /table -->`` in the file with the current table NAME (the CI test
``test_doc_tables_match_results`` fails when the doc and the JSON disagree).
``--results`` writes the whole Results page (``benchmarks/results_page.py``: every
benchmark's current figures, the headline quality tables with their CIs and the spread
over groups; ``test_results_page_matches_results`` fails when the committed page differs).

Tables: ``sweep`` (sweep_speed.json); ``search``, ``legs``, ``ann`` and
``memory`` (search_latency.json); ``index`` and ``incremental``
(index_throughput.json); ``quality`` and ``qualityconv`` (baseline.json: the synthetic
corpora, the conversation dev sets); ``qualityid`` and ``qualitymix`` (baseline.json: the
synthetic query mix, identifier recall@1 / mrr on every corpus and embedder, keyword and
dated recall@1 / recall@6 with the local model); ``embed`` and ``embedlocomo``
(embed_throughput.json); ``cold`` and ``imports`` (cold_search.json); ``mcp``
(mcp_latency.json); ``mcpload`` (mcp_load.json); ``ray``, ``rayrates`` and ``raycost``
(ray_eval.json). A table whose figures are missing
from its JSON (e.g. written by an older script) is an error. Figures are
medians over repeats, with [min–max] where a table has room; the JSON has
every repeat's summary and the machine they were measured on.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: `benchmarks.quality` below
    sys.path.insert(0, str(REPO))
RESULTS = REPO / "benchmarks" / "results"

from benchmarks._common import markdown_table  # noqa: E402


def _load(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json" if name != "baseline" else REPO / "benchmarks" / "baseline.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _num(x: float | None, digits: int = 3) -> str:
    """A figure: thousands separators from 100 up, else ``digits`` significant digits; '—' for None/NaN."""
    if x is None or x != x:
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _med(d: dict[str, Any] | None, key: str = "p50_ms") -> float | None:
    if not d or key not in d:
        return None
    return float(d[key]["median"])


def _chunks(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def _span(d: dict[str, Any]) -> str:
    return f"{_num(d['median'])} [{_num(d['min'])}–{_num(d['max'])}]"


def sweep() -> str:
    """Seconds per sweep and the factor each alternative is slower than the fast path."""
    d = _load("sweep_speed")["results"]
    rr = d.get("rerun")
    rows = []
    grids = (
        ("wsum, 101 settings", d["wsum"], "ranx_seconds", "ranx_seconds_per_101", "settings"),
        (
            "RRF, 10 k × 10 weights",
            d["rrf"],
            "ranx_seconds_k_only",
            "ranx_seconds_per_100",
            "RRF k only, × 10 to 100 settings",
        ),
    )
    for label, g, ranx, ranx_scaled, ranx_what in grids:
        fast = g["memlab_fast_seconds"]["median"]
        rows += [
            [label, "**memlab fast path**", _span(g["memlab_fast_seconds"]), "1"],
            [
                "",
                "memlab, one setting at a time (`LabCandidates.score`)",
                _span(g["memlab_loop_seconds"]),
                _num(g["memlab_loop_seconds"]["median"] / fast),
            ],
        ]
        if ranx in g:
            what = f"{g['ranx_settings']} {ranx_what}"
            rows.append(
                [
                    "",
                    f"ranx `optimize_fusion` ({what})",
                    _span(g[ranx]),
                    _num(g[ranx_scaled] / fast),
                ]
            )
    if rr:
        per = rr["per_setting_seconds"]["median"]
        fast = rr["fast_101_seconds"]["median"]
        rows += [
            [
                f"wsum, 101 settings, {rr['dataset']}, {rr['queries']} queries",
                "re-running the search per setting (both legs through the index, then ranking)",
                f"{_num(per)} per setting → {_num(per * 101)}",
                _num(per * 101 / fast),
            ],
            ["", "**memlab fast path**", _span(rr["fast_101_seconds"]), "1"],
        ]
    return markdown_table(["sweep", "system", "seconds median [min–max]", "× the fast path"], rows)


def search() -> str:
    """Hybrid search p50 per size: bound, memlab exact / IVF, OpenClaw's path, speed-ups."""
    rows = []
    for r in _load("search_latency")["results"]["sizes"]:
        ivf = r.get("ivf", {})
        rows.append(
            [
                _chunks(r["chunks"]),
                _num(r["bandwidth"]["bound_ms"]),
                _num(_med(r["memlab_exact"])),
                _num(r["memlab_exact"]["over_bound"], 2),
                _num(_med(r.get("memlab_ivf"))),
                f"{ivf['nprobe']} / {_num(ivf.get('recall_at_10'))}" if ivf.get("nprobe") else "—",
                _num(_med(r["openclaw"])),
                _num(r["openclaw_bare_ms"]),
                _num(r["speedup_exact_vs_openclaw"]),
                _num(r["speedup_exact_vs_bare_scan"]),
                _num(r.get("speedup_ivf_vs_openclaw")),
            ]
        )
    return markdown_table(
        [
            "chunks",
            "bound ms",
            "memlab exact p50 ms",
            "exact / bound",
            "memlab IVF p50 ms",
            "IVF nprobe / recall@10",
            "OpenClaw pinned p50 ms",
            "FTS5 + bare scan ms",
            "exact × faster than OpenClaw",
            "× than bare",
            "IVF × faster than OpenClaw",
        ],
        rows,
    )


def legs() -> str:
    """Each leg alone, p50 / p95 and batch throughput."""
    rows = []
    for r in _load("search_latency")["results"]["sizes"]:
        rows.append(
            [
                _chunks(r["chunks"]),
                _num(_med(r["keyword_fts5_and"])),
                f"{_num(_med(r['vector_exact']))} / {_num(_med(r['vector_exact'], 'p95_ms'))}",
                f"{_num(_med(r['memlab_exact']))} / {_num(_med(r['memlab_exact'], 'p95_ms'))}",
                _num(_med(r.get("memlab_exact_serial_legs"))),
                _num(r["vector_exact_batch_qps"]),
                _num(r["memlab_exact_batch_qps"]),
                _num(_med(r.get("openclaw_vector"))),
                _num(_med(r.get("sqlite_vec_bare_scan"))),
            ]
        )
    return markdown_table(
        [
            "chunks",
            "FTS5 AND leg p50 ms",
            "exact vector leg p50 / p95 ms",
            "exact hybrid p50 / p95 ms",
            "same, legs in turn p50 ms",
            "vector leg batch q/s",
            "hybrid batch q/s",
            "sqlite-vec query p50 ms",
            "sqlite-vec bare scan p50 ms",
        ],
        rows,
    )


def ann() -> str:
    """Approximate and quantised engines: recall@10 against exact and vector-leg p50."""
    rows = []
    for r in _load("search_latency")["results"]["sizes"]:
        for kind in ("sq8", "fp16"):
            q = r.get(kind)
            if q:
                rows.append(
                    [_chunks(r["chunks"]), kind, _num(q.get("recall_at_10")), _num(_med(q)), "—"]
                )
        for s in r.get("ivf", {}).get("sweep", []):
            rows.append(
                [
                    _chunks(r["chunks"]),
                    f"ivf nprobe {s['nprobe']}",
                    _num(s["recall_at_10"]),
                    _num(s["p50_ms"]),
                    _num(r["ivf"]["build_seconds"]),
                ]
            )
        for s in r.get("hnsw", {}).get("sweep", []):
            rows.append(
                [
                    _chunks(r["chunks"]),
                    f"hnsw ef {s['ef_search']}",
                    _num(s["recall_at_10"]),
                    _num(s["p50_ms"]),
                    _num(r["hnsw"]["build_seconds"]),
                ]
            )
    return markdown_table(
        ["chunks", "engine", "recall@10 vs exact", "vector leg p50 ms", "build s"], rows
    )


def memory() -> str:
    """Peak RSS of a process serving searches against raw vector + FTS bytes."""
    rows = []
    for m in _load("search_latency")["results"]["memory"]:
        rows.append(
            [
                _chunks(m["chunks"]),
                _num(m["vector_mb"]),
                _num(m["fts_mb"]),
                _num(m["db_file_mb"]),
                _num(m["peak_rss_mb"] - m["baseline_rss_mb"]),
                _num(m["limit_mb"]),
                _num(m["peak_over_limit"], 2),
            ]
        )
    return markdown_table(
        [
            "chunks",
            "vectors MiB",
            "FTS index MiB",
            "SQLite file MiB",
            "peak RSS − start-up MiB",
            "limit 1.5 × (vectors + FTS) MiB",
            "peak / limit",
        ],
        rows,
    )


def index() -> str:
    """Indexing throughput against the embedder alone, and the incremental sync."""
    d = _load("index_throughput")["results"]
    rows = []
    for key in ("throughput_local", "throughput_hashing"):
        t = d[key]
        rows.append(
            [
                t["embedder"],
                f"{t['chunks']:,}",
                _num(t["raw_chunks_per_s"]["median"]),
                _num(t["sync_chunks_per_s"]["median"]),
                f"{_num(t['ratio']['median'])} [{_num(t['ratio']['min'])}–{_num(t['ratio']['max'])}]",
            ]
        )
    return markdown_table(
        ["embedder", "chunks", "embedder alone chunks/s", "`sync` chunks/s", "sync / raw"], rows
    )


def incremental() -> str:
    """The one-line append to a 10,000-chunk index."""
    d = _load("index_throughput")["results"]["incremental"]
    rows = []
    for key, label in (
        ("noop_sync_seconds", "nothing changed"),
        ("append_sync_seconds", "one line appended"),
    ):
        s = d[key]
        rows.append([label, f"{_num(s['median'])} [{_num(s['min'])}–{_num(s['max'])}]"])
    return markdown_table(["sync after", "seconds median [min–max]"], rows)


def quality(conversations: bool = False) -> str:
    """recall@10 / ndcg@10 of every preset per committed corpus and embedder, or with
    ``conversations`` per whole conversation dev set
    (``benchmarks.quality.FULL_CONVERSATION_SETS``; their small configurations, which CI
    guards, are left out), unit and embedder; keys in the baseline's order."""
    from benchmarks.quality import CONVERSATION_SETS, FULL_CONVERSATION_SETS

    figs = _load("baseline")["figures"]
    name = lambda k: k.split("/")[0]  # noqa: E731
    keys = [
        k
        for k in figs
        if (
            name(k) in FULL_CONVERSATION_SETS if conversations else name(k) not in CONVERSATION_SETS
        )
    ]
    presets = list(dict.fromkeys(p for k in keys for p in figs[k]))
    rows = []
    for p in presets:
        row = [f"`{p}`"]
        for k in keys:
            v = figs[k].get(p)
            row.append(f"{v['recall@10']:.3f} / {v['ndcg@10']:.3f}" if v else "—")
        rows.append(row)
    return markdown_table(["preset", *[k.replace("/", " · ") for k in keys]], rows)


def quality_mix(
    categories: Sequence[str], metrics: tuple[str, str], embedder: str | None = None
) -> str:
    """``metrics[0] / metrics[1]`` of every preset on the synthetic query-mix
    ``categories`` (baseline.json's per-preset ``"categories"``), one column per data set
    with such figures (only ``embedder``'s when given) and category; keys in the
    baseline's order."""
    figs = _load("baseline")["figures"]
    keys = [
        k
        for k in figs
        if any("categories" in v for v in figs[k].values())
        and (embedder is None or k.split("/")[1] == embedder)
    ]
    presets = list(dict.fromkeys(p for k in keys for p in figs[k]))
    rows = []
    for p in presets:
        row = [f"`{p}`"]
        for k in keys:
            for c in categories:
                v = figs[k].get(p, {}).get("categories", {}).get(c)
                row.append(f"{v[metrics[0]]:.2f} / {v[metrics[1]]:.2f}" if v else "—")
        rows.append(row)
    header = [
        " · ".join([*k.split("/")[:2], *([c] if len(categories) > 1 else [])])
        for k in keys
        for c in categories
    ]
    return markdown_table(["preset", *header], rows)


def cold() -> str:
    """Cold `memlab search` per local backend: seconds, peak RSS, × the onnx path."""
    d = _load("cold_search")["results"]["search"]
    onnx = d["backends"]["onnx"]["seconds"]["median"]
    rows = []
    for b in ("torch", "onnx"):
        r = d["backends"][b]
        rows.append(
            [
                f"`--local-backend {b}`",
                _span(r["seconds"]),
                _num(r["rss_mb"]["median"]),
                _num(r["seconds"]["median"] / onnx),
                ", ".join(r["heavy_modules"]) or "none",
            ]
        )
    ws = d["workspace"]
    caption = f"{ws['chunks']:,} chunks, {d['rounds']} runs each, same results {d['same_results']}/{d['rounds']}"
    return markdown_table(
        [
            f"backend ({caption})",
            "seconds median [min–max]",
            "peak RSS MiB",
            "× onnx",
            "heavy modules imported",
        ],
        rows,
    )


def imports() -> str:
    """Fresh-interpreter start-up: bare Python, `import memlab`, `memlab --help`."""
    d = _load("cold_search")["results"]["import"]
    rows = [
        ["`python -c pass`", _span(d["python_startup_seconds"]), "—"],
        [
            "`python -c 'import memlab'`",
            _span(d["import_memlab_seconds"]),
            ", ".join(d["heavy_after_import"]) or "none",
        ],
        [
            "`memlab --help`",
            _span(d["memlab_help_seconds"]),
            ", ".join(d["help_heavy_modules"]) or "none",
        ],
    ]
    return markdown_table(
        [f"command ({d['runs']} runs)", "seconds median [min–max]", "heavy modules"], rows
    )


def mcp() -> str:
    """`memory_search` through the warm stdio server: latency percentiles."""
    d = _load("mcp_latency")["results"]
    lat, emb = d["latency"], d["embed_query_alone"]
    rows = [
        [
            f"{d['server_chunks']:,}",
            str(lat["n"]),
            _num(lat["p50_ms"]),
            _num(lat["p90_ms"]),
            _num(lat["p99_ms"]),
            _num(lat["max_ms"]),
            _num(emb["p50_ms"]),
            _num(d["startup_to_first_answer_seconds"]),
        ]
    ]
    return markdown_table(
        [
            "chunks",
            "calls",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "query embedding alone p50 ms",
            "spawn → first answer s",
        ],
        rows,
    )


def mcpload() -> str:
    """The HTTP server under concurrent clients and a writer: errors, lost lines, latency."""
    doc = _load("mcp_load")
    d, i = doc["results"], doc["inputs"]
    lat = d["latency"]
    rows = [
        [
            f"{i['clients']} × {_num(i['seconds'])} s",
            f"{d['index_chunks']:,}",
            f"{d['calls']:,}",
            _num(d["throughput_per_s"]),
            str(d["errors"]),
            _num(lat["p50_ms"]),
            _num(lat["p99_ms"]),
            f"{d['lines_appended']} (1 per {_num(i['append_every_seconds'])} s)",
            str(d["lines_lost"]),
            _num(d["catch_up_seconds"]),
        ]
    ]
    return markdown_table(
        [
            "clients × duration",
            "chunks",
            "calls",
            "calls/s",
            "errors",
            "p50 ms",
            "p99 ms",
            "lines appended",
            "lines lost",
            "catch-up s",
        ],
        rows,
    )


def embed() -> str:
    """Embedding throughput per local backend, side by side in one run (embed_throughput.json)."""
    d = _load("embed_throughput")["results"]["throughput"]
    rows = []
    for label, r in d.items():
        rows.append(
            [
                f"`{label}`",
                _span(r["long"]["docs_per_s"]),
                _num(r["long"]["over_torch"]["median"]),
                _span(r["short"]["docs_per_s"]),
                _num(r["short"]["over_torch"]["median"]),
                f"{min(r['long']['min_cosine_to_torch'], r['short']['min_cosine_to_torch']):.4f}",
                _num(r["long"]["gflops_per_s"]),
            ]
        )
    return markdown_table(
        [
            "backend",
            "1600-char chunks docs/s",
            "× torch",
            "short lines docs/s",
            "× torch",
            "min cosine to torch",
            "GFLOP/s (chunks)",
        ],
        rows,
    )


def embedlocomo() -> str:
    """LoCoMo turn level, preset `vector`, per local backend (embed_throughput.json)."""
    d = _load("embed_throughput")["results"]["locomo"]
    rows = []
    for label in ("torch", "onnx", "onnx-int8"):
        r = d[label]
        rows.append(
            [
                f"`{label}`",
                f"{r['recall@5']:.4f}",
                f"{r['recall@10']:.4f}",
                str(r.get("top10_differ_from_torch", "—")),
                str(r.get("top10_sets_differ_from_torch", "—")),
            ]
        )
    return markdown_table(
        [
            f"backend ({d['queries']} queries)",
            "recall@5",
            "recall@10",
            "top-10 lists ≠ torch",
            "top-10 sets ≠ torch",
        ],
        rows,
    )


def ray() -> str:
    """Local vs `--ray local` with 1 and 2 workers, one cold run each (ray_eval.json)."""
    d = _load("ray_eval")["results"]["scaling"]["rows"]
    rows = []
    for r in d:
        ray_run = "tasks" in r
        rows.append(
            [
                f"`{r['mode']}`",
                _num(r["seconds"]),
                _num(r["speed-up"]),
                "yes" if r["same values"] else "**no**",
                _num(r.get("cluster start s")) if ray_run else "—",
                _num(r.get("embed step s")) if ray_run else "—",
                _num(r.get("embed fixed s")) if ray_run else "—",
                _num(r.get("actor texts/s")) if ray_run else "—",
                _num(r.get("empty task ms")) if ray_run else "—",
                _num(r.get("overhead per task ms")) if ray_run else "—",
                _num(r["driver peak MiB"]),
                _num(r.get("worker peak MiB")) if ray_run else "—",
                _num(r.get("actor peak MiB")) if ray_run else "—",
            ]
        )
    return markdown_table(
        [
            "mode",
            "seconds",
            "× local",
            "same per-question values",
            "cluster start s",
            "embedding step s",
            "of which not embedding s",
            "texts/s per actor",
            "empty task ms",
            "overhead per task ms",
            "driver peak MiB",
            "task worker peak MiB",
            "actor peak MiB",
        ],
        rows,
    )


def rayrates() -> str:
    """Unique texts per data set and unit, and each embedder's rate on one thread (one Ray
    actor of one CPU) over a sample of them (ray_eval.json)."""
    doc = _load("ray_eval")
    sizes = doc["inputs"]["sizes"]
    rate = doc["results"]["rates"]
    names = ("onnx", "onnx-int8", "torch", "hashing")
    rows = []
    for key, r in rate.items():
        ds, unit = key.rsplit("/", 1)
        src = "BEAM's rates" if ds == "LongMemEval-S" else "its own"
        rows.append([ds, unit, _num(sizes[ds][unit]), src, *(_num(r[n]) for n in names)])
    return markdown_table(
        ["data set", "unit", "unique texts", "texts timed", *(f"`{n}` texts/s" for n in names)],
        rows,
    )


def raycost() -> str:
    """The study's embedding cost: CPU hours per data set, unit and embedder, and the study's
    wall hours on one machine (2 workers) and on 16 such nodes (ray_eval.json)."""
    d = _load("ray_eval")["results"]["cost"]
    names = ("onnx", "onnx-int8", "torch", "hashing")
    rows = []
    for r in d:
        study = r["unit"] == "both"
        rows.append(
            [
                f"**{r['data set']}**" if study else r["data set"],
                r["unit"],
                _num(r["texts"]),
                *(_num(r[f"{n} CPU h"]) for n in names),
                _num(r["wall h"]) if study else "",
            ]
        )
    return markdown_table(
        ["", "unit", "texts", *(f"`{n}` h" for n in names), "all four, wall h"], rows
    )


TABLES: dict[str, Callable[[], str]] = {
    "sweep": sweep,
    "search": search,
    "legs": legs,
    "ann": ann,
    "memory": memory,
    "index": index,
    "incremental": incremental,
    "quality": quality,
    "qualityconv": lambda: quality(conversations=True),
    "qualityid": lambda: quality_mix(("identifier",), ("recall@1", "mrr")),
    "qualitymix": lambda: quality_mix(("keyword", "dated"), ("recall@1", "recall@6"), "local"),
    "embed": embed,
    "embedlocomo": embedlocomo,
    "cold": cold,
    "imports": imports,
    "mcp": mcp,
    "mcpload": mcpload,
    "ray": ray,
    "rayrates": rayrates,
    "raycost": raycost,
}


BLOCK = re.compile(r"(<!-- table:(\w+) -->\n)(.*?)(<!-- /table -->)", re.S)


def render_blocks(text: str) -> str:
    """``text`` with every ``<!-- table:NAME -->`` … ``<!-- /table -->`` block re-rendered."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r} in a table block")
        return f"{m.group(1)}{TABLES[name]()}\n{m.group(4)}"

    return BLOCK.sub(sub, text)


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if args[:1] == ["--results"]:
        if len(args) != 2:
            print("usage: tables.py --results FILE.md", file=sys.stderr)
            return 2
        from benchmarks import results_page

        try:
            results_page.write(Path(args[1]))
        except (OSError, KeyError) as exc:
            print(f"{args[1]}: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {args[1]}")
        return 0
    if args[:1] == ["--update"]:
        if len(args) != 2:
            print("usage: tables.py --update FILE.md", file=sys.stderr)
            return 2
        path = Path(args[1])
        try:
            path.write_text(render_blocks(path.read_text(encoding="utf-8")), encoding="utf-8")
        except (OSError, KeyError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            return 1
        print(f"updated {path}")
        return 0
    names = args or list(TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        print(f"unknown table(s) {unknown}; choose from {', '.join(TABLES)}", file=sys.stderr)
        return 2
    status = 0
    for n in names:
        try:
            text = TABLES[n]()
        except (OSError, KeyError) as exc:
            print(f"{n}: figures missing ({exc!r}); rerun its benchmark", file=sys.stderr)
            status = 1
            continue
        print(f"<!-- {n} -->\n{text}\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
