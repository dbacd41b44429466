"""The presets read by another local model: does a stronger embedder move the goals?

The LoCoMo goals are not met with the packaged all-MiniLM-L6-v2, and the reader has been
named as the blocker. This study tests that claim: it runs the systems with
the packaged model and with a second sentence-transformers folder given by ``--model``
(for example all-mpnet-base-v2, docs/studies/stronger-reader.md), at one turn per unit
(``vector``, ``bm25``, ``memlab-best``) and at OpenClaw's chunks (``vector``, ``bm25``,
``memlab-best-chunk (chunks as units)``: ``benchmarks._common.chunk_as_unit``, each chunk
scored as one unit), on the dev halves of ``memlab.eval.protocol``: LoCoMo by question
(the halves memlab-best was tuned on), LoCoMo by conversation (report conv-30, conv-42,
the closest to the goal's "conversations never seen"; memlab-best's settings saw
questions of all five, so it is a check, not an unseen measurement), BEAM by chat (report
the even chats).

The presets' weights were chosen with the packaged model. So that the other model is not
handicapped by them, its vector weight is also chosen on tune halves: the preset with
``vector_weight`` w and ``text_weight`` 1 − w for w in ``WEIGHTS``, on the mean over
``CHOOSE_ON`` — LoCoMo's question-split tune half and BEAM's odd chats, the halves
memlab-best was chosen on — of R@5 + R@10 (turn) or of recall@6 (chunk); a tie to the
fourth digit goes to the preset's own weight. The conversation split's tune half takes no
part: it holds about 60 % of the question split's report questions. Report halves are
only printed. The paired t-test (``memlab.eval.significance.paired_ttest``, uncorrected)
compares each row with the same preset on the packaged model, per report half (turn:
R@10; chunk: recall@6); LoCoMo's two report halves share questions, so their p are not
independent evidence.

Reproduce (docs/studies/stronger-reader.md; DIR a sentence-transformers folder of
all-mpnet-base-v2):

    nice -n 10 .venv/bin/python studies/model_swap.py --model ~/models/all-mpnet-base-v2 --json swap.json

Vectors are cached per model (``Lab(cache_vectors=True)``); the first run with
all-mpnet-base-v2 embeds every LoCoMo and BEAM turn and chunk with it (69 min on 2 cores,
40 of them for BEAM's 4,096 chunks), a later run 1 min 25 s, of which the speed sample takes about a minute:
``--speed-sample N`` (default 64, 0 = off) times both models on the first N units of
each set (torch, uncached, one run: a rough figure on a shared machine).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import chunk_as_unit, log, parser, print_table, report
from memlab.eval.lab import Lab
from memlab.eval.protocol import HALVES, conversation_halves, question_halves
from memlab.eval.significance import paired_ttest
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import memlab_best, preset
from studies.shared import base_embedder, choose_simplest, unit_lines

# The metrics of each unit, and the one its report-half t-test compares.
METRICS = {
    "turn": ["recall@5", "recall@10", "ndcg@10"],
    "chunk": ["recall@6", "recall@10", "ndcg@10"],
}
P_OF = {"turn": "recall@10", "chunk": "recall@6"}
WEIGHTS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
# The tune halves the weight is chosen on (names of `main`'s halves).
CHOOSE_ON = ("locomo q", "beam")
# Ten results each, so recall@10 and nDCG@10 read ten (the presets return six).
K = 10


def systems(unit: str) -> list[Pipeline]:
    """The systems of one unit, the tuned preset last: ``memlab-best`` (turn), or
    memlab-best-chunk's chunk-as-unit system (chunk, ``chunk_as_unit``: each chunk scored as
    one unit, the system "A stronger reader" measured; the preset now ranks chunks by their
    best line)."""
    best = memlab_best(max_results=K) if unit == "turn" else chunk_as_unit(max_results=K)
    return [preset("vector", max_results=K), preset("bm25", max_results=K), best]


def weight_points(best: Pipeline) -> list[Pipeline]:
    """``best`` at every vector weight w of ``WEIGHTS`` (text weight 1 − w), named
    ``"<name> w=<w>"``; the preset's own weight is among them."""
    ws = sorted({*WEIGHTS, best.vector_weight})
    return [
        best.replace(name=f"{best.name} w={w:g}", vector_weight=w, text_weight=round(1 - w, 6))
        for w in ws
    ]


