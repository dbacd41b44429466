"""memlab.widgets.Explorer, driven from Python as a user would drive it in JupyterLab."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab
from memlab.pipeline.presets import preset
from memlab.stages.best_line import line_scores_key
from memlab.store import MemoryIndex
from memlab.viz import mark_relevant
from memlab.widgets import Explorer

EMBEDDER = HashingEmbedder(dimensions=128)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("widgets")
    ds = generate(SynthConfig(days=8, seed=5, queries_per_type=4), root / "synth")
    Lab(ds, embedder=EMBEDDER, index_dir=root / "index", progress=False).index("default")
    return ds, root / "index"


@pytest.fixture
def lab(data, monkeypatch: pytest.MonkeyPatch) -> Lab:
    """A fresh Lab over the module's (already built) index, counting its retrievals."""
    ds, index_dir = data
    lab = Lab(ds, embedder=EMBEDDER, index_dir=index_dir, progress=False)
    lab.calls = []  # type: ignore[attr-defined]
    real = lab.retrieve

    def counting(depth, *, keyword_mode, keyword_fallback, vector):
        lab.calls.append((depth, keyword_mode))  # type: ignore[attr-defined]
        return real(
            depth, keyword_mode=keyword_mode, keyword_fallback=keyword_fallback, vector=vector
        )

    monkeypatch.setattr(lab, "retrieve", counting)
    return lab


def _question_with_evidence_found(ex: Explorer, lab: Lab) -> str:
    for qid in lab.dataset.queries["qid"]:
        ex.question.value = qid
        if ex.results["evidence"].any():
            return qid
    raise AssertionError("no question has its evidence in the results")


def test_vector_weight_one_orders_by_vector_leg(lab: Lab) -> None:
    q = lab.dataset.queries
    exact = q.loc[q["category"] == "exact", "qid"].iloc[0]  # its AND query has keyword hits
    ex = Explorer(lab, preset="openclaw", qid=exact)
    ex.min_score.value = -1.0
    ex.max_results.value = 10
    before = ex.results_html.value
    ex.vector_weight.value = 1.0
    df = ex.results
    assert ex.pipeline.vector_weight == 1.0 and ex.pipeline.text_weight == 0.0
    assert len(df) >= 5
    assert df["vector_rank"].tolist() == list(range(len(df)))
    assert np.all(np.diff(df["score"].to_numpy()) <= 0)
    assert ex.results_html.value != before
    # Text weight only: keyword hits first, in keyword-leg order.
    ex.vector_weight.value = 0.0
    df = ex.results
    kw = df["text_rank"].to_numpy()
    n_kw = int((kw >= 0).sum())
    assert n_kw > 0
    assert kw[:n_kw].tolist() == sorted(kw[:n_kw].tolist())
    assert (kw[:n_kw] >= 0).all()


def test_slider_moves_rescore_cached_candidates(lab: Lab) -> None:
    ex = Explorer(lab)
    assert len(lab.calls) == 1 and ex.retrievals == 1
    ex.vector_weight.value = 0.3
    ex.min_score.value = 0.1
    ex.candidate_multiplier.value = 8.0
    ex.max_results.value = 25  # depth 200: still within the prefetched candidates
    ex.mmr.value = "jaccard"
    ex.mmr_lambda.value = 0.4
    ex.decay.value = "latest"
    ex.half_life_days.value = 10.0
    assert len(lab.calls) == 1 and ex.retrievals == 1
    assert ex.pipeline.mmr == "jaccard" and ex.pipeline.half_life_days == 10.0
    ex.preset.value = "bm25"  # an OR keyword query: other candidates
    assert len(lab.calls) == 2 and lab.calls[-1][1] == "or"
    ex.preset.value = "openclaw"
    assert len(lab.calls) == 2


def test_deeper_setting_retrieves_once_more(lab: Lab) -> None:
    ex = Explorer(lab, prefetch_depth=1)
    assert len(lab.calls) == 1
    first_depth = lab.calls[0][0]
    ex.max_results.value = 20  # 20 × 4 = 80 candidates per leg > cached
    assert len(lab.calls) == 2 and lab.calls[1][0] > first_depth
    ex.max_results.value = 5
    ex.vector_weight.value = 0.9
    assert len(lab.calls) == 2


def test_preset_dropdown_syncs_widgets_and_reset(lab: Lab) -> None:
    ex = Explorer(lab)
    ex.preset.value = "rrf"
    assert ex.min_score.value == 0.0
    assert ex.vector_weight.value == 0.5
    assert ex.pipeline.get_params() == preset("rrf").get_params()
    assert ex.results["score"].max() <= 2 / 61 + 1e-12
    ex.min_score.value = 0.02
    assert ex.pipeline.name == "rrf (edited)"
    assert "min_score=0.02" in ex.status.value
    ex.reset.click()
    assert ex.pipeline.get_params() == preset("rrf").get_params()
    assert ex.min_score.value == 0.0


