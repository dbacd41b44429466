"""The declared stages: their table, their order, explain's sums, and a stage added
without subclassing `Pipeline` (the worked example of docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.chunking import ChunkerConfig
from memlab.embed import HashingEmbedder
from memlab.pipeline import Pipeline
from memlab.pipeline.explain import explain, ranking_frame
from memlab.pipeline.presets import PRESETS, preset
from memlab.retrieval.fusion import fuse
from memlab.stages import (
    STAGE_ARRAYS,
    STAGES,
    ArrayInfo,
    Stage,
    registered,
    stage_param_defaults,
)
from memlab.stages.legs import fuse_legs, fusion_operands
from memlab.store import MemoryIndex
from tests.conftest import write

QUERIES = ["tried roast number 12 at the cafe", "gateway", "Peter coffee", "flaky watcher"]


@pytest.fixture
def index(small_workspace: Path) -> MemoryIndex:
    # A long log: several small chunks per file, so neighbours are candidates of each other.
    lines = [f"- Coffee note {i}: Peter tried roast number {i} at the cafe.\n" for i in range(40)]
    write(small_workspace, "memory/2026-04-01.md", "# 2026-04-01\n" + "".join(lines))
    idx = MemoryIndex(
        small_workspace,
        embedder=HashingEmbedder(64),
        fts_tokenizer="porter",  # memlab-best's own tokenizer
        chunker=ChunkerConfig("openclaw", 64, 8),
        progress=False,
    )
    idx.sync()
    return idx


def assert_explain_adds_up(p: Pipeline, ex: pd.DataFrame, frame: pd.DataFrame) -> None:
    """vector_term + text_term + other = fused; (fused × decay + neighbor) then every
    registered term, in stage order (a "=" term replaces the running score), = score (to
    1e-12); returned rows = the results."""
    scored = ex[ex["score"].notna()]
    terms = scored["vector_term"] + scored["text_term"] + scored["other"]
    np.testing.assert_allclose(terms, scored["fused"], rtol=0, atol=1e-12)
    total = scored["fused"] * scored["decay"] + scored["neighbor"]
    for key, op in [s.term for s in STAGES if s.term and s.name not in ("decay", "neighbor")]:
        col = STAGE_ARRAYS[key].column
        if col in scored:
            if op == "=":  # the stage replaces the score (best_line)
                total = scored[col]
            else:
                total = total * scored[col] if op == "×" else total + scored[col]
    np.testing.assert_allclose(total, scored["score"], rtol=0, atol=1e-12)
    got = ex[ex["fate"] == "returned"][["qid", "docno", "score"]].reset_index(drop=True)
    assert got.equals(frame[["qid", "docno", "score"]].reset_index(drop=True))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_explain_reproduces_every_score_of_every_preset(index: MemoryIndex, name: str) -> None:
    p = preset(name)
    cs = p.retrieve(index, QUERIES, qids=[f"q{i}" for i in range(len(QUERIES))])
    r = p.rank(cs)
    ex = explain(p, cs, r)
    assert ex["score"].notna().any()
    assert_explain_adds_up(p, ex, ranking_frame(cs, r))  # the same ranking: decay's clock
    assert set(r.stage) <= set(STAGE_ARRAYS)  # every array the stages wrote is declared
    if p.neighbor_prev or p.neighbor_next:
        assert "+ neighbor" in ex.attrs["formula"]
        assert (ex["neighbor"].fillna(0) > 0).any()
    assert_other_is_only_what_the_fusion_adds(p, ex, r.mode)


def assert_other_is_only_what_the_fusion_adds(p: Pipeline, ex: pd.DataFrame, mode: str) -> None:
    """``other`` is not a plug that makes any formula add up: it is 0 for a weighted sum and
    plain RRF, QMD's top-rank bonus (0.05 / 0.02 / 0) with it, 0 without a keyword boost."""
    other = ex.loc[ex["score"].notna(), "other"].to_numpy()
    if mode == "hybrid" and p.fusion == "rrf" and p.rrf_top_bonus:
        bonus = np.array([0.0, 0.02, 0.05])
        assert np.abs(other[:, None] - bonus[None, :]).min(axis=1).max() <= 1e-12
    elif (mode == "hybrid" and p.fusion in ("wsum", "rrf")) or (
        mode == "keyword" and not p.keyword_boost
    ):
        np.testing.assert_allclose(other, 0.0, rtol=0, atol=1e-12)
    if mode == "keyword":  # the formula names the boost only when there is one
        assert ("boost" in ex.attrs["formula"]) == p.keyword_boost