def objective(rows: dict[str, float], unit: str) -> float:
    """What the weight is chosen on: R@5 + R@10 (turn) or recall@6 (chunk)."""
    return rows["recall@5"] + rows["recall@10"] if unit == "turn" else rows["recall@6"]


def choose_weight(tune_means: dict[str, dict[str, float]], unit: str, own: str) -> str:
    """The weight point with the best mean tune objective over the halves; a tie at the
    fourth digit goes to ``own`` (the preset's weight), then to the first listed
    (``studies.shared.choose_simplest``, the studies' one tie rule)."""
    return choose_simplest({name: objective(m, unit) for name, m in tune_means.items()}, (own,))


def per_query(ds: Any, emb: Any, unit: str, pts: list[Pipeline]) -> tuple[dict, list[str]]:
    """system name → metric → per-question values [Q], and the qids (rows)."""
    lab = Lab(ds, embedder=emb, unit=unit, progress=None, cache_vectors=True)
    metrics = METRICS[unit]
    out: dict[str, dict[str, np.ndarray]] = {}
    qids: list[str] | None = None
    for p in pts:
        lc = lab.candidates_for_system(p)
        if qids is not None and lc.qids != qids:
            raise RuntimeError("two candidate sets list the questions in different orders")
        qids = lc.qids
        out[p.name] = lc.score(p, metrics)
    assert qids is not None
    return out, qids


def half_means(values: dict[str, np.ndarray], qids: list[str], half: list[str]) -> dict:
    """Each metric's mean over the half's questions (questions without evidence left out)."""
    m = np.isin(qids, half)
    return {k: float(np.nanmean(v[m])) for k, v in values.items()}


Values = dict[tuple[str, str], dict[str, dict[str, np.ndarray]]]


def summarise(
    unit: str,
    values: Values,
    qids_of: dict[str, list[str]],
    halves: dict[str, Any],
    model: str,
    choose_on: tuple[str, ...] = CHOOSE_ON,
) -> dict[str, Any]:
    """The weight chosen on tune (`choose_weight` over the mean of the tune means of the
    halves named in ``choose_on``) and one row per (model, system): each half's tune and report means, and the report
    half's paired t-test p of ``recall@10`` (turn) / ``recall@6`` (chunk) against the same
    system on the packaged model ("reference" on the packaged rows; a question whose
    reference value is NaN, i.e. without evidence, is left out; so is one whose own value
    is NaN). ``bm25`` reads no vectors,
    so it has one row, the packaged model's. ``values``: (dataset name, model) → system →
    metric → [Q]; ``halves``: name → (dataset, (tune qids, report qids))."""
    metrics = METRICS[unit]
    base_pts = systems(unit)
    best = base_pts[-1]
    points = [p.name for p in weight_points(best)]
    own = f"{best.name} w={best.vector_weight:g}"

    def means(emb: str, name: str, h: str, part: int) -> dict[str, float]:
        ds, pair = halves[h]
        return half_means(values[(ds.name, emb)][name], qids_of[ds.name], pair[part])

    tune = {
        n: {m: float(np.mean([means(model, n, h, 0)[m] for h in choose_on])) for m in metrics}
        for n in points
    }
    chosen = choose_weight(tune, unit, own)
    shown = [("packaged", p.name) for p in base_pts]
    # bm25 reads no vectors: the same system on either model, so it is shown once.
    shown += [(model, p.name) for p in base_pts[:-1] if p.vector]
    shown += [(model, n) for n in dict.fromkeys([own, chosen])]
    ref_of = {p.name: p.name for p in base_pts} | {n: best.name for n in points}
    key = P_OF[unit]
    rows = []
    for emb, name in shown:
        row: dict[str, Any] = {"model": emb, "system": name}
        for h, (ds, (_, report_qids)) in halves.items():
            t, r = means(emb, name, h, 0), means(emb, name, h, 1)
            row[f"{h} tune"] = " / ".join(f"{t[m]:.3f}" for m in metrics)
            row[f"{h} report"] = " / ".join(f"{r[m]:.3f}" for m in metrics)
            if emb == "packaged":
                row[f"{h} p"] = "reference"
            else:
                a = values[(ds.name, emb)][name][key]
                b = values[(ds.name, "packaged")][ref_of[name]][key]
                m = np.isin(qids_of[ds.name], report_qids) & np.isfinite(a) & np.isfinite(b)
                row[f"{h} p"] = float(f"{paired_ttest(a[m], b[m])[1]:.2g}")
        rows.append(row)
    return {
        "metrics": metrics,
        "p of": key,
        "tune objective": {n: round(objective(v, unit), 4) for n, v in tune.items()},
        "chosen on": list(choose_on),
        "chosen": chosen,
        "rows": rows,
    }


