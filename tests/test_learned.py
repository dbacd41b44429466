"""The learned stage (memlab.stages.learned) and the LTR helpers (memlab.eval.ltr)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import memlab.stages.learned as learned
from memlab.chunking import ChunkerConfig
from memlab.embed import HashingEmbedder
from memlab.eval import ltr
from memlab.pipeline.presets import memlab_best, memlab_learned
from memlab.stages.context import neighbor_positions
from memlab.store import MemoryIndex
from tests.conftest import REPO, write

QUERIES = ["tried roast number 12 at the cafe", "gateway", "Peter coffee", "flaky watcher"]
ALL = [*learned.BASE_FEATURES, "vz*qlen", "tz*agree", "vz*vgap"]


@pytest.fixture
def cs(small_workspace: Path):
    lines = [f"- Coffee note {i}: Peter tried roast number {i} at the cafe.\n" for i in range(40)]
    write(small_workspace, "memory/2026-04-01.md", "# 2026-04-01\n" + "".join(lines))
    idx = MemoryIndex(
        small_workspace,
        embedder=HashingEmbedder(64),
        fts_tokenizer="porter",
        chunker=ChunkerConfig("openclaw", 64, 8),
        progress=False,
    )
    idx.sync()
    return memlab_best().retrieve(idx, QUERIES)


def base_features(p, cs):
    st = p.replace(learned_model=()).scores(cs)
    feats = learned.candidate_features(cs, st["has_vec"], st["has_text"], st["valid"], st["final"])
    return feats, st


def test_stage_equals_sklearn_decision_function(cs) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    p = memlab_best(neighbor_prev=0.0, neighbor_next=0.0)
    feats, st = base_features(p, cs)
    qi, ci = np.nonzero(st["valid"])
    X = learned.feature_matrix(feats, ALL)[qi, ci]
    # Labels that depend on the features, so the coefficients are far from zero.
    y = (X[:, 0] + 0.5 * X[:, 1] + np.random.default_rng(0).normal(0, 0.5, len(X)) > 0).astype(int)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000)).fit(X, y)
    rows = ltr.export_linear(model, ALL)
    assert all(isinstance(v, float) for r in rows for v in r[1:])
    got = p.replace(learned_model=rows).scores(cs)
    assert np.array_equal(got["valid"], st["valid"])
    np.testing.assert_allclose(got["final"][qi, ci], model.decision_function(X), rtol=0, atol=1e-9)
    assert np.isnan(got["final"][~got["valid"]]).all()
    # explain's term: score before + learned = the new score
    np.testing.assert_allclose(st["final"][qi, ci] + got["learned"][qi, ci], got["final"][qi, ci])


def test_off_is_bit_identical(cs) -> None:
    p = memlab_best()
    assert p.learned_model == () and "learned" not in p.active_stages()
    on = p.replace(learned_model=(("vz", 0.0, 1.0, 1.0),))
    assert "learned" in on.active_stages()
    assert on.replace(learned_model=()) == p
    a, b = p.scores(cs), p.replace(learned_model=()).scores(cs)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    ra, rb = p.rank(cs), p.replace(learned_model=()).rank(cs)
    np.testing.assert_array_equal(ra.columns, rb.columns)


def test_one_feature_model_ranks_by_that_feature(cs) -> None:
    p = memlab_best(neighbor_prev=0.0, neighbor_next=0.0)
    feats, st = base_features(p, cs)
    got = p.replace(learned_model=(("vz", 0.3, 2.0, 4.0), ("bias", 0.0, 1.0, -1.0))).scores(cs)
    v = st["valid"]
    np.testing.assert_allclose(got["final"][v], 4.0 * (feats["vz"][v] - 0.3) / 2.0 - 1.0)


def test_features_are_finite_and_shaped(cs) -> None:
    p = memlab_best()
    feats, st = base_features(p, cs)
    valid = st["valid"]
    assert set(feats) == set(learned.BASE_FEATURES)
    for name, f in feats.items():
        assert f.shape == cs.pos.shape, name
        assert np.isfinite(f).all(), name
        assert (f[~valid] == 0).all(), name
    # ranks: the vector leg's first hit has reciprocal rank 1
    first = (cs.vec_rank == 0) & valid
    assert first.any() and (feats["vrr"][first] == 1.0).all()
    assert ((feats["agree"] >= 0) & (feats["agree"] <= 1)).all()
    assert ((feats["vmm"] >= 0) & (feats["vmm"] <= 1)).all()
    # a z-score over a query's vector hits has mean 0
    has_v = st["has_vec"]
    for q in range(len(cs)):
        if has_v[q].sum() > 1:
            assert abs(feats["vz"][q][has_v[q]].mean()) < 1e-9
    # lengths are the chunk texts' lengths
    q0 = np.nonzero(valid[0])[0][:3]
    texts = cs.texts(cs.pos[0, q0])
    np.testing.assert_allclose(feats["loglen"][0, q0], np.log1p([len(t) for t in texts]))
    # the previous-neighbour feature is the previous chunk's own vz in the same query
    prev, _ = neighbor_positions(cs.table)
    checked = 0
    for q in range(len(cs)):
        col_of = {int(pp): c for c, pp in enumerate(cs.pos[q]) if valid[q, c]}
        for c, pp in enumerate(cs.pos[q]):
            if valid[q, c] and prev[pp] >= 0 and int(prev[pp]) in col_of:
                assert feats["pvz"][q, c] == feats["vz"][q, col_of[int(prev[pp])]]
                checked += 1
    assert checked > 0


def test_bad_models_are_refused() -> None:
    p = memlab_best()
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        p.replace(learned_model=(("nope", 0.0, 1.0, 1.0),))
    with pytest.raises(ValueError, match="scale > 0"):
        p.replace(learned_model=(("vz", 0.0, 0.0, 1.0),))
    with pytest.raises(ValueError, match="learned_model"):
        p.replace(learned_model=(("vz", 0.0, 1.0),))


def test_conversation_split_and_grouped_folds_never_share_a_conversation() -> None:
    beam = [f"100K-{i}" for i in range(1, 11)]
    tune, report = ltr.conversation_split(beam * 3)
    assert tune == ["100K-1", "100K-3", "100K-5", "100K-7", "100K-9"]
    assert report == ["100K-2", "100K-4", "100K-6", "100K-8", "100K-10"]
    tune, report = ltr.conversation_split(["conv-43", "conv-26", "conv-30", "conv-42", "conv-41"])
    assert (tune, report) == (["conv-26", "conv-41", "conv-43"], ["conv-30", "conv-42"])
    groups = np.random.default_rng(1).choice(["a", "b", "c", "d", "e", "f", "g"], 500)
    folds = ltr.grouped_folds(groups, 4)
    assert len(folds) == 4
    seen = np.zeros(len(groups), dtype=int)
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        seen[test] += 1
    assert (seen == 1).all()
    with pytest.raises(ValueError, match="at least 2 groups"):
        ltr.grouped_folds(["a", "a"], 2)


def test_row_weights_balance_queries_and_datasets() -> None:
    rows = ltr.Rows(
        X=np.zeros((6, 1)),
        y=np.zeros(6, dtype=int),
        query=np.array([0, 0, 0, 1, 0, 0]),
        group=np.array(["g"] * 6, dtype=object),
        dataset=np.array(["a", "a", "a", "a", "b", "b"], dtype=object),
        names=["vz"],
    )
    w = ltr.row_weights(rows)
    # data set a: query 0 (3 rows) and query 1 (1 row) weigh the same; a and b weigh the same
    assert w[:3].sum() == pytest.approx(w[3])
    assert w[:4].sum() == pytest.approx(w[4:].sum())
    assert w.mean() == pytest.approx(1.0)


def test_training_rows_follow_the_questions_and_the_evidence(tmp_path: Path) -> None:
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.eval.lab import Lab

    ds = generate(SynthConfig(days=6, queries_per_type=2, notes_per_day=5), tmp_path / "d")
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="chunk", index_dir=tmp_path / "i")
    base = memlab_best(neighbor_prev=0.0, neighbor_next=0.0)
    lc = lab.candidates_for_system(base)
    q = ds.queries
    group_of = dict(zip(q["qid"], q["group"], strict=True))
    qids = [x for i, x in enumerate(lc.qids) if lc.has_evidence[i]][::2]
    rows = ltr.training_rows(lc, base, ["vz", "tz", "vz*qlen"], qids, group_of=group_of)
    assert set(np.asarray(lc.qids)[rows.query]) <= set(qids)
    assert rows.X.shape == (len(rows.y), 3) and np.isfinite(rows.X).all()
    np.testing.assert_allclose(
        rows.X[:, 2], rows.X[:, 0] * np.log1p([len(lc.cs.queries[i].split()) for i in rows.query])
    )
    assert 0 < rows.y.sum() < len(rows.y)
    # every positive row covers evidence; each question's positives = its covering candidates
    _, valid = ltr.query_rows(lc, base)
    covering = (lc.covers.any(axis=2) & valid)[[lc.qids.index(x) for x in qids]].sum()
    assert rows.y.sum() == covering
    # a linear ranker fitted on them orders the training positives above most negatives
    for fit in (ltr.fit_linear, ltr.fit_pairwise):
        m = ltr.export_linear(fit(rows), rows.names)
        assert m[-1][0] == "bias"
        s = learned.linear_score(np.c_[rows.X, np.ones(len(rows.X))], m)
        assert s[rows.y == 1].mean() > s[rows.y == 0].mean()


def test_the_candidate_preset_carries_the_fitted_model(cs) -> None:
    p = memlab_learned()
    assert p.learned_model == learned.fitted_model() and len(p.learned_model) > 1
    names_on = p.active_stages()
    assert names_on.index("headings") < names_on.index("learned") < names_on.index("selection")
    st = p.scores(cs)
    feats, before = base_features(p, cs)
    names = [r[0] for r in p.learned_model]
    want = learned.linear_score(learned.feature_matrix(feats, names), p.learned_model)
    v = st["valid"]
    np.testing.assert_allclose(st["final"][v], want[v], rtol=0, atol=1e-12)
    assert np.array_equal(v, before["valid"])


def test_the_stage_is_declared_whatever_a_process_imported() -> None:
    """Every pipeline has ``learned_model`` from the first import of the engine on: the
    stage is built in (off by default), not registered by importing its module."""
    code = (
        "import sys; from memlab.pipeline import Pipeline; from memlab.stages import STAGES; "
        "p = Pipeline(); "
        "assert p.get_params()['learned_model'] == (), p.get_params(); "
        "names = [s.name for s in STAGES]; "
        "assert names.index('headings') + 1 == names.index('learned'), names; "
        "assert 'learned' not in p.active_stages(); print('ok')"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_the_fitted_model_is_a_data_file_read_back_bit_identical(tmp_path: Path) -> None:
    """``learned_model.json`` (package data) holds the rows; `save_model` writes what
    `load_model` reads back exactly, and `fitted_model` is the packaged file's rows."""
    packaged = learned.model_path()
    assert packaged.name == learned.MODEL_FILE and packaged.is_file()
    data = json.loads(packaged.read_text())
    model = learned.fitted_model()
    assert model == learned.load_model(packaged) and learned.fitted_model() is model
    assert [list(r) for r in model] == data["rows"] and model[-1][0] == "bias"
    assert all(type(x) is float for r in model for x in r[1:])
    about = {k: v for k, v in data.items() if k != "rows"}
    out = learned.save_model(model, tmp_path / "m.json", **about)
    assert out.read_text() == packaged.read_text()  # the script's writer made the packaged file
    assert learned.load_model(out) == model
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": [["nope", 0.0, 1.0, 1.0]]}))
    with pytest.raises(ValueError, match=r"bad\.json: unknown feature 'nope'"):
        learned.load_model(bad)
    bad.write_text("[]")
    with pytest.raises(ValueError, match="'rows' list"):
        learned.load_model(bad)