@pytest.mark.parametrize(
    "overrides",
    [
        {"vector_weight": 0.5, "text_weight": 0.25},  # renormalised to 0.667 / 0.333
        {"vector_weight": 0.0, "text_weight": 0.0},  # OpenClaw's rule: both 0 → 0.7 / 0.3
        {"fusion": "rrf", "vector_weight": 0.9, "text_weight": 0.2},  # RRF: weights as given
    ],
)
def test_explain_terms_use_the_effective_weights(index: MemoryIndex, overrides: dict) -> None:
    p = preset("wsum", **overrides)
    cs = p.retrieve(index, QUERIES, qids=[f"q{i}" for i in range(len(QUERIES))])
    r = p.rank(cs)
    ex = explain(p, cs, r)
    assert_explain_adds_up(p, ex, ranking_frame(cs, r))
    assert_other_is_only_what_the_fusion_adds(p, ex, r.mode)
    wv, wt = p.effective_weights()
    both = ex[(ex["vector_rank"] >= 0) & (ex["text_rank"] >= 0) & ex["score"].notna()]
    assert len(both)
    if p.fusion == "wsum":
        np.testing.assert_allclose(both["vector_term"], wv * both["vector_norm"], atol=1e-12)
        np.testing.assert_allclose(both["text_term"], wt * both["text_norm"], atol=1e-12)


def test_active_stages_name_what_each_system_runs() -> None:
    assert preset("openclaw").active_stages() == ("legs", "normalize", "fusion", "selection")
    latest = preset("openclaw-latest").active_stages()
    assert "decay" in latest and "mmr" in latest
    # OpenClaw's vector-only path skips decay and MMR unless rerank_vector_only.
    assert "decay" not in preset("openclaw", decay="exact").active_stages("vector")
    best = preset("memlab-best").active_stages()
    assert best[-5:] == ("neighbor", "file_context", "headings", "identifier_tier", "selection")
    assert [s.name for s in STAGES][:3] == ["legs", "normalize", "fusion"]


def test_context_parameters_default_off_and_presets_unchanged() -> None:
    for name in PRESETS:
        p = preset(name)
        if not name.startswith("memlab-best"):
            assert (p.neighbor_prev, p.neighbor_next, p.drop_headings) == (0.0, 0.0, False)
            assert "neighbor" not in repr(p) and "fts_tokenizer" not in repr(p)
    assert type(preset("memlab-best")) is Pipeline
    assert preset("memlab-best").retrieval_spec().fts_tokenizer == "porter"


@pytest.mark.parametrize("fusion", ["wsum", "rrf", "qmd"])
def test_fusion_stage_is_bit_identical_to_the_fusion_kernels(fusion: str) -> None:
    rng = np.random.default_rng(11)
    q, c = 40, 30
    has_v, has_t = rng.random((q, c)) < 0.6, rng.random((q, c)) < 0.5
    vec = np.where(has_v, rng.normal(size=(q, c)), np.nan)
    text = np.where(has_t, rng.random((q, c)), np.nan)
    vr = np.where(has_v, np.argsort(np.argsort(-np.nan_to_num(vec, nan=-9), axis=1), axis=1), -1)
    tr = np.where(has_t, np.argsort(np.argsort(-np.nan_to_num(text, nan=-9), axis=1), axis=1), -1)
    valid = has_v | has_t
    for wv, wt in [(0.7, 0.3), (0.05, 0.3), (1.0, 0.0), (0.0, 0.0), (0.6, 0.4)]:
        if fusion == "wsum":
            p = Pipeline(vector_weight=wv, text_weight=wt, missing=0.1)
            params = {"vector_weight": wv, "text_weight": wt, "missing": 0.1}
            want = fuse("wsum", vec=vec, text=text, params=params, valid=valid)
        else:
            bonus = fusion == "qmd"
            p = Pipeline(
                fusion="rrf", vector_weight=wv, text_weight=wt, rrf_k=7, rrf_top_bonus=bonus
            )
            params = {"k": 7, "top_bonus": bonus, "vector_weight": wv, "text_weight": wt}
            want = fuse("rrf", vec_rank=vr, text_rank=tr, params=params, valid=valid)
        got = fuse_legs(p, vec, text, has_v, has_t, vr, tr, valid)
        np.testing.assert_array_equal(got, want)
        # What the fast sweep computes from operands prepared once.
        fused, ok = fusion_operands(p, vec, text, has_v, has_t, vr, tr, valid).fuse(wv, wt, p.rrf_k)
        np.testing.assert_array_equal(np.where(ok, fused, np.nan), want)


