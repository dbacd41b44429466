"""Four cheap ideas for turn-level retrieval, measured alone and combined on both dev sets.

Ideas (each a plain pipeline parameter over the lab's cached vectors):

a. file context (``file_context``, ``memlab.stages.file_context``): every unit gains
   ``w · max F`` of its own file (a LoCoMo daily file is one session, a BEAM daily log
   one batch), the session's heading line included; the variants "heading lines
   excluded, mean of the file's top m" (m = 1: the max) are a lab-only prototype here;
b. a wider neighbour window (``neighbor_prev2`` / ``neighbor_next2``, the units two
   before / after) and ``neighbor_agg="sum"`` (every positive neighbour term added,
   not only the largest); in user–assistant files a lab-only prototype adds the
   request before a User line, the next request after an Assistant line and the next
   User line;
c. vector pseudo-relevance feedback (Rocchio, lab-only prototype stage): ``q' =
   normalise(q + β · mean of the top-m units' vectors by the fused score)``, the vector
   leg re-scored with q' (``cos(q', v) = (cos(q, v) + β·m̄·v) / ‖q + β·m̄‖``, so no query
   vector is needed), normalised and fused again;
d. the error analysis: R@10 by LoCoMo category on the tune half, before and after.

PROTOCOL. Dev sets: LoCoMo dev (``../shared/datasets/locomo``) and BEAM 100K chats 1–10
(``../shared/datasets/beam``). Tune halves: LoCoMo's question split (``memlab-best``'s:
``split_queries(0.5, seed=0, strata=category)``, ``studies.shared.locomo_split``) and
BEAM's odd chats (``studies.shared.beam_split``). Every setting is chosen on
these two tune halves only: objective R@5 + R@10 (in %), summed over the two when a
parameter acts on both sets. An idea is kept only when its chosen setting helps on both
tune halves, or helps on one and is exactly neutral on the other. LoCoMo is also split
by conversation (``memlab.eval.protocol.conversation_halves``: tune conv-26, conv-41, conv-43;
report conv-30, conv-42) because the LoCoMo goal is conversations never seen: the
combined grid is chosen a second time on that tune half (with BEAM's), and its report
conversations were used for nothing else. Report halves (LoCoMo question-split report,
LoCoMo conv-30/42, BEAM even chats) are printed once, in the last table; nothing was
chosen on them. (The LoCoMo question split's report questions come from the same five
conversations as its tune questions: docs/studies/index.md, Protocol.)

Reproduce (docs/studies/context.md; vectors cached
by the lab under ``~/.cache/memlab/lab``: minutes, most of it the combined grid):

    nice -n 10 .venv/bin/python studies/transfer_ideas.py --json transfer.json
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from benchmarks._common import CHUNK_UNIT_NAME, chunk_as_unit, log, parser, print_table, report
from memlab.eval.lab import Lab
from memlab.eval.protocol import HALVES, conversation_halves
from memlab.pipeline import Pipeline
from memlab.pipeline.presets import TURN_CONTEXT_OFF, memlab_best, preset
from memlab.stages import Stage, registered
from memlab.stages.context import neighbor_positions, neighbor_scores
from memlab.stages.file_context import file_ids
from memlab.stages.legs import fusion_stage, normalize_stage
from memlab.stages.shape import ROLE_ASSISTANT, ROLE_USER, chunk_roles, user_assistant_files
from studies.shared import base_embedder, dev_sets, locomo_split

METRICS = ["recall@5", "recall@10", "ndcg@10"]
TUNE = ("L-q tune", "L-c tune", "B tune")
REPORT = ("L-q report", "L-c report", "B report")
FILE_W = [0.1, 0.3, 0.5, 0.7, 1.0, 1.5]
FILE_TOP = [1, 2, 3, 5]
WINDOW = {
    "neighbor_prev": [0.3, 0.5, 0.7],
    "neighbor_next": [0.1, 0.2, 0.3],
    "neighbor_prev2": [0.0, 0.2, 0.3, 0.4, 0.5],
    "neighbor_next2": [0.0, 0.1, 0.2],
}
UA_GRID = {"tx_ua_user_prev": [0.0, 0.2, 0.4], "tx_ua_asst_next": [0.0, 0.2, 0.4]}
PRF_GRID = {"tx_prf_beta": [0.05, 0.1, 0.2, 0.3, 0.5, 1.0], "tx_prf_m": [1, 3, 5, 10]}
COMBINED_FILE_W = [0.0, 0.3, 0.5, 0.7, 1.0]


def before() -> Pipeline:
    """``memlab-best`` as it was before this study (one-step neighbours 0.5 / 0.3, max, no
    file context): the base every idea is added to."""
    return memlab_best(
        name="memlab-best before", neighbor_prev=0.5, neighbor_next=0.3, **TURN_CONTEXT_OFF
    )


# ----------------------------------------------------------- lab-only prototype stages
def file_mean_stage(p: Pipeline, cs: Any, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """final + w · mean of the top-m pre-neighbour scores of the unit's file, registered
    after the heading filter (so heading-only chunks are not among them)."""
    valid, final = st["valid"], st["final"]
    base = final - np.nan_to_num(st["neighbor"], nan=0.0) if "neighbor" in st else final
    files = file_ids(cs.table)[np.maximum(cs.pos, 0)]
    q, c = np.nonzero(valid)
    key = q.astype(np.int64) * (int(files.max()) + 1) + files[q, c]
    f = base[q, c]
    order = np.lexsort((-f, key))
    ks, fs = key[order], f[order]
    first = np.r_[True, ks[1:] != ks[:-1]]
    rank = np.arange(ks.size) - np.maximum.accumulate(np.where(first, np.arange(ks.size), 0))
    _, inv = np.unique(ks, return_inverse=True)
    top = rank < int(p.tx_file_top)
    mean = np.bincount(inv, np.where(top, fs, 0.0)) / np.bincount(inv, top.astype(float))
    term = np.full(final.shape, np.nan)
    term[q[order], c[order]] = p.tx_file_mean * mean[inv]
    return {"tx_file_mean": term, "final": np.where(valid, final + term, np.nan)}


FILE_MEAN = Stage(
    "tx_file_mean",
    file_mean_stage,
    lambda p, mode: p.tx_file_mean > 0,
    ("tx_file_mean", "final"),
    params={"tx_file_mean": 0.0, "tx_file_top": 3},
    term=("tx_file_mean", "+"),
)


def ua_window_stage(p: Pipeline, cs: Any, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """In user–assistant files, add to the roles rule: a User line + u · F(previous line),
    an Assistant line + a · F(next line) (both terms, max with 0, added)."""
    valid, final = st["valid"], st["final"]
    base = final - np.nan_to_num(st["neighbor"], nan=0.0)
    prev, nxt = neighbor_positions(cs.table)
    n = len(cs.table)
    at = np.maximum(cs.pos, 0)
    ua, role = user_assistant_files(cs)[at], chunk_roles(cs)[at]
    fp = neighbor_scores(cs.pos, base, valid, prev, n)
    fn = neighbor_scores(cs.pos, base, valid, nxt, n)
    wu = np.where(ua & (role == ROLE_USER), p.tx_ua_user_prev, 0.0)
    wa = np.where(ua & (role == ROLE_ASSISTANT), p.tx_ua_asst_next, 0.0)
    extra = np.maximum(wu * fp, 0.0) + np.maximum(wa * fn, 0.0)
    nb = np.nan_to_num(st["neighbor"], nan=0.0) + extra
    return {
        "neighbor": np.where(valid, nb, np.nan),
        "final": np.where(valid, final + extra, np.nan),
    }


UA_WINDOW = Stage(
    "tx_ua_window",
    ua_window_stage,
    lambda p, mode: p.tx_ua_user_prev > 0 or p.tx_ua_asst_next > 0,
    ("neighbor", "final"),
    params={"tx_ua_user_prev": 0.0, "tx_ua_asst_next": 0.0},
)


def prf_stage(p: Pipeline, cs: Any, st: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rocchio on the vector leg: re-score with q' = (q + β m̄)/‖q + β m̄‖, m̄ the mean unit
    vector of the top-m candidates by fused score, then normalise and fuse again."""
    valid, fused = st["valid"], st["fused"]
    m, beta = int(p.tx_prf_m), float(p.tx_prf_beta)
    key = np.where(valid, -np.nan_to_num(fused, nan=0.0), np.inf)
    top = np.argsort(key, axis=1, kind="stable")[:, :m]
    ok = np.take_along_axis(valid, top, axis=1)
    vecs = cs.table.vectors.astype(np.float64)
    cnt = np.maximum(ok.sum(1), 1)
    mbar = (vecs[np.maximum(np.take_along_axis(cs.pos, top, axis=1), 0)] * ok[..., None]).sum(1)
    mbar /= cnt[:, None]
    q_m = (np.take_along_axis(np.nan_to_num(cs.vec_score), top, axis=1) * ok).sum(1) / cnt
    norm = np.sqrt(np.maximum(1.0 + 2.0 * beta * q_m + beta**2 * (mbar**2).sum(1), 1e-12))
    dots = np.einsum("qcd,qd->qc", vecs[np.maximum(cs.pos, 0)], mbar)
    st2 = dict(st)
    st2["vec_in"] = np.where(st["has_vec"], (cs.vec_score + beta * dots) / norm[:, None], np.nan)
    st2.update(normalize_stage(p, cs, st2))
    out = fusion_stage(p, cs, st2)
    return {"vec_in": st2["vec_in"], "vec_norm": st2["vec_norm"], **out}