def test_live_metrics_equal_run_experiment(lab: Lab) -> None:
    ex = Explorer(lab, metrics=("recall@5", "recall@10", "mrr"))
    exp = run_experiment([preset("openclaw")], lab, ["recall@5", "recall@10", "mrr"])
    for m in ("recall@5", "recall@10", "mrr"):
        assert ex.metrics[m] == pytest.approx(exp.table.loc["openclaw", m])
        assert ex.baseline_metrics[m] == ex.metrics[m]
    ex.min_score.value = 0.0
    ex.vector_weight.value = 0.6
    exp2 = run_experiment([ex.pipeline], lab, ["recall@5", "recall@10", "mrr"])
    for m in ("recall@5", "recall@10", "mrr"):
        assert ex.metrics[m] == pytest.approx(exp2.table.loc[ex.pipeline.name, m])
    assert ex.metrics["recall@10"] != ex.baseline_metrics["recall@10"]
    html = ex.metrics_html.value
    assert "recall@10" in html and f"{ex.metrics['recall@10']:.3f}" in html
    by_cat = exp2.by_category("recall@10")[ex.pipeline.name]
    for cat, value in by_cat.items():
        assert f">{cat}</td><td>{value:.3f}<" in html
    ex.live_metrics.value = False
    assert "off" in ex.metrics_html.value


def test_evidence_marks_and_panel(lab: Lab) -> None:
    ex = Explorer(lab, preset="bm25")
    qid = _question_with_evidence_found(ex, lab)
    df = ex.results
    assert df["qid"].unique().tolist() == [qid]
    # Coverage arrays and a plain line-overlap check agree on which results are evidence.
    marked = mark_relevant(df, lab.dataset.evidence)
    assert marked["relevant"].tolist() == df["evidence"].tolist()
    html = ex.evidence_html.value
    ev = lab.dataset.evidence[lab.dataset.evidence["qid"] == qid]
    first = ev.iloc[0]
    assert f"{first.path}#L{first.start_line}-L{first.end_line}" in html
    line = (
        (lab.dataset.workspaces["default"] / first.path)
        .read_text()
        .splitlines()[first.start_line - 1]
    )
    assert " ".join(line.split())[:60] in html
    rank = int(df.index[df["evidence"]][0]) + 1
    assert f"found at rank {rank}" in html
    covered = sum(
        any(
            r.path == e.path and r.start_line <= e.end_line and e.start_line <= r.end_line
            for r in df.itertuples()
        )
        for e in ev.itertuples()
    )
    assert html.count("found at rank") == covered
    assert f"evidence: {covered} of {len(ev)} spans found" in html
    assert "green rows cover an evidence span" in ex.results_html.value


def test_question_dropdown_and_free_text(lab: Lab) -> None:
    ex = Explorer(lab)
    q = lab.dataset.queries
    qid = q["qid"].iloc[3]
    ex.question.value = qid
    assert ex.query.value == q["query"].iloc[3]
    assert ex.results["qid"].unique().tolist() in ([qid], [])
    before = ex.retrievals
    ex.min_score.value = 0.0
    ex.query.value = "who likes coffee"
    assert ex.retrievals == before + 1
    assert "free-text query" in ex.status.value
    assert "evidence" not in ex.results.columns
    ex.vector_weight.value = 1.0  # re-scores the cached free-text candidates
    assert ex.retrievals == before + 1
    assert ex.results["vector_rank"].tolist() == list(range(len(ex.results)))


def test_explorer_on_an_index(small_workspace: Path, tmp_path: Path) -> None:
    idx = MemoryIndex(small_workspace, db_path=tmp_path / "i.sqlite", embedder=EMBEDDER)
    ex = Explorer(idx, preset="rrf", query="which machine hosts the gateway")
    assert ex.retrievals == 1
    assert "MEMORY.md" in ex.results["path"].tolist()
    assert "MEMORY.md" in ex.results_html.value
    # The lab baselines share one candidate generation (OR keyword query): switching
    # between them, or moving a threshold or weight, re-scores the cached candidates.
    ex.preset.value = "wsum"
    ex.min_score.value = -1.0
    ex.vector_weight.value = 1.0
    assert ex.results["vector_rank"].tolist() == list(range(len(ex.results)))
    assert ex.retrievals == 1
    # openclaw is OpenClaw's whole system (AND keyword query): its own candidates.
    ex.preset.value = "openclaw"
    assert ex.retrievals == 2
    ex.query.value = "commit a828e60"
    assert ex.retrievals == 3
    assert ex.metrics == {}
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    ex.query.value = ""
    assert ex.results.empty and "type a query" in ex.results_html.value


