"""docs/results.md, rendered from the committed benchmark JSON: every benchmark's current figure.

``python benchmarks/tables.py --results docs/results.md`` writes the page;
``tests/test_bench_guard.py::test_results_page_matches_results`` fails when the committed
page is not what the JSON renders, so the page cannot drift from what was measured.

What it holds, each with the date and commit its JSON records and the command that
reproduces it:

- **retrieval quality** (``headline_{locomo,beam,realmem}.json``, ``studies/headline.py``):
  every preset on each dev set, at one line per unit and at OpenClaw's chunks, on every
  slice the docs quote (all questions, the report halves of ``memlab.eval.protocol``):
  each mean with its 95 % bootstrap CI, a mark where it differs from ``bm25`` (paired
  t-test, Holm, p_adj ≤ 0.01) and the range of its groups' figures (conversations, chats,
  personas);
- **the pinned figures** (``baseline.json``, the CI guard's): recall@10 / nDCG@10 of every
  preset on the committed synthetic corpora and both dev sets, both embedders;
- **every other results file**: its key figures (``KEY_FIGURES``), date, commit, command.

A JSON written before the benchmarks recorded their date and commit carries both from git
(``"provenance"`` says so); the page marks those rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import markdown_table

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
BASELINE = REPO / "benchmarks" / "baseline.json"
HEADLINE = {
    "locomo": "LoCoMo dev (5 conversations between two named people)",
    "beam": "BEAM 100K chats 1–10 (user–assistant project chats)",
    "realmem": "RealMem dev (5 personas, project sessions, as of each query)",
}
UNITS = {"turn": "one line per unit", "chunk": "OpenClaw's ~400-token chunks"}
SLICES = {
    "all": "all questions",
    "report, by question": "report half of the question split (never chosen on)",
    "report, by conversation": "report half of the conversation split",
}
LABELS = {
    "recall@5": "R@5",
    "recall@6": "R@6",
    "recall@10": "R@10",
    "ndcg@10": "nDCG@10",
    "recall_any@5": "R_any@5",
    "recall_any@10": "R_any@10",
    "recall_any@20": "R_any@20",
    "recall_all@10": "R_all@10",
    "ndcg_jk@10": "nDCG@10 (RealMem's)",
}
GROUPS = {"locomo": "conversations", "beam": "chats", "realmem": "personas"}
ALPHA = 0.01
MARKED = "†"  # date and commit from git: written before the JSON recorded them


def load(path: Path) -> dict[str, Any]:
    """A committed JSON document."""
    return json.loads(path.read_text(encoding="utf-8"))


def stamp(doc: dict[str, Any]) -> str:
    """``DATE, commit SHORT`` of a results document (``†`` when taken from git)."""
    date = str(doc.get("date", "?"))[:10]
    commit = str(doc.get("commit", "?"))
    short = commit[:10] + ("-dirty" if commit.endswith("-dirty") else "")
    return f"{date}, commit `{short}`" + (MARKED if "provenance" in doc else "")


def command(doc: dict[str, Any], script_dir: str = "benchmarks") -> str:
    """The command that wrote a results document, as run from the repository's root."""
    cmd = str(doc.get("command", ""))
    return f"`python {script_dir}/{cmd}`" if cmd else "—"


# ------------------------------------------------------------------ retrieval quality
def cell(fig: dict[str, Any], best: bool, sign: str) -> str:
    """``mean±sign [low, high]``: ``sign`` ``+``/``−`` where it differs from bm25
    (``mark``); the mean bold when it is the best of its column."""
    mean, low, high = fig["mean"], fig["low"], fig["high"]
    if mean is None:
        return "—"
    text = f"**{mean:.3f}**" if best else f"{mean:.3f}"
    text += sign
    if low is not None and high is not None:
        text += f" [{low:.3f}, {high:.3f}]"
    return text


def spread(fig: dict[str, Any]) -> str:
    """The lowest and highest group figure, ``low–high`` (``—`` with one group)."""
    vals = [v for v in fig["groups"].values() if v is not None]
    if len(vals) < 2:
        return "—"
    return f"{min(vals):.3f}–{max(vals):.3f}"


def mark(fig: dict[str, Any], base: dict[str, Any]) -> str:
    """``+`` / ``−`` where the figure differs from the baseline row's at p_adj ≤ ``ALPHA``."""
    p = fig.get("p_adj")
    if p is None or fig["mean"] is None or base["mean"] is None or p > ALPHA:
        return ""
    return "+" if fig["mean"] > base["mean"] else "−"