PRF = Stage(
    "tx_prf",
    prf_stage,
    lambda p, mode: p.tx_prf_beta > 0,
    ("vec_in", "vec_norm", "valid", "fused", "final"),
    params={"tx_prf_beta": 0.0, "tx_prf_m": 5},
)


# ------------------------------------------------------------------------ evaluation
class Bench:
    """Both dev sets' candidates (``memlab-best``'s candidate generation: every unit of a
    conversation is a candidate) and the named halves."""

    def __init__(self) -> None:
        sets = dev_sets()
        self.lcs = {}
        for name, (ds, _, _) in sets.items():
            lab = Lab(
                ds, embedder=base_embedder(ds), unit="turn", progress=False, cache_vectors=True
            )
            self.lcs[name] = lab.for_tokenizer("porter").candidates_for_system(
                memlab_best().at_k(10)
            )
        conv_tune, conv_rep = conversation_halves(sets["locomo"][0])

        self.halves = {
            "L-q tune": sets["locomo"][1],
            "L-q report": sets["locomo"][2],
            "L-c tune": conv_tune,
            "L-c report": conv_rep,
            "B tune": sets["beam"][1],
            "B report": sets["beam"][2],
        }
        self.split_info = {
            "locomo question split": HALVES["question"],
            "locomo conversation split": HALVES["conversation"],
            "beam": HALVES["conversation"],
            **{h: len(v) for h, v in self.halves.items()},
        }
        self.cache: dict[tuple[str, str], dict[str, np.ndarray]] = {}
        self.masks = {
            h: np.isin(np.array(self.lcs[self.set_of(h)].qids), v) for h, v in self.halves.items()
        }

    @staticmethod
    def set_of(half: str) -> str:
        return "beam" if half.startswith("B") else "locomo"

    def per_query(self, p: Pipeline, name: str) -> dict[str, np.ndarray]:
        return self.lcs[name].score(p.at_k(10), METRICS)

    def eval(self, p: Pipeline, halves: Sequence[str] = TUNE) -> dict[str, tuple[float, ...]]:
        """(R@5 %, R@10 %, nDCG@10) of ``p`` on each named half (per-query values cached
        by the system's parameters, so a grid point met twice is scored once)."""
        values = {}
        for s in {self.set_of(h) for h in halves}:
            key = (s, repr(p.replace(name="x")))
            if key not in self.cache:
                self.cache[key] = self.per_query(p, s)
            values[s] = self.cache[key]
        out = {}
        for h in halves:
            v, m = values[self.set_of(h)], self.masks[h]
            out[h] = (
                round(100 * float(np.nanmean(v["recall@5"][m])), 1),
                round(100 * float(np.nanmean(v["recall@10"][m])), 1),
                round(float(np.nanmean(v["ndcg@10"][m])), 3),
            )
        return out