# ---------------------------------------------------------------- a stage of one's own
# The worked example: a "length prior" that divides each score by 1 + a·ln(lines), a
# stage and a parameter (off at 0), declared in ~20 lines, no Pipeline subclass.
def length_prior(p: Pipeline, cs, st: dict) -> dict:
    """final × 1 / (1 + length_prior · ln(lines of the chunk))."""
    t = cs.table
    lines = (t.end_lines - t.start_lines + 1)[np.maximum(cs.pos, 0)]
    mult = np.where(st["valid"], 1.0 / (1.0 + p.length_prior * np.log(lines)), np.nan)
    return {"length": mult, "final": st["final"] * mult}


def check_prior(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")


LENGTH_PRIOR = Stage(
    "length_prior",
    length_prior,
    active=lambda p, mode: p.length_prior > 0,
    writes=("length", "final"),
    arrays={"length": ArrayInfo("length prior multiplier 1/(1 + a·ln lines)", "length")},
    params={"length_prior": 0.0},
    check=check_prior,
    term=("length", "×"),
    inputs={"table", "pos"},
    reads={"valid", "final"},
)


def test_a_registered_stage_is_a_parameter_in_scores_explain_and_repr(index) -> None:
    with registered(LENGTH_PRIOR):
        base = preset("memlab-best")
        assert base.length_prior == 0.0 and base.get_params()["length_prior"] == 0.0
        assert "length_prior" not in base.active_stages()
        p = base.replace(length_prior=0.5)
        assert p.length_prior == 0.5 and "length_prior=0.5" in repr(p)
        assert p.active_stages()[-3:] == ("length_prior", "identifier_tier", "selection")
        assert p.replace(length_prior=0.0) == base  # the default is "off", stored as such
        with pytest.raises(ValueError, match="length_prior"):
            base.replace(length_prior=-1)
        cs = p.retrieve(index, QUERIES)
        before, after = base.scores(cs), p.scores(cs)
        np.testing.assert_array_equal(after["final"], before["final"] * after["length"])
        assert (after["length"][after["valid"]] < 1).any()
        ex = explain(p, cs)
        assert "score = (fused + neighbor + file_context) × length + id_tier" in ex.attrs["formula"]
        assert_explain_adds_up(p, ex, p.run(cs))
        assert "length" in p.run(cs).columns
    assert "length_prior" not in stage_param_defaults() and "length" not in STAGE_ARRAYS
    with pytest.raises(ValueError, match="unknown pipeline parameter"):
        Pipeline().replace(length_prior=0.5)


def test_a_registered_stage_is_swept_like_any_parameter(tmp_path: Path) -> None:
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.eval.fastsweep import fast_path_reason
    from memlab.eval.lab import Lab
    from memlab.eval.sweep import sweep

    ds = generate(SynthConfig(days=6, queries_per_type=3, notes_per_day=5), tmp_path / "d")
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="chunk", index_dir=tmp_path / "i")
    with registered(LENGTH_PRIOR):
        base = preset("openclaw", min_score=0.0, keyword_mode="or")
        res = sweep(lab, base, {"length_prior": [0.0, 2.0]}, ["recall@6"])
        lc = lab.candidates_for([base])[base.name]
        assert "length_prior" in fast_path_reason(lc.cs, [base.replace(length_prior=2.0)])
        for v in (0.0, 2.0):
            s = base.replace(length_prior=v).at_k(6)
            got = res.table.loc[res.table["length_prior"] == v, "mean"].item()
            want = float(np.nanmean(lc.score(s, ["recall@6"])["recall@6"]))
            assert got == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------- the one selection