def slice_table(
    rows: list[dict[str, Any]], metrics: Sequence[str], same: Sequence[Sequence[str]] = ()
) -> str:
    """One row per system: per metric its mean, CI and mark, then its group range. Systems
    of one group of ``same`` (the same ranking on every question) share one row, named
    ``a`` = ``b``: two rows would present one system twice."""
    base = next(r for r in rows if r["system"] == "bm25")
    best = {m: max(r[m]["mean"] for r in rows if r[m]["mean"] is not None) for m in metrics}
    alias = {g[0]: g for g in same}
    hidden = {n for g in same for n in g[1:]}
    out = []
    for r in rows:
        if r["system"] in hidden:
            continue
        line = [" = ".join(f"`{n}`" for n in alias.get(r["system"], [r["system"]]))]
        for m in metrics:
            f = r[m]
            line += [cell(f, f["mean"] == best[m], mark(f, base[m])), spread(f)]
        out.append(line)
    header = ["preset"]
    for m in metrics:
        header += [f"{LABELS.get(m, m)} [95 % CI]", "by group"]
    return markdown_table(header, out)


def headline_section(name: str, doc: dict[str, Any]) -> str:
    """One data set: where and how it was measured, then a table per unit and slice."""
    res = doc["results"]
    first = next(iter(res.values()))
    parts = [
        f"### {HEADLINE[name]}",
        "",
        f"Measured {stamp(doc)} with {first['model']}; {command(doc, 'studies')}. "
        f"`by group`: the lowest and highest figure among the slice's {GROUPS[name]}.",
    ]
    for unit, r in res.items():
        same = [g for g in r.get("identical_rankings", []) if len(g) > 1]
        for cut, s in r["slices"].items():
            parts += [
                "",
                f"**{UNITS[unit]}, {SLICES.get(cut, cut)}** ({s['n']} questions, "
                f"{len(s['groups'])} {GROUPS[name]})",
                "",
                slice_table(s["rows"], r["metrics"], same),
            ]
        if same:
            names = "; ".join(" = ".join(f"`{n}`" for n in g) for g in same)
            parts += [
                "",
                f"One row for systems with the same ranking on every question at this unit: {names}.",
            ]
    return "\n".join(parts)


# ------------------------------------------------------------------ pinned figures
def pinned() -> str:
    """recall@10 / nDCG@10 of every preset on the committed corpora, then on the whole
    conversation dev sets (``benchmarks.tables.quality``: the baseline's figures)."""
    from benchmarks.tables import quality

    return "\n\n".join([quality(), quality(conversations=True)])


# ------------------------------------------------------------------ other results files
def _median(d: dict[str, Any]) -> float:
    return float(d["median"])


def sweep_speed(r: dict[str, Any]) -> str:
    w = r["wsum"]
    fast = _median(w["memlab_fast_seconds"])
    ranx = w.get("ranx_seconds_per_101")
    return f"101-setting weighted-sum sweep, 1,000 queries: {fast:.3f} s" + (
        f" ({ranx / fast:.0f}× faster than ranx)" if ranx else ""
    )


def search_latency(r: dict[str, Any]) -> str:
    top = r["sizes"][-1]
    return (
        f"exact hybrid search at {top['chunks']:,} chunks: p50 "
        f"{_median(top['memlab_exact']['p50_ms']):.0f} ms (bound "
        f"{top['bandwidth']['bound_ms']:.0f} ms), {top['speedup_exact_vs_openclaw']:.0f}× "
        "OpenClaw's pinned path"
    )


def index_throughput(r: dict[str, Any]) -> str:
    return (
        f"sync / raw embedder throughput {_median(r['throughput_local']['ratio']):.2f} "
        f"(packaged model); one appended line re-synced in "
        f"{_median(r['incremental']['append_sync_seconds']):.2f} s at "
        f"{r['incremental']['chunks']:,} chunks"
    )


def cold_search(r: dict[str, Any]) -> str:
    b = r["search"]["backends"]
    return (
        f"`memlab search` cold, onnx {_median(b['onnx']['seconds']):.2f} s vs torch "
        f"{_median(b['torch']['seconds']):.2f} s; `import memlab` "
        f"{_median(r['import']['import_memlab_seconds']):.3f} s"
    )


def mcp_latency(r: dict[str, Any]) -> str:
    lat = r["latency"]
    return (
        f"`memory_search` through the warm MCP server at {r['server_chunks']:,} chunks: p50 "
        f"{lat['p50_ms']:.1f} ms, p99 {lat['p99_ms']:.1f} ms"
    )


def mcp_load(r: dict[str, Any]) -> str:
    return (
        f"{r['calls']:,} calls from 50 clients with a writer: {r['errors']} errors, "
        f"{r['lines_lost']} of {r['lines_appended']} lines lost, p99 "
        f"{r['latency']['p99_ms']:,.0f} ms (queueing)"
    )


def embed_throughput(r: dict[str, Any]) -> str:
    t = r["throughput"]
    rates = ", ".join(
        f"{k} {_median(v['long']['docs_per_s']):.2f}" for k, v in t.items() if "sessions" not in k
    )
    return f"1600-character chunks per second: {rates}"


