"""The demo's second corpus: one real RealMem persona, shipped in ``datasets/realmem``.

``memlab demo`` asks its question — where does OpenClaw's 0.7/0.3 stand, what does tuning
the weight buy, what does ``memlab-best`` do — on a seeded synthetic corpus first
(``memlab.demo``), then here on real agent memory: the RealMem persona Kenta_Tanaka
(Apache-2.0, ``datasets/realmem/README.md``), 191 dated project sessions and 153 queries.
RealMem's protocol (``memlab.datasets.realmem``): each query is answered from the sessions
before its own (the lab's time cut-off), sessions are ranked (a session's rank is its best
turn's), and the metric is the benchmark's ``recall_any@10`` (a gold session in the top 10)
beside its nDCG@10 (``ndcg_jk@10``).

Steps, as on the synthetic corpus: a stratified half of the queries (by RealMem's query
category) tunes the vector weight of the weighted sum (OR keyword leg, no threshold); the
other half compares ``vector``, ``bm25``, ``recency`` (newest session first, blind to the
query), the 0.7/0.3 weighted sum, the tuned weight and ``memlab-best``, each against 0.7/0.3
with a bootstrap CI of the paired difference and a Holm-corrected paired t-test.
`conclusion` then says what both corpora support and where they disagree.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

from memlab.demo.settings import BASELINE, CONFIDENCE, GRID, N_RESAMPLES

__all__ = ["REAL_METRIC", "conclusion", "run_real", "shipped_persona"]

REAL_METRIC = "recall_any@10"
REAL_METRICS = ("recall_any@10", "ndcg_jk@10")


def shipped_persona() -> Path | None:
    """``datasets/realmem`` of the repository this package runs from (the demo's real
    persona), or None when memlab runs from an installed package without the checkout."""
    folder = Path(__file__).resolve().parents[2] / "datasets" / "realmem"
    return folder if any(folder.glob("*.json.gz")) else None


def _signed(x: float) -> str:
    s = f"{x:+.3f}"
    return s.replace("-", "−") if x < 0 else s


def run_real(
    out: Path,
    *,
    embedder: Any,
    seed: int,
    say: Any,
    progress: bool | None,
    stats: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Run the question on the shipped persona (module docstring), printing with ``say``;
    returns the figures `conclusion` reads (per system: mean, Δ vs 0.7/0.3, its CI, p),
    or None when the persona is not there (an installed package without the checkout).
    ``embedder``: an ``Embedder`` (the demo's cached one). Writes ``out/realmem`` (the
    converted workspace and its index) and ``out/realmem/experiment``. ``stats``: the
    persona's ``corpus_stats``; given, the figures also hold ``point``, the persona as a
    point of ``memlab.eval.realism`` (its weight plateau and presets on all its queries),
    which the demo places on its overlap curve."""
    from memlab.datasets.realmem import load_realmem
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.significance import bootstrap_ci
    from memlab.eval.sweep import split_queries, sweep
    from memlab.pipeline.presets import preset

    src = shipped_persona()
    if src is None:
        say("[real] the shipped RealMem persona (datasets/realmem) is not here: skipped")
        return None
    t0 = time.perf_counter()
    ds = load_realmem(src, out / "realmem" / "data")
    lab = Lab(
        ds,
        embedder=embedder,
        unit="turn",
        level="file",
        index_dir=out / "realmem" / "index",
        progress=progress,
    )
    group = next(iter(ds.workspaces))
    st = lab.index(group).status()
    q = ds.queries
    scored = q[q["qid"].isin(set(ds.evidence["qid"]))]
    say(
        f"[real] RealMem persona {group} ({src.name}/, Apache-2.0): {ds.info['sessions']}"
        f" dated sessions, {st['chunks']} turns indexed, {len(scored)} queries with gold"
        f" sessions in their past ({time.perf_counter() - t0:.1f}\u00a0s). Each query is"
        " answered from the sessions before its own; sessions are ranked (a session's rank"
        f" is its best turn's); metric: RealMem's {REAL_METRIC}."
    )
    qids = scored["qid"].tolist()
    train, test = split_queries(qids, 0.5, seed=seed, strata=scored["category"].tolist())
    base = preset("wsum")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties are reported below from best["tied"]
        sw = sweep(lab, base, {"vector_weight": GRID}, [REAL_METRIC], train=train)
    best = sw.best()
    tuned_raw = sw.pipeline()
    w = tuned_raw.effective_weights()[0]
    tuned = tuned_raw.replace(name=f"wsum-tuned-{w:.2f}/{1 - w:.2f}")
    tied = best.get("tied") or []
    say(
        f"       tuned on {len(train)} train queries: vector weight {w:.2f}"
        + (f" ({len(tied)} weights tie; {best['rule']})" if len(tied) > 1 else "")
        + f", train {REAL_METRIC} {best['train_mean']:.3f} (0.70: "
        f"{float(sw.curve(REAL_METRIC).set_index('vector_weight').loc[0.7, 'mean']):.3f})"
    )
    systems = [
        preset("recency"),
        preset("vector"),
        preset("bm25"),
        base.replace(name=BASELINE),
        *([tuned] if abs(w - 0.7) > 1e-9 else []),
        preset("memlab-best"),
    ]
    res = run_experiment(
        systems, lab, list(REAL_METRICS), baseline=BASELINE, queries=test, keep_runs=True
    )
    res.save(out / "realmem" / "experiment")
    wide = res.wide(REAL_METRIC)
    ref = wide[BASELINE].to_numpy(float)
    figures: dict[str, Any] = {"n": len(ref), "tuned_weight": w, "systems": {}}
    lines = [
        f"{'system':<22} {REAL_METRIC:>13}  {'Δ vs 0.7/0.3':>12}  {'95% CI of Δ':<18}"
        f" {'p (Holm)':>8}  {'ndcg_jk@10':>10}"
    ]
    for s in systems:
        x = wide[s.name].to_numpy(float)
        d = x - ref
        low, high = bootstrap_ci(d, CONFIDENCE, N_RESAMPLES, seed)
        p = (
            float("nan")
            if s.name == BASELINE
            else float(res.table.loc[s.name, f"{REAL_METRIC} p_adj"])
        )
        figures["systems"][s.name] = {
            "mean": float(x.mean()),
            "delta": float(d.mean()),
            "ci": (low, high),
            "p": p,
        }
        base_row = s.name == BASELINE
        lines.append(
            f"{s.name:<22} {x.mean():>13.3f}  {'—' if base_row else _signed(float(d.mean())):>12}"
            f"  {'—' if base_row else f'[{_signed(low)}, {_signed(high)}]':<18}"
            f" {'—' if base_row else (f'{p:.3f}' if p >= 0.001 else '<0.001'):>8}"
            f"  {float(res.table.loc[s.name, 'ndcg_jk@10']):>10.3f}"
        )
    say(f"       held-out comparison on {len(ref)} queries:")
    say("\n".join("       " + ln for ln in lines), wrap=False)
    figures["tuned"] = tuned.name if abs(w - 0.7) > 1e-9 else BASELINE
    if stats is not None:
        from memlab.eval.realism import measure_points

        figures["point"] = measure_points(
            lab, {group: qids}, REAL_METRIC, {group: stats}, style=stats["style"]
        )[0]
    return figures