def objective(r: Mapping[str, tuple[float, ...]], halves: Sequence[str]) -> float:
    """Σ over the halves of R@5 + R@10 (in %)."""
    return round(sum(r[h][0] + r[h][1] for h in halves), 1)


def row(label: str, r: Mapping[str, tuple[float, ...]]) -> dict[str, Any]:
    """One table row: each half as 'R@5 / R@10 / nDCG@10'."""
    return {"system": label, **{h: " / ".join(str(x) for x in v) for h, v in r.items()}}


def grid(space: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    return [dict(zip(space, vals, strict=True)) for vals in itertools.product(*space.values())]


def choose(
    bench: Bench, base: Pipeline, points: list[dict[str, Any]], on: Sequence[str], show: int = 5
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every point on the tune halves; the one with the best objective over ``on`` (ties:
    first in grid order), and the top ``show`` rows."""
    scored = []
    for kw in points:
        r = bench.eval(base.replace(**kw), TUNE)
        scored.append((objective(r, on), kw, r))
    best = max(scored, key=lambda x: x[0])
    top = sorted(scored, key=lambda x: -x[0])[:show]
    return best[1], [{"objective": o, **row(str(kw), r)} for o, kw, r in top]


def verdict(base: Mapping[str, tuple], new: Mapping[str, tuple]) -> str:
    """'helps' / 'neutral' / 'hurts' on LoCoMo's and BEAM's tune halves (R@5 + R@10)."""

    def one(h: str) -> str:
        d = (new[h][0] + new[h][1]) - (base[h][0] + base[h][1])
        return "neutral" if new[h] == base[h] else ("helps" if d > 0 else "hurts")

    a, b = one("L-q tune"), one("B tune")
    kept = {a, b} <= {"helps", "neutral"} and "helps" in {a, b}
    return f"LoCoMo {a}, BEAM {b}: {'kept' if kept else 'not kept'}"


def part_chunk() -> dict[str, Any]:
    """memlab-best-chunk's chunk-as-unit system (``chunk_as_unit``: OpenClaw's ~400-token
    chunks, each scored as one unit, the system this was decided on) with the turn-level
    window and file context added, on LoCoMo's question-split tune half (recall@6 / @10):
    whether the chunk preset should take them too (it does not: ``TURN_CONTEXT_OFF``)."""

    from memlab.datasets.locomo import load_locomo

    ds = load_locomo()
    tune, _ = locomo_split(ds)
    lab = Lab(ds, embedder="local", unit="chunk", progress=False, cache_vectors=True)
    chunk = chunk_as_unit()
    lc = lab.for_tokenizer("porter").candidates_for_system(chunk.at_k(10))
    mask = np.isin(np.array(lc.qids), tune)
    window = {"neighbor_prev2": 0.3, "neighbor_next2": 0.1, "neighbor_agg": "sum"}
    rows = []
    for label, kw in (
        (CHUNK_UNIT_NAME, {}),
        ("+ file context 1.0", {"file_context": 1.0}),
        ("+ window 0.3 / 0.1, sum", window),
        ("+ both", {**window, "file_context": 1.0}),
    ):
        v = lc.score(chunk.replace(**kw).at_k(10), ["recall@6", "recall@10"])
        rows.append({"system": label, **{m: round(float(np.nanmean(v[m][mask])), 3) for m in v}})
    print("\nchunk level, LoCoMo question-split tune half")
    print_table(rows)
    return {"tune": rows}


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    args = ap.parse_args()
    t_all = time.perf_counter()
    bench = Bench()
    log(f"halves: {bench.split_info}")
    out: dict[str, Any] = {"split": bench.split_info}
    base = before()
    both = ("L-q tune", "B tune")
    ref = {
        "vector": bench.eval(preset("vector"), TUNE),
        "bm25": bench.eval(preset("bm25"), TUNE),
        "memlab-best before": bench.eval(base, TUNE),
    }
    b0 = ref["memlab-best before"]
    print("\nreference systems (tune halves; R@5 / R@10 / nDCG@10)")
    print_table([row(k, v) for k, v in ref.items()])
    out["reference_tune"] = ref
    chosen: dict[str, dict[str, Any]] = {}

    def idea(key: str, title: str, pts: list[dict[str, Any]], halves: tuple[str, ...]) -> dict:
        """Choose among ``pts`` on ``halves`` (`choose`), print ``title``, the choice, its
        verdict against the base on every tune half and the top rows; record them under
        ``out[key]``; return the chosen parameters."""
        kw, top = choose(bench, base, pts, halves)
        r = bench.eval(base.replace(**kw), TUNE)
        print(f"\n{title}: {kw}; {verdict(b0, r)}")
        print_table(top)
        out[key] = {"chosen": kw, "top": top, "verdict": verdict(b0, r), "tune": r}
        return kw

    with (
        registered(FILE_MEAN),
        registered(UA_WINDOW, after="neighbor"),
        registered(PRF, after="fusion"),
    ):
        # a. file context
        t0 = time.perf_counter()
        pts = [{"file_context": w} for w in FILE_W] + [
            {"tx_file_mean": w, "tx_file_top": m} for w, m in itertools.product(FILE_W, FILE_TOP)
        ]
        chosen["a"] = idea("a", "a. file context; chosen on tune", pts, both)
        log(f"a: {time.perf_counter() - t0:.0f} s")
        # b. wider neighbour window in named-speaker files (BEAM: user–assistant, neutral)
        t0 = time.perf_counter()
        pts = [{**g, "neighbor_agg": agg} for agg in ("max", "sum") for g in grid(WINDOW)]
        title = "b. neighbour window (named speakers); chosen on LoCoMo tune"
        chosen["b"] = idea("b", title, pts, ("L-q tune",))
        title = "b'. neighbour window (user–assistant, prototype); chosen on BEAM tune"
        idea("b_user_assistant", title, grid(UA_GRID), ("B tune",))
        log(f"b: {time.perf_counter() - t0:.0f} s")
        # c. Rocchio on the vector leg
        t0 = time.perf_counter()
        title = "c. vector PRF (Rocchio, prototype); chosen on tune"
        chosen["c"] = idea("c", title, grid(PRF_GRID), both)
        log(f"c: {time.perf_counter() - t0:.0f} s")
        # combined: the kept engine parameters (a: file_context; b: the window), one joint grid
        t0 = time.perf_counter()
        window = [{**g, "neighbor_agg": chosen["b"]["neighbor_agg"]} for g in grid(WINDOW)]
        pts = [{**g, "file_context": w} for w in COMBINED_FILE_W for g in window]
        scored = [(kw, bench.eval(base.replace(**kw), ("L-q tune", "L-c tune"))) for kw in pts]
        beam = {w: bench.eval(base.replace(file_context=w), ("B tune",)) for w in COMBINED_FILE_W}
        combined: dict[str, Any] = {}
        for label, lo in (("question split", "L-q tune"), ("conversation split", "L-c tune")):
            best = max(
                scored,
                key=lambda x: (
                    objective(x[1], (lo,)) + objective(beam[x[0]["file_context"]], ("B tune",))
                ),
            )
            combined[label] = best[0]
        print(f"\ncombined (a + b), one grid of {len(pts)} points; chosen: {combined}")
        out["combined"] = {"points": len(pts), "chosen": combined}
        log(f"combined grid: {time.perf_counter() - t0:.0f} s")
        # error analysis: R@10 by category on LoCoMo's tune half
        cats = bench.lcs["locomo"].categories
        m = bench.masks["L-q tune"]
        by_cat = []
        for label, p in (
            ("memlab-best before", base),
            ("combined (question split)", base.replace(**combined["question split"])),
        ):
            v = bench.per_query(p, "locomo")["recall@10"]
            by_cat.append(
                {
                    "system": label,
                    **{
                        c: round(100 * float(np.nanmean(v[m & (cats == c)])), 1)
                        for c in sorted(set(cats[m]))
                    },
                }
            )
        print("\nd. LoCoMo tune half, R@10 by category")
        print_table(by_cat)
        out["by_category_tune"] = by_cat
        # the report halves, printed once
        finals = {
            "vector": preset("vector"),
            "bm25": preset("bm25"),
            "memlab-best before": base,
            "+ a (file context)": base.replace(**chosen["a"]),
            "+ b (window)": base.replace(**chosen["b"]),
            "+ a + b, chosen on the question split": base.replace(**combined["question split"]),
            "+ a + b, chosen on conv-26/41/43": base.replace(**combined["conversation split"]),
        }
        rows = []
        for label, p in finals.items():
            r = bench.eval(p, TUNE + REPORT)
            rows.append(row(label, r))
        print("\nall halves (report halves printed here once; R@5 / R@10 / nDCG@10)")
        print_table(rows)
        out["final"] = rows
    now = memlab_best()
    same = all(getattr(now, k) == v for k, v in combined["question split"].items())
    print(f"\nmemlab_best() carries the question-split choice: {same}")
    out["preset_is_the_choice"] = same
    out["chunk"] = part_chunk()
    out["seconds"] = round(time.perf_counter() - t_all, 1)
    report("transfer_ideas", args, {"datasets": list(bench.lcs)}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