def best_line_cost(r: dict[str, Any]) -> str:
    row = r["rows"][-1]
    return (
        f"{row['chunks']:,} chunks ({row['embedder']}): memlab-best-chunk "
        f"{row['ms_preset']:.1f} ms per query against {row['ms_chunk_unit']:.1f} ms for chunks "
        f"as units; a line view of {row['line_view_mb']:.0f} MB beside the "
        f"{row['chunk_index_mb']:.0f} MB chunk index"
    )


def harvest_speed(r: dict[str, Any]) -> str:
    row = r["rows"][0]
    return (
        f"{row['sessions']:,} sessions, {row['calls']:,} calls harvested in "
        f"{_median(row['seconds']):.1f} s"
    )


def learned_stage(r: dict[str, Any]) -> str:
    return (
        f"the learned stage adds {r['added_ms_median']:.2f} ms per query (max "
        f"{r['added_ms_max']:.2f}) at {r['chunks']:,} chunks"
    )


def ray_eval(r: dict[str, Any]) -> str:
    rows = r["scaling"]["rows"]
    return "LoCoMo turn level, cold: " + ", ".join(
        f"{x['mode']} {x['seconds']:.0f} s" for x in rows
    )


def identifier_rule(r: dict[str, Any]) -> str:
    rows = {x["variant"]: x for x in r["choice"]["rows"]}
    c = rows[r["choice"]["chosen"]]
    return (
        f"chosen: {r['choice']['chosen']} (identifier R@1 memlab-best "
        f"{c['memlab-best identifier R@1']:.2f}, memlab-best-chunk "
        f"{c['memlab-best-chunk identifier R@1']:.2f}; a match below a non-match in "
        f"{100 * c['a match sinks (share)']:.0f} % of questions)"
    )


def rank_agreement(r: dict[str, Any]) -> str:
    syn = r["synthetic_vs_real"]
    return (
        f"Kendall tau, synthetic-medium against the real sets: mean "
        f"{sum(syn.values()) / len(syn):.3f}; the real sets among themselves "
        f"{r['real_vs_real_mean']:.3f}"
    )


def realism_curve(r: dict[str, Any]) -> str:
    s = r["summary"]
    return (
        f"the curve's weight inside {s['inside']} of {s['groups']} dev groups' plateaus "
        f"(median tau {s['tau_median']:.2f}); corpora fitted with `--like`: "
        f"{s['like']['inside']} of {s['groups']}"
    )


def realmem_quality(r: dict[str, Any]) -> str:
    row = next(x for x in r["turn"]["table"] if x["system"] == "memlab-best")
    return f"memlab-best at one line per unit: R_any@10 {row['R_any@10']}, nDCG@10 {row['nDCG@10']}"


def flush_quality(r: dict[str, Any]) -> str:
    rows = r["realmem"]["tables"]

    def r10(memory: str, policy: str) -> str:
        x = next(
            t
            for t in rows
            if t["system"] == "memlab-best" and t["memory"] == memory and t["policy"] == policy
        )
        return str(x["R_any@10"])

    return (
        f"RealMem, memlab-best R_any@10: transcripts {r10('transcripts', 'extracted')}, "
        f"the flush's notes {r10('notes', 'extracted')}, both {r10('both', 'extracted')}"
    )


# name → (what it measures, the page that describes it, key figures)
KEY_FIGURES: dict[str, tuple[str, str, Callable[[dict[str, Any]], str]]] = {
    "sweep_speed": (
        "weight sweeps over cached candidates",
        "benchmarks.md#1-weight-sweeps-over-cached-candidates",
        sweep_speed,
    ),
    "search_latency": (
        "search latency, 1k to 1M chunks",
        "benchmarks.md#2-search-latency-1k-to-1m-chunks",
        search_latency,
    ),
    "index_throughput": (
        "indexing and incremental sync",
        "benchmarks.md#3-indexing-throughput-and-incremental-sync",
        index_throughput,
    ),
    "cold_search": (
        "a cold `memlab search`, onnx vs torch",
        "benchmarks.md#7-memlab-search-cold-end-to-end-onnx-against-torch",
        cold_search,
    ),
    "mcp_latency": (
        "the MCP server's latency",
        "benchmarks.md#9-memory_search-through-the-warm-mcp-server-10k-chunks",
        mcp_latency,
    ),
    "mcp_load": (
        "the MCP server under load",
        "benchmarks.md#10-the-mcp-server-under-50-concurrent-clients-and-a-writer",
        mcp_load,
    ),
    "embed_throughput": (
        "embedding per local backend",
        "benchmarks.md#11-embedding-throughput-per-local-backend",
        embed_throughput,
    ),
    "best_line_cost": (
        "ranking chunks by their best line",
        "benchmarks.md#12-ranking-chunks-by-their-best-line-what-it-costs",
        best_line_cost,
    ),
    "best_line_cost_local": (
        "the same, packaged model",
        "benchmarks.md#12-ranking-chunks-by-their-best-line-what-it-costs",
        best_line_cost,
    ),
    "harvest_speed": (
        "`memlab harvest`",
        "benchmarks.md#14-memlab-harvest-1000-sessions-10000-calls",
        harvest_speed,
    ),
    "ray_eval": (
        "evaluation on Ray",
        "benchmarks.md#13-evaluation-on-ray-local-vs-ray-local-and-a-16-node-cost-model",
        ray_eval,
    ),
    "learned_stage": ("the learned stage's cost", "studies/learned.md", learned_stage),
    "identifier_rule": ("identifiers never sink", "studies/identifiers.md", identifier_rule),
    "rank_agreement": (
        "does the synthetic corpus order the systems as real data",
        "studies/rank-agreement.md",
        rank_agreement,
    ),
    "realism_curve": ("the tuned weight against term overlap", "studies/realism.md", realism_curve),
    "realmem_quality": ("RealMem beside published systems", "studies/realmem.md", realmem_quality),
    "flush_quality": (
        "memory flush: notes, transcripts or both",
        "studies/flush.md",
        flush_quality,
    ),
}