def _verdict(d: dict[str, Any]) -> str:
    """ "better" / "worse" when the CI of the difference excludes 0, else "no different"."""
    low, high = d["ci"]
    return "better" if low > 0 else ("worse" if high < 0 else "no different")


def _resolution(part: dict[str, Any]) -> float:
    """The median half-width of the part's Δ CIs: the smallest difference it resolves."""
    import statistics

    widths = [
        (v["ci"][1] - v["ci"][0]) / 2 for v in part["systems"].values() if v["ci"] != (0.0, 0.0)
    ]
    return statistics.median(widths) if widths else float("nan")


def conclusion(synthetic: dict[str, Any], real: dict[str, Any] | None) -> list[str]:
    """What both corpora support, and where they disagree and why, from the two parts'
    figures (``{"systems": {name: {"mean", "delta", "ci", "p"}}, "tuned", "tuned_weight"}``;
    the synthetic part's Δs are of recall@6, the real part's of recall_any@10). Three
    questions: does the tuned weight beat 0.7/0.3 on held-out questions; does
    ``memlab-best``; which leg alone is stronger (``vector`` or ``bm25``). A verdict is
    "better" / "worse" when the 95% CI of the paired difference excludes 0."""
    if real is None:
        return ["Only the synthetic corpus ran: its findings are not checked on real data."]
    parts = {"synthetic": synthetic, "real persona": real}
    res = {k: _resolution(v) for k, v in parts.items()}
    legs = {
        k: (v["systems"]["vector"]["mean"], v["systems"]["bm25"]["mean"]) for k, v in parts.items()
    }
    why_small = (
        f" (the real persona's {real['n']} held-out queries resolve differences of about"
        f" ±{res['real persona']:.2f} only; the synthetic corpus's ±{res['synthetic']:.2f})"
    )
    out = []
    t = {k: _verdict(v["systems"][v["tuned"]]) for k, v in parts.items()}
    weights = ", ".join(f"{k} {v['tuned_weight']:.2f}" for k, v in parts.items())
    if len(set(t.values())) == 1:
        out.append(
            f"Both support: the tuned weight ({weights}) is {t['synthetic']} than 0.7/0.3 on"
            " held-out questions."
        )
    else:
        out.append(
            f"They disagree on tuning: the tuned weight ({weights}) is {t['synthetic']} than"
            f" 0.7/0.3 on the synthetic corpus and {t['real persona']} on the real persona."
            f" Why: alone, the legs reach {legs['synthetic'][0]:.3f} (vector) and"
            f" {legs['synthetic'][1]:.3f} (bm25) on the synthetic corpus and"
            f" {legs['real persona'][0]:.3f} / {legs['real persona'][1]:.3f} on the real"
            " persona, and the weight follows the stronger leg" + why_small + ". A weight tuned"
            " on one corpus is a finding about it, not a default."
        )
    b = {k: _verdict(v["systems"]["memlab-best"]) for k, v in parts.items()}
    if len(set(b.values())) == 1:
        out.append(f"Both support: memlab-best is {b['synthetic']} than 0.7/0.3.")
    else:
        d = real["systems"]["memlab-best"]
        out.append(
            f"They disagree on memlab-best: {b['synthetic']} than 0.7/0.3 on the synthetic"
            f" corpus, {b['real persona']} on the real persona (Δ {_signed(d['delta'])},"
            f" 95% CI [{_signed(d['ci'][0])}, {_signed(d['ci'][1])}])" + why_small + "; on"
            " RealMem's five dev personas, LoCoMo and BEAM it leads the 0.7/0.3 sum"
            " (docs/studies/realmem.md, studies/realmem_quality.py)."
        )
    stronger = {k: ("vector" if v[0] > v[1] else "bm25") for k, v in legs.items()}
    if len(set(stronger.values())) == 1:
        out.append(f"Both support: alone, {stronger['synthetic']} is the stronger leg.")
    else:
        out.append(
            f"They disagree on the legs: alone, {stronger['synthetic']} is stronger on the"
            f" synthetic corpus ({legs['synthetic'][0]:.3f} / {legs['synthetic'][1]:.3f},"
            f" vector / bm25) and {stronger['real persona']} on the real persona"
            f" ({legs['real persona'][0]:.3f} / {legs['real persona'][1]:.3f}). Why: the fit"
            " matches words (how many of a question's terms its evidence and the best other"
            " unit hold), not meaning: a real session is about one project, a synthetic fact"
            " one turn among unrelated ones (docs/realism.md)."
        )
    return out