def speed(model: Path, samples: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Texts embedded per second by the packaged model and by ``model``, both on
    sentence-transformers (torch), uncached, after a one-text warm-up: one row per
    (model, sample)."""
    from memlab.embed.local import SentenceTransformerEmbedder

    rows = []
    for label, path in (("packaged", None), (model.name, model)):
        emb = SentenceTransformerEmbedder(path, show_progress=False)
        emb.embed_documents(["warm up"])
        for name, texts in samples.items():
            t0 = time.perf_counter()
            emb.embed_documents(texts)
            secs = time.perf_counter() - t0
            rows.append(
                {
                    "model": label,
                    "sample": name,
                    "texts": len(texts),
                    "texts_per_s": round(len(texts) / secs, 1),
                }
            )
    return rows


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a sentence-transformers model folder")
    ap.add_argument("--units", default="turn,chunk", help="units to run (turn, chunk)")
    ap.add_argument(
        "--speed-sample",
        type=int,
        default=64,
        help="time both models on the first N texts of each set (default 64; 0 = off)",
    )
    args = ap.parse_args()
    units = args.units.split(",")
    if bad := [u for u in units if u not in METRICS]:
        ap.error(f"--units: {', '.join(bad)} is not a unit; choose from {', '.join(METRICS)}")
    model = Path(args.model).expanduser()
    if not model.is_dir():
        ap.error(f"--model: {model} is not a folder (a sentence-transformers model folder)")
    from memlab.datasets.beam import load_beam
    from memlab.datasets.locomo import load_locomo
    from memlab.embed.local import SentenceTransformerEmbedder

    locomo, beam = load_locomo(), load_beam()
    halves = {
        "locomo q": (locomo, question_halves(locomo)),
        "locomo conv": (locomo, conversation_halves(locomo)),
        "beam": (beam, conversation_halves(beam)),
    }
    out: dict[str, Any] = {
        "halves": {
            "locomo q": HALVES["question"],
            "locomo conv": HALVES["conversation"],
            "beam": HALVES["conversation"],
        },
        "model": model.name,
        "units": {},
    }
    for unit in units:
        base_pts = systems(unit)
        other_pts = [*base_pts[:-1], *weight_points(base_pts[-1])]
        values: Values = {}
        qids_of: dict[str, list[str]] = {}
        for ds in (locomo, beam):
            t0 = time.perf_counter()
            values[(ds.name, "packaged")], qids_of[ds.name] = per_query(
                ds, base_embedder(ds), unit, base_pts
            )
            log(f"{unit} {ds.name}: packaged model {time.perf_counter() - t0:.0f} s")
            t0 = time.perf_counter()
            other = SentenceTransformerEmbedder(model, show_progress=None)
            log(f"{unit} {ds.name}: {model.name} (embeds what its vector cache lacks)")
            values[(ds.name, model.name)], q = per_query(ds, other, unit, other_pts)
            if q != qids_of[ds.name]:
                raise RuntimeError("the two models' labs list the questions differently")
            log(f"{unit} {ds.name}: {model.name} {time.perf_counter() - t0:.0f} s")
        res = summarise(unit, values, qids_of, halves, model.name)
        out["units"][unit] = res
        print(
            f"\n{unit}: {' / '.join(res['metrics'])}; p = paired t-test of {res['p of']} on "
            "the report half against the same system on the packaged model"
        )
        print(
            f"vector weight with {model.name}, chosen on the tune halves of "
            f"{' and '.join(res['chosen on'])}: {res['chosen']}"
        )
        print_table(res["rows"])
    if args.speed_sample:
        samples = {
            f"{ds.name} (first {args.speed_sample} units)": unit_lines(ds)[: args.speed_sample]
            for ds in (locomo, beam)
        }
        out["speed"] = speed(model, samples)
        print("\nspeed: texts embedded per second (torch, uncached, one run)")
        print_table(out["speed"])
    report("model_swap", args, {"locomo": locomo.fingerprint, "beam": beam.fingerprint}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