def reference_select(final, valid, has_text, order, ms, thr, k, fill, top_up):
    """OpenClaw's selection for one row, written out as a loop."""
    ranked = [c for c in order if valid[c]]
    strict = [c for c in ranked if final[c] >= ms]
    how = 0
    if not strict and thr is not None:
        strict, how = [c for c in ranked if has_text[c] and final[c] >= thr], 1
    elif not strict and top_up:
        strict, how = ranked, 3
    out = [(c, how) for c in strict[:k]]
    if fill:
        out += [(c, 2) for c in ranked if has_text[c] and c not in strict[:k]][: k - len(out)]
    return out


@pytest.mark.parametrize("variant", ["strict", "relaxed", "fill", "top-up", "mmr-order"])
def test_select_rows_follows_the_rules_written_out(variant: str) -> None:
    from memlab.stages.selection import select_rows

    rng = np.random.default_rng(5)
    r, c, k = 300, 9, 4
    final = np.round(rng.normal(0.3, 0.3, size=(r, c)), 1)  # ties on purpose
    valid = rng.random((r, c)) < 0.8
    final[~valid] = np.nan
    has_text = rng.random((r, c)) < 0.5
    thr = 0.1 if variant == "relaxed" else None
    order = None
    if variant == "mmr-order":  # any permutation of the valid prefix, as MMR returns
        key = np.where(valid, -final, np.inf)
        order = np.argsort(key, axis=1, kind="stable")
        for i in range(r):
            n = int(valid[i].sum())
            order[i, :n] = rng.permutation(order[i, :n])
    cols, scores, sel = select_rows(
        final,
        valid,
        has_text,
        min_score=0.5,
        max_results=k,
        relaxed_threshold=thr,
        fill_keyword_only=variant == "fill",
        top_up=variant == "top-up",
        order=order,
    )
    for i in range(r):
        o = (
            order[i]
            if order is not None
            else np.argsort(np.where(valid[i], -final[i], np.inf), kind="stable")
        )
        want = reference_select(
            final[i], valid[i], has_text[i], o, 0.5, thr, k, variant == "fill", variant == "top-up"
        )
        got = [(int(a), int(b)) for a, b in zip(cols[i], sel[i], strict=True) if a >= 0]
        assert got == want, i
        np.testing.assert_array_equal(scores[i][: len(want)], final[i][[a for a, _ in want]])


# ---------------------------------------------------------------- declared reads
def test_a_stage_sees_only_what_it_declares(index) -> None:
    """A stage runs on views: a parameter, candidate field or array it did not declare
    raises UndeclaredRead naming the stage and the name, through the helpers it calls
    too; a key it returns outside ``writes`` is refused."""
    from memlab.stages.views import UndeclaredRead

    def reads_weight(p, cs, st):
        return {"final": st["final"] * p.vector_weight}

    sneaky = Stage("sneaky", reads_weight, lambda p, mode: True, ("final",), reads={"final"})
    base = preset("openclaw")
    cs = base.retrieve(index, QUERIES)
    with registered(sneaky), pytest.raises(UndeclaredRead, match="'sneaky' reads 'vector_weight'"):
        base.scores(cs)
    peeks = Stage("peeks", lambda p, cs, st: {"final": st["fused"]}, lambda p, m: True, ("final",))
    with registered(peeks), pytest.raises(UndeclaredRead, match="'peeks' reads 'fused'"):
        base.scores(cs)
    spills = Stage(
        "spills",
        lambda p, cs, st: {"extra": st["final"]},
        lambda p, m: True,
        ("final",),
        reads={"final"},
    )
    with registered(spills), pytest.raises(ValueError, match="'spills' wrote \\['extra'\\]"):
        base.scores(cs)
    # Declared, the same read is fine, and the stage's own parameters need no declaring.
    honest = Stage(
        "honest",
        reads_weight,
        lambda p, mode: True,
        ("final",),
        uses={"vector_weight"},
        reads={"final"},
    )
    plain = base.scores(cs)["final"]
    with registered(honest):
        np.testing.assert_array_equal(base.scores(cs)["final"], plain * 0.7)


def test_order_stages_never_change_a_score() -> None:
    """The floor rule (memlab.stages.floor) counts every order stage as neutral, and no
    order stage declares a score term."""
    from memlab.stages import STAGES
    from memlab.stages.floor import _NEUTRAL

    order = [s for s in STAGES if s.kind == "order"]
    assert [s.name for s in order] == [
        "current_order",
        "tie_order",
        "mmr",
        "novel_lines",
        "selection",
    ]
    assert all(s.name in _NEUTRAL and s.term is None for s in order)