def test_bad_arguments(lab: Lab) -> None:
    with pytest.raises(ValueError, match="unknown preset"):
        Explorer(lab, preset="nope")
    with pytest.raises(ValueError, match="not a question"):
        Explorer(lab, qid="nope")
    with pytest.raises(ValueError, match="category_metric"):
        Explorer(lab, metrics=("mrr",), category_metric="recall@10")


def test_explorer_runs_each_preset_on_its_own_index(data, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `memlab eval` and `PresetLab`: memlab-best on porter, openclaw on unicode61."""
    import memlab.eval.lab.labs as lab_mod  # where Lab looks up `retrieve`

    ds, _ = data
    seen: list[str] = []
    real = lab_mod.retrieve

    def recording(index: MemoryIndex, *a, **k):
        seen.append(index.fts_tokenizer)
        return real(index, *a, **k)

    monkeypatch.setattr(lab_mod, "retrieve", recording)
    ex = Explorer(ds, preset="memlab-best", embedder=EMBEDDER)
    assert set(seen) == {"porter"}
    seen.clear()
    ex.preset.value = "openclaw"
    assert set(seen) == {"unicode61"}
    ex.preset.value = "memlab-best"
    ex.query.value = "coffee roast preference"  # free text: the sibling's index too
    assert ex._free_index(ex.pipeline).fts_tokenizer == "porter"
    assert not ex.results.empty


def test_explorer_switches_to_a_best_line_preset_and_names_a_refused_setting(
    small_workspace: Path, tmp_path: Path
) -> None:
    idx = MemoryIndex(small_workspace, db_path=tmp_path / "i.sqlite", embedder=EMBEDDER)
    ex = Explorer(idx, preset="memlab-best", query="which machine hosts the gateway")
    # Same candidate key as memlab-best but for its line scores: retrieved again, not reused
    ex.preset.value = "memlab-best-chunk"
    assert ex.retrievals == 2
    assert "MEMORY.md" in ex.results["path"].tolist()
    assert ex.results["best_line"].notna().all()
    ex.decay.value = "exact"  # memlab-best-chunk refuses decay: said, not raised
    assert "not applied" in ex.status.value and "decay=&#x27;exact&#x27;" in ex.status.value


def test_free_text_on_a_lab_scores_lines_on_the_labs_line_index(data, tmp_path: Path) -> None:
    """A best_line system's free-text query takes its line scores from the lab's line
    index (the one its questions are scored on): no line view is built beside the chunk
    index, and the scores equal a line view's (same files, one line per row)."""
    ds, _ = data
    index_dir = tmp_path / "index"
    lab = Lab(ds, embedder=EMBEDDER, index_dir=index_dir, progress=False)
    ex = Explorer(lab, preset="memlab-best-chunk", query="who likes coffee")
    assert not list(index_dir.glob("*.lines-*")), "a duplicate line view was built"
    got = ex.results.set_index(["path", "start_line"])["best_line"]
    assert got.notna().all()

    p = ex.pipeline
    chunk_index = lab.lab_for(p).index("default")
    via_view = p.retrieve(chunk_index, ["who likes coffee"], qids=["q"], depth=200)
    assert list(index_dir.glob("*.lines-*"))  # now built, for the comparison only
    want = p.run(via_view).set_index(["path", "start_line"])["best_line"]
    np.testing.assert_allclose(got.to_numpy(), want.loc[got.index].to_numpy(), rtol=1e-6)


def test_a_line_index_unlike_the_chunk_indexs_line_view_is_refused(
    data, small_workspace: Path, tmp_path: Path
) -> None:
    ds, index_dir = data
    lab = Lab(ds, embedder=EMBEDDER, index_dir=index_dir, progress=False)
    p = preset("memlab-best-chunk")
    chunks = lab.lab_for(p).index("default")
    with pytest.raises(ValueError, match=r"line_index .*not one line per row"):
        p.retrieve(chunks, ["coffee"], line_index=chunks)
    lines = lab.line_index(p, "default")
    assert lines.chunker.kind == "line" and lines.fts_tokenizer == "porter"
    p.retrieve(chunks, ["coffee"], line_index=lines)  # the lab's own: accepted
    unicode_lines = lab.line_lab().for_tokenizer("unicode61").index("default")
    with pytest.raises(ValueError, match=r"FTS5 tokenizer is 'unicode61', not 'porter'"):
        p.retrieve(chunks, ["coffee"], line_index=unicode_lines)
    other = MemoryIndex(small_workspace, db_path=tmp_path / "o.sqlite", embedder=EMBEDDER)
    with pytest.raises(ValueError, match=r"its workspace is .*, the chunk index's"):
        p.retrieve(chunks, ["coffee"], line_index=other.line_view("porter"))
    with pytest.raises(ValueError, match="best_line is off"):
        preset("memlab-best").retrieve(chunks, ["coffee"], line_index=lines)


def test_a_line_system_without_a_tokenizer_scores_the_same_lines_in_the_lab_and_the_index(
    data, tmp_path: Path
) -> None:
    """bm25 names no FTS5 tokenizer: its lines take the chunk index's (porter for
    memlab-best-chunk's settings) in memory_search, in the lab and in the Explorer alike."""
    ds, _ = data
    lab = Lab(ds, embedder=EMBEDDER, index_dir=tmp_path / "index", progress=False)
    assert lab.fts_tokenizer == "unicode61"  # the lab's own differs from the chunk index's
    p = preset("memlab-best-chunk").replace(best_line="bm25")
    chunks = lab.lab_for(p).index("default")
    assert chunks.fts_tokenizer == "porter"
    lines = lab.line_index(p, "default")
    assert lines.fts_tokenizer == "porter"
    q = lab.dataset.queries
    via_view = p.retrieve(chunks, q["query"].tolist(), qids=q["qid"].tolist(), depth=p.depth)
    via_lab = p.retrieve(
        chunks, q["query"].tolist(), qids=q["qid"].tolist(), depth=p.depth, line_index=lines
    )
    key = line_scores_key(p)
    np.testing.assert_array_equal(via_lab.extra[key], via_view.extra[key])
    # memlab eval's ranking (the lab's candidates, lines from its line lab) is memory_search's
    cols = ["qid", "path", "start_line", "score"]
    in_lab = p.run(lab.candidates_for_system(p).cs)[cols].reset_index(drop=True)
    in_index = p.run(via_view)[cols].reset_index(drop=True)
    assert len(in_index) > 0
    pd.testing.assert_frame_equal(in_lab, in_index)


def test_the_same_free_text_on_another_questions_workspace_searches_that_workspace(
    tmp_path: Path,
) -> None:
    from memlab.datasets.base import Dataset

    for group, day, food in (("a", "2026-01-05", "salmon"), ("b", "2026-02-07", "tuna")):
        (tmp_path / group / "memory").mkdir(parents=True)
        (tmp_path / group / "memory" / f"{day}.md").write_text(
            f"# {day}\n\nMiso the cat eats {food} every morning.\nThe gateway runs on the NUC.\n"
        )
    ds = Dataset(
        name="two",
        root=tmp_path,
        workspaces={g: tmp_path / g for g in ("a", "b")},
        queries=pd.DataFrame(
            {
                "qid": ["qa", "qb"],
                "query": ["what does Miso eat", "where is the gateway"],
                "group": ["a", "b"],
                "category": ["x", "x"],
                "time": [None, None],
            }
        ),
        evidence=pd.DataFrame(
            {
                "qid": ["qa", "qb"],
                "path": ["memory/2026-01-05.md", "memory/2026-02-07.md"],
                "start_line": [3, 4],
                "end_line": [3, 4],
                "grade": [1, 1],
                "span_id": [0, 0],
            }
        ),
    )
    lab = Lab(ds, embedder=EMBEDDER, index_dir=tmp_path / "index", progress=False)
    for name in ("memlab-best", "memlab-best-chunk"):
        ex = Explorer(lab, preset=name, qid="qa")
        ex.query.value = "Miso the cat food"  # free text: no question's own
        assert "free-text query" in ex.status.value
        assert set(ex.results["path"]) == {"memory/2026-01-05.md"}
        ex.question.value = "qb"
        ex.query.value = "Miso the cat food"
        assert set(ex.results["path"]) == {"memory/2026-02-07.md"}, name


def test_judge_widget_writes_the_same_answers_file_as_memlab_judge(tmp_path: Path) -> None:
    from memlab.datasets.judgments import read_judgment_rows
    from memlab.widgets import Judge
    from tests.example_agent import answer_key, harvest_example, key_answer

    folder = harvest_example(tmp_path / "out")
    j = Judge(folder, ("wsum", "openclaw"), embedder="hashing")
    first = j.session.current()
    assert first is not None and "<mark>" in j.card_html.value
    assert j.answer("y").startswith("relevant: ")
    assert j.answer("u").startswith("undone: ")
    assert j.session.current() == first  # asked again after the undo
    assert j.answer("x").startswith("answer with one of")
    key = answer_key(folder)
    while (item := j.session.current()) is not None:
        j.buttons[key_answer(key, *item.key)].click()
    assert "done:" in j.card_html.value and j.buttons["y"].disabled
    rows = read_judgment_rows(folder / "judgments.jsonl")
    assert rows[1]["retract"] is True and len(rows) == j.session.progress().judged + 2
    # the command line continues the notebook's work: nothing is asked again
    again = Judge(folder, ("wsum", "openclaw"), embedder="hashing")
    assert again.session.current() is None
