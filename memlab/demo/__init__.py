"""memlab's main job, end to end (``memlab demo``, run by ``make demo``).

The question it answers: where does OpenClaw's hybrid weighting (0.7 vector /
0.3 keyword) stand, and what does tuning the weight buy?

1. Generate a seeded synthetic memory workspace whose questions and evidence are
   known, fitted ``--like`` the shipped RealMem persona (``memlab.demo.like``: the
   persona's term overlap, its best other session's overlap, its session length, its
   mix of question forms and its style, each printed beside its target), one group per
   retrieval phenomenon. Cached under ``--out``. (Without the persona — an installed
   package without the checkout — 180 daily logs of 60 notes, as notes.)
2. Index it with the packaged all-MiniLM-L6-v2 (or the hashing baseline), one line
   per unit and ranked by session as the persona is (without the persona: OpenClaw's
   chunker at 200 tokens). Cached under ``--out``: a second run embeds nothing.
3. Measure how often OpenClaw's AND keyword query (every token quoted and
   ANDed) finds anything versus an OR query. With an empty keyword leg every
   weight ranks alike, so the weight question is asked on the OR leg, without
   minScore.
4. Split the questions in half, stratified by phenomenon; sweep the vector
   weight (text = 1 − vector) on the train half; report the chosen weight with
   its ties and plateau.
5. On the held-out half compare: vector alone, BM25 (OR), ``openclaw`` as
   shipped (AND, minScore 0.35), the 0.7/0.3 weighted sum on the OR leg, RRF
   (k 60) on the same OR candidates and the tuned weighted sum. Systems that
   rank every held-out question identically are shown once, under both names.
   Each row: recall@6 with its bootstrap CI, the paired difference to the
   0.7/0.3 weighted sum with its CI and Holm-corrected p.
6. The key test: tuned vs 0.7/0.3, paired over held-out questions.
7. The same question on the real persona (``memlab.demo.real``), then the conclusion:
   what both halves support, and the lesson as a function of term overlap — the fitted
   corpus asked at other paraphrase levels, the persona placed on that curve by its own
   overlap (``memlab.demo.like``).
8. Save the sweep curve (train band, held-out line, 0.7 and the tuned weight
   marked), the per-phenomenon bars and the experiment files under ``--out``.

Modules: ``settings`` (the metric, grid, baseline, statistics and default sizes),
``report`` (the prose, the tuning summary, the slide table and the figures), ``like`` (the
fit to the persona and the lesson's curve); the real persona's part is
``memlab.demo.real``.

Size: ``run_demo`` is the seven steps above in order, each reading what the
one before computed (the held-out half, the tuned weight, the systems
``run_experiment`` found identical), so it stays one function; its numbers and
prose are already ``settings`` and ``report``.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.demo.report import (
    ci_text,
    effective_share,
    format_p,
    plot_weight_sweep,
    signed_text,
    slide_table,
    synthetic_figures,
    tuning_summary,
    wrap_lines,
)
from memlab.demo.settings import (
    ALPHA,
    BASELINE,
    CHUNK_OVERLAP,
    CHUNK_TOKENS,
    CONFIDENCE,
    DEFAULT_DAYS,
    DEFAULT_NOTES_PER_DAY,
    DEFAULT_QUERIES_PER_TYPE,
    GRID,
    METRIC,
    METRICS,
    N_RESAMPLES,
    SHIPPED,
    WIDTH,
)

if TYPE_CHECKING:
    from memlab.eval.lab import Lab

__all__ = [
    "ALPHA",
    "BASELINE",
    "CHUNK_OVERLAP",
    "CHUNK_TOKENS",
    "CONFIDENCE",
    "DEFAULT_DAYS",
    "DEFAULT_NOTES_PER_DAY",
    "DEFAULT_QUERIES_PER_TYPE",
    "GRID",
    "METRIC",
    "METRICS",
    "N_RESAMPLES",
    "SHIPPED",
    "WIDTH",
    "effective_share",
    "run_demo",
    "tuning_summary",
    "wrap_lines",
]


def _corpus(out: Path, cfg: Any, say: Any, what: str) -> Any:
    """The synthetic corpus of ``cfg`` under ``out`` (reused when its dataset.json records
    the same config; regenerated — only a folder this generator wrote — otherwise)."""
    from memlab.datasets.base import load_folder
    from memlab.datasets.synthetic import generate, generated_with
    from memlab.datasets.synthetic.base import config_record

    key = hashlib.sha256(json.dumps(config_record(cfg), sort_keys=True).encode()).hexdigest()
    folder = out / f"corpus-{key[:12]}"
    if generated_with(folder, cfg):
        say(f"[1/8] synthetic corpus {what}: reusing {folder}")
        return load_folder(folder)
    t = time.perf_counter()
    ds = generate(cfg, folder, overwrite=True)
    say(f"[1/8] synthetic corpus {what}: wrote {folder} ({time.perf_counter() - t:.1f} s)")
    return ds


def _keyword_coverage(lab: Lab, depth: int) -> dict[str, float]:
    """Share of questions whose keyword leg returns at least one chunk, per query mode."""
    out = {}
    for mode in ("and", "or"):
        lc = lab.candidates(depth, keyword_mode=mode, keyword_fallback=False)
        out[mode] = float((lc.cs.text_rank >= 0).any(axis=1).mean())
    return out


def run_demo(
    out: str | Path = "demo-output",
    *,
    embedder: str = "local",
    days: int | None = None,
    notes_per_day: int | None = None,
    queries_per_type: int | None = DEFAULT_QUERIES_PER_TYPE,
    seed: int = 7,
    quiet: bool = False,
    progress: bool | None = None,
) -> int:
    """Run the main job (module docstring); returns 0. Everything is written under ``out``.

    ``days``, ``notes_per_day``, ``queries_per_type``: the synthetic corpus's sizes, kept
    as given by the fit to the persona (None: fitted; without the persona, None is
    ``DEFAULT_DAYS`` / ``DEFAULT_NOTES_PER_DAY``); ``progress``: None = bars on a terminal
    only, False = never.
    Writes ``out/corpus-…`` (the corpus), ``out/index`` (the index),
    ``out/experiment`` (experiment.json, per_query.csv, runs.trec),
    ``out/sweep.csv``, ``out/table.csv``, ``out/key_test.json``, ``out/index/vectors``
    (question vectors), ``out/sweep_vector_weight.png`` and
    ``out/recall_by_category.png``.
    """

    from memlab.chunking import ChunkerConfig
    from memlab.datasets.synthetic import SynthConfig
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.significance import (
        bootstrap_ci,
        paired_ttest,
        randomization_test,
        win_tie_loss,
    )
    from memlab.eval.sweep import split_queries, sweep
    from memlab.pipeline.presets import preset
    from memlab.retrieval.textquery import build_fts_query

    def say(msg: str = "", wrap: bool = True) -> None:
        if not quiet:
            print(wrap_lines(msg) if wrap else msg, flush=True)

    t0 = time.perf_counter()
    out = Path(out).expanduser()
    from memlab.demo.like import fit_to_persona

    fitted = fit_to_persona(
        out, seed=seed, days=days, notes_per_day=notes_per_day, queries_per_type=queries_per_type
    )
    if fitted is None:  # an installed package without the shipped persona
        cfg = SynthConfig(
            days=days or DEFAULT_DAYS,
            notes_per_day=DEFAULT_NOTES_PER_DAY if notes_per_day is None else notes_per_day,
            queries_per_type=queries_per_type or DEFAULT_QUERIES_PER_TYPE,
            seed=seed,
        )
        ds = _corpus(out, cfg, say, "(no persona to fit it to)")
    else:
        fit, persona_stats = fitted
        cfg = fit.config
        ds = _corpus(out, cfg, say, "like the shipped RealMem persona")
        say(
            "      fitted to the persona's statistics (memlab stats: words only), each beside"
            " its target (memlab synth OUT --like realmem --like-path datasets/realmem):"
        )
        say("\n".join("      " + ln for ln in fit.format().splitlines()), wrap=False)
    counts = ds.queries["category"].value_counts().sort_index()
    say(f"      {len(ds.queries)} questions: " + ", ".join(f"{k} {v}" for k, v in counts.items()))

    from memlab.embed import CachedEmbedder, resolve_embedder

    # Query vectors persist under --out (index/vectors): a second run embeds no question.
    cached = CachedEmbedder(resolve_embedder(embedder), out / "index" / "vectors")
    level = ds.info.get("level", "unit")
    # Like the persona: one line per unit, ranked by session, as the real half is.
    unit = "turn" if fitted else ChunkerConfig("openclaw", CHUNK_TOKENS, CHUNK_OVERLAP)
    lab = Lab(
        ds,
        embedder=cached,
        unit=unit,
        level=level,
        index_dir=out / "index",
        progress=False if quiet else progress,
    )
    t1 = time.perf_counter()
    idx = lab.index("default")
    st = idx.status()
    new_queries = cached.prefetch(ds.queries["query"].tolist())
    say(
        f"[2/8] index: {st['chunks']} {'lines' if fitted else 'chunks'} from {st['files']}"
        f" files with {idx.model} and {new_queries} new question embeddings"
        f" ({time.perf_counter() - t1:.1f}\u00a0s)"
    )
    if fitted:
        say(
            f"      units: one line each, as in the real half; a question is scored by the"
            f" {'sessions' if level == 'file' else 'lines'} it ranks"
            f" ({'a session' if level == 'file' else 'a line'}'s rank = its best line's)."
        )
    else:
        say(
            f"      chunks: OpenClaw's chunker at {CHUNK_TOKENS} tokens (overlap {CHUNK_OVERLAP}),"
            f" not its default 400: {idx.model} reads at most 256 word pieces, so a 400-token"
            " chunk would be cut before it is embedded (OpenClaw's own embedders read whole"
            " chunks) and the weight would be tuned against truncation, not against the vector"
            f" leg (notebook 06 measures that cost); {st['truncated_chunks']} of {st['chunks']}"
            f" chunks {'is' if st['truncated_chunks'] == 1 else 'are'} longer than the window"
            " here."
        )

    # --- why the weight question needs an OR keyword leg
    shipped = preset("openclaw").replace(name=SHIPPED)
    depth = shipped.depth
    cover = _keyword_coverage(lab, depth)
    example = ds.queries["query"].iloc[0]
    say(
        f"[3/8] keyword leg: OpenClaw's query quotes every token and ANDs them"
        f" ({example!r} → {build_fts_query(example)}), so a chunk must contain every word of"
        f" the question. It found something for {cover['and']:.0%} of the"
        f" {len(ds.queries)} questions; an OR query over the non-stop words for"
        f" {cover['or']:.0%}. Where the keyword leg is empty the fused score is"
        f" w × cosine for every candidate and every weight ranks alike, so the weight is"
        f" tuned and compared on the OR leg, without minScore."
    )

    # --- tune the weight on a stratified train half
    train, test = split_queries(
        ds.queries["qid"].tolist(), 0.5, seed=seed, strata=ds.queries["category"].tolist()
    )
    base = preset("wsum")  # 0.7/0.3 on the lab's OR candidates, no threshold
    with warnings.catch_warnings(record=True) as caught:
        # Printed once, in the tuning summary, instead of as a Python warning.
        warnings.simplefilter("always")
        sw = sweep(lab, base, {"vector_weight": GRID}, [METRIC], train=train)
    for w in caught:
        if not issubclass(w.category, UserWarning) or "Sweep" not in w.category.__name__:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    best = sw.best()
    tuned_raw = sw.pipeline()
    w_tuned = effective_share(tuned_raw.vector_weight, tuned_raw.text_weight)
    tuned = tuned_raw.replace(name=f"wsum-tuned-{w_tuned:.2f}/{1 - w_tuned:.2f}")
    say(
        f"[4/8] vector weight swept over {GRID[0]:.2f}–{GRID[-1]:.2f} (step 0.05, text = 1 −"
        f" vector) on {len(train)} train questions, weighted sum on the OR leg:"
    )
    say(tuning_summary(sw, best, base, tuned))

    # --- held-out comparison
    default = base.replace(name=BASELINE)
    candidates = [preset("vector"), preset("bm25"), shipped, default, preset("rrf")]
    candidates.append(preset("memlab-best"))
    # The sweep moves only the weights, so the effective share decides "same system"
    # (1 − 0.7 is 0.30000000000000004: compare numbers, not objects).
    same_setting = abs(w_tuned - 0.7) < 1e-9
    if not same_setting:
        candidates.append(tuned)
    # One system under two names is shown once: run_experiment finds the systems whose
    # returned chunks are the same on every held-out question (info["identical_rankings"]).
    first = run_experiment(candidates, lab, METRICS, baseline=BASELINE, queries=test, alpha=ALPHA)
    drop: dict[str, str] = {}  # a repeated system → the row it is shown under
    labels: dict[str, str] = {}
    notes = []
    for g in first.info["identical_rankings"]:
        keep = BASELINE if BASELINE in g else g[0]
        others = [n for n in g if n != keep]
        drop.update(dict.fromkeys(others, keep))
        labels[keep] = " = ".join([keep, *others])
        notes.append(
            f"      {' and '.join(g)} return the same top 6 in the same order on every one of"
            f" the {int(first.table.loc[BASELINE, 'n'])} held-out questions: one system as"
            f" measured, shown once as {labels[keep]!r}"
        )
    systems = [s for s in candidates if s.name not in drop]
    res = run_experiment(
        systems,
        lab,
        METRICS,
        baseline=BASELINE,
        queries=test,
        keep_runs=True,
        alpha=ALPHA,
    )
    n_test = int(res.table.loc[BASELINE, "n"])
    say(f"[5/8] held-out comparison on {n_test} questions (each system returns ≤ 6 results):")
    if same_setting:
        say("      the tuned setting is OpenClaw's own 0.7/0.3: no separate tuned row")
    for n in notes:
        say(n)
    table_text, numbers = slide_table(res, systems, labels, seed)
    say()
    say(table_text, wrap=False)
    say()
    say(
        f"Δ = paired difference in {METRIC} to {BASELINE}, OpenClaw's fusion with a working"
        f" (OR) keyword leg — not {SHIPPED}, whose mostly empty AND leg and 0.35 threshold"
        f" make it a degenerate reference ({res.table.loc[SHIPPED, METRIC]:.3f})."
    )
    say(
        f"{SHIPPED}: OpenClaw as it ships (AND keyword query, minScore 0.35, weights 0.7/0.3);"
        f" the other rows share one OR candidate set."
    )
    say(
        f"CIs: percentile bootstrap over questions ({N_RESAMPLES} resamples; * not adjusted for"
        f" multiple comparisons); p: paired t-test, Holm-corrected over the {len(systems) - 1}"
        f" comparisons; better/same/worse: questions."
    )

    # --- the key test: tuned vs 0.7/0.3
    wide = res.wide(METRIC)
    a = wide[BASELINE].to_numpy(float)
    # A tuned system identical to another row is scored as that row (same ranking).
    tuned_name = BASELINE if same_setting else tuned.name
    b = wide[drop.get(tuned_name, tuned_name)].to_numpy(float)
    d = b - a
    d_low, d_high = bootstrap_ci(d, CONFIDENCE, N_RESAMPLES, seed)
    p_t = paired_ttest(b, a)[1]
    p_r = randomization_test(b, a, n_resamples=N_RESAMPLES, seed=seed)
    wins, ties, losses = win_tie_loss(b, a)
    key = {
        "tuned": tuned_name,
        "tuned_vector_weight": w_tuned,
        "baseline": BASELINE,
        "metric": METRIC,
        "n": int(d.size),
        "tuned_mean": float(b.mean()),
        "baseline_mean": float(a.mean()),
        "mean_difference": float(d.mean()),
        "ci_low": d_low,
        "ci_high": d_high,
        "confidence": CONFIDENCE,
        "n_resamples": N_RESAMPLES,
        "seed": seed,
        "ttest_p": p_t,
        "randomization_p": p_r,
        "better": wins,
        "same": ties,
        "worse": losses,
    }
    verdict = (
        "the interval excludes 0"
        if d_low > 0 or d_high < 0
        else "the interval includes 0: no evidence that tuning changes held-out recall"
    )
    say()
    if same_setting:
        say(
            f"[6/8] Key test — the tuned weight is OpenClaw's 0.70/0.30 itself: tuning on"
            f" {len(train)} train questions buys nothing here (difference 0 on all {d.size}"
            f" held-out questions)."
        )
    else:
        say(
            f"[6/8] Key test — tuned ({w_tuned:.2f}/{1 - w_tuned:.2f}) vs OpenClaw's 0.70/0.30"
            f" on {d.size} held-out questions: {METRIC} {b.mean():.3f} vs {a.mean():.3f}, mean"
            f" difference {signed_text(float(d.mean()))}"
            f" (95% CI {ci_text(d_low, d_high, signed=True)});"
            f" paired t-test p {format_p(p_t, True)}, randomization test p {format_p(p_r, True)};"
            f" better on {wins}, same on {ties}, worse on {losses} questions; {verdict}."
        )
    vec_alone = float(wide[drop.get("vector", "vector")].mean())
    say(
        f"      Scope: one seeded synthetic corpus, {idx.model},"
        f" {'one line per unit' if fitted else f'{CHUNK_TOKENS}-token chunks'};"
        f" the vector leg alone reaches {METRIC} {vec_alone:.3f}. A finding for this corpus and"
        " model, not a default: check it on your data (memlab sweep, notebook 02)."
    )

    # --- per phenomenon
    by_cat = res.by_category(METRIC)
    by_cat.columns = [labels.get(c, c) for c in by_cat.columns]
    n_cat = (
        res.per_query[(res.per_query["metric"] == METRIC) & (res.per_query["system"] == BASELINE)]
        .groupby("category")["qid"]
        .count()
    )
    by_cat.index = [f"{c} (n={n_cat[c]})" for c in by_cat.index]
    by_cat.index.name = None
    say()
    say(f"{METRIC} by phenomenon (held-out):")
    say(by_cat.round(3).to_string(), wrap=False)

    # --- the same question on a real persona, and what both corpora support
    synthetic = synthetic_figures(numbers, systems, tuned_name, w_tuned, drop)
    from memlab.demo.real import conclusion, run_real

    say()
    say("[7/8] the same question on real agent memory:")
    real = run_real(
        out,
        embedder=cached,
        seed=seed,
        say=say,
        progress=False if quiet else progress,
        stats=None if fitted is None else persona_stats,
    )
    say()
    say("[8/8] conclusion (synthetic: recall@6; real persona: recall_any@10; held-out halves):")
    for line in conclusion(synthetic, real):
        say("      " + line)
    if fitted is not None and real is not None:
        from memlab.demo.like import lesson_lines, lesson_points
        from memlab.demo.real import REAL_METRIC

        points = lesson_points(cfg, out, cached, REAL_METRIC, False if quiet else progress)
        for line in lesson_lines(points, real["point"], float(cfg.paraphrase or 0.0)):
            say("      " + line)

    # --- files
    res.save(out / "experiment")
    sw.table.to_csv(out / "sweep.csv", index=False)
    (out / "key_test.json").write_text(json.dumps(key, indent=2) + "\n")
    numbers.to_csv(out / "table.csv", index=False)
    sweep_png = out / "sweep_vector_weight.png"
    cat_png = out / "recall_by_category.png"
    plot_weight_sweep(sw, base, w_tuned, len(train), len(test), sweep_png)
    from memlab.viz import plot_by_category

    plot_by_category(res, METRIC, path=cat_png)
    say()
    say(
        f"wrote {out / 'experiment'} (experiment.json, per_query.csv, runs.trec),"
        f" {out / 'sweep.csv'}, {out / 'table.csv'}, {out / 'key_test.json'},"
        f" {sweep_png} and {cat_png}"
    )
    say(f"done in {time.perf_counter() - t0:.1f} s")
    return 0