def others() -> str:
    """A row per results file that is not a headline: key figures, date, commit, command."""
    rows = []
    study_dir = {
        "identifier_rule",
        "rank_agreement",
        "realism_curve",
        "realmem_quality",
        "flush_quality",
    }
    for path in sorted(RESULTS.glob("*.json")):
        name = path.stem
        if name.startswith("headline_"):
            continue
        if name not in KEY_FIGURES:
            raise KeyError(f"{path.name}: no key figures in benchmarks/results_page.py")
        what, page, fig = KEY_FIGURES[name]
        doc = load(path)
        rows.append(
            [
                f"[{what}]({page})",
                fig(doc["results"]),
                stamp(doc),
                command(doc, "studies" if name in study_dir else "benchmarks"),
            ]
        )
    return markdown_table(["benchmark", "key figures", "measured", "command"], rows)


INTRO = """# Results

Every figure below is rendered from the committed JSON under `benchmarks/results/` and
`benchmarks/baseline.json` by `python benchmarks/tables.py --results docs/results.md`; a test
fails when this page and the JSON disagree. Each block names the date and the commit it was
measured at and the command that reproduces it. Figures marked {mark} were written before
the benchmarks recorded their date and commit: theirs are the date and commit of the git
commit that last wrote the file (`git log -1 -- FILE`), which may be later than the
measurement. How each figure was chosen and what it means: [the studies](studies/index.md);
speed: [benchmarks](benchmarks.md).

## Retrieval quality on the dev sets

```bash
nice -n 10 .venv/bin/python studies/headline.py --json-dir benchmarks/results
```

Every preset, run once over all questions; each slice is a subset of the same per-question
values. A cell is the mean and its 95 % bootstrap CI over the slice's questions; `+` / `−`
marks a mean that differs from `bm25`'s (paired t-test, Holm over the presets, p_adj ≤
0.01); **bold** is the best mean of its column. `by group` is the range of the figure over
the slice's groups (conversations, chats, personas): a lead carried by one group shows as a
wide range. The presets were tuned on the tune halves of LoCoMo and BEAM
([protocol](studies/index.md#protocol-what-was-tuned-on-what)); the report halves and RealMem
chose nothing.
"""


def render() -> str:
    """The whole page."""
    parts = [INTRO.format(mark=MARKED)]
    for name in HEADLINE:
        path = RESULTS / f"headline_{name}.json"
        parts += [headline_section(name, load(path)), ""]
    base = load(BASELINE)
    parts += [
        "## The pinned figures (the CI guard)",
        "",
        f"`benchmarks/baseline.json`, pinned {stamp(base)} by `python benchmarks/quality.py "
        "--update-baseline REASON` (reason: "
        f"{base['reason']}). recall@10 / nDCG@10 of every preset, each asked for 10 results, "
        "on the committed synthetic corpora (OpenClaw's chunks) and the two conversation dev "
        "sets at both units, with the lexical `hashing` embedder and the packaged model "
        "(`local`). `make test` fails on a drop beyond "
        f"{base['tolerance']['hashing']} (hashing) or {base['tolerance']['local']} (local); "
        "[benchmarks](benchmarks.md#quality-regression) has the query-mix guard.",
        "",
        pinned(),
        "",
        "## Every other benchmark and study",
        "",
        "The key figures of each results file; the page linked holds its tables.",
        "",
        others(),
    ]
    return "\n".join(parts) + "\n"


def write(path: Path) -> None:
    """Write the page to ``path``."""
    path.write_text(render(), encoding="utf-8")
