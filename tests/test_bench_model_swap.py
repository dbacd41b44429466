"""studies/model_swap.py: the weight points, the tune choice and the summary table."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks._common import CHUNK_UNIT_NAME  # noqa: E402
from memlab.eval.significance import paired_ttest  # noqa: E402
from memlab.pipeline.presets import CHUNK_AS_UNIT, memlab_best_chunk  # noqa: E402
from studies.model_swap import (  # noqa: E402
    choose_weight,
    per_query,
    summarise,
    systems,
    weight_points,
)
from tests.test_beam import beam_dir  # noqa: E402, F401  (a fixture)


def test_weight_points_span_the_grid_and_keep_the_presets_own_weight() -> None:
    for unit in ("turn", "chunk"):
        best = systems(unit)[-1]
        pts = weight_points(best)
        ws = [p.vector_weight for p in pts]
        assert ws == sorted(ws) and best.vector_weight in ws
        assert all(abs(p.vector_weight + p.text_weight - 1) < 1e-9 for p in pts)
        assert [p.name for p in pts] == [f"{best.name} w={w:g}" for w in ws]
        # Only the weights move: every other setting is the preset's.
        other = pts[0].replace(vector_weight=best.vector_weight, text_weight=best.text_weight)
        assert other.replace(name=best.name) == best


def test_systems_are_the_legs_then_the_unit_preset() -> None:
    assert [p.name for p in systems("turn")] == ["vector", "bm25", "memlab-best"]
    assert [p.name for p in systems("chunk")] == ["vector", "bm25", CHUNK_UNIT_NAME]
    # The chunk system is memlab-best-chunk scoring each chunk as one unit (the system the
    # documented figures were measured with), not the preset's best-line ranking.
    chunk = systems("chunk")[-1]
    assert (chunk.best_line, chunk.min_score) == ("", 0.0)
    assert chunk.replace(name="memlab-best-chunk", max_results=6) == memlab_best_chunk(
        **CHUNK_AS_UNIT
    )
    assert all(p.max_results == 10 for p in systems("turn"))


def test_choose_weight_takes_the_best_and_gives_ties_to_the_presets_weight() -> None:
    m = {"w=0.2": {"recall@6": 0.5}, "w=0.3": {"recall@6": 0.7}, "w=0.4": {"recall@6": 0.6}}
    assert choose_weight(m, "chunk", "w=0.4") == "w=0.3"
    tied = {**m, "w=0.4": {"recall@6": 0.70004}}  # equal at the fourth digit
    assert choose_weight(tied, "chunk", "w=0.4") == "w=0.4"
    assert choose_weight(tied, "chunk", "w=0.9") == "w=0.3"  # no own weight among the ties
    turn = {"a": {"recall@5": 0.6, "recall@10": 0.7}, "b": {"recall@5": 0.5, "recall@10": 0.9}}
    assert choose_weight(turn, "turn", "a") == "b"  # R@5 + R@10: 1.4 against 1.3


def fake_values(rng: np.random.Generator, names: list[str], q: int) -> dict:
    metrics = ["recall@6", "recall@10", "ndcg@10"]
    return {n: {m: rng.random(q) for m in metrics} for n in names}


def test_summarise_chooses_on_tune_and_tests_against_the_packaged_model() -> None:
    rng = np.random.default_rng(0)
    base = [p.name for p in systems("chunk")]
    points = [p.name for p in weight_points(systems("chunk")[-1])]
    qids = [f"q{i}" for i in range(40)]
    values = {
        ("a", "packaged"): fake_values(rng, base, 40),
        ("a", "other"): fake_values(rng, base[:-1] + points, 40),
        ("b", "packaged"): fake_values(rng, base, 40),
        ("b", "other"): fake_values(rng, base[:-1] + points, 40),
    }
    # The best point of the halves it is chosen on: high on their tune questions only.
    best = points[2]
    for ds in ("a", "b"):
        values[(ds, "other")][best]["recall@6"][:20] = 1.0
        values[(ds, "other")][best]["recall@6"][20:] = 0.0
    # A half it is not chosen on, where another point would win by far.
    values[("b", "other")][points[0]]["recall@6"][:] = 1.0
    values[("a", "packaged")]["vector"]["recall@6"][25] = np.nan  # no evidence: left out
    values[("a", "other")]["vector"]["recall@6"][30] = np.nan
    a_ds, b_ds = (type("DS", (), {"name": n})() for n in ("a", "b"))
    halves = {"h": (a_ds, (qids[:20], qids[20:])), "g": (b_ds, (qids[:20], qids[20:]))}
    res = summarise("chunk", values, {"a": qids, "b": qids}, halves, "other", choose_on=("h",))
    assert res["chosen"] == best and res["chosen on"] == ["h"]
    rows = {(r["model"], r["system"]): r for r in res["rows"]}
    # bm25 does not read vectors: one row, on the packaged model only.
    assert ("other", "bm25") not in rows and ("packaged", "bm25") in rows
    assert rows[("packaged", "vector")]["h p"] == "reference"
    assert rows[("other", best)]["h tune"].startswith("1.000 / ")
    assert rows[("other", best)]["h report"].startswith("0.000 / ")
    keep = np.ones(40, bool)
    keep[:20] = keep[25] = keep[30] = False
    a = values[("a", "other")]["vector"]["recall@6"][keep]
    b = values[("a", "packaged")]["vector"]["recall@6"][keep]
    assert rows[("other", "vector")]["h p"] == float(f"{paired_ttest(a, b)[1]:.2g}")
    # A weight point is tested against the packaged model's preset.
    own = f"{CHUNK_UNIT_NAME} w={systems('chunk')[-1].vector_weight:g}"
    a = values[("b", "other")][own]["recall@6"][20:]
    b = values[("b", "packaged")][CHUNK_UNIT_NAME]["recall@6"][20:]
    assert rows[("other", own)]["g p"] == float(f"{paired_ttest(a, b)[1]:.2g}")
    assert [k for k in rows if k[0] == "other"] == [
        ("other", "vector"),
        ("other", own),
        ("other", best),
    ]


def test_summarise_turn_objective_and_one_row_when_the_choice_is_the_presets() -> None:
    rng = np.random.default_rng(1)
    best = systems("turn")[-1]
    base = [p.name for p in systems("turn")]
    points = [p.name for p in weight_points(best)]
    metrics = ["recall@5", "recall@10", "ndcg@10"]
    values = {
        ("a", "packaged"): {n: {m: rng.random(10) for m in metrics} for n in base},
        ("a", "o"): {n: {m: np.zeros(10) for m in metrics} for n in base[:-1] + points},
    }
    own = f"memlab-best w={best.vector_weight:g}"
    # R@5 + R@10 decides: the own weight wins on the sum though another has the best R@10.
    values[("a", "o")][own]["recall@5"][:] = 1.0
    values[("a", "o")][own]["recall@10"][:] = 0.5
    values[("a", "o")][points[0]]["recall@10"][:] = 1.0
    ds = type("DS", (), {"name": "a"})()
    halves = {"h": (ds, ([f"q{i}" for i in range(5)], [f"q{i}" for i in range(5, 10)]))}
    res = summarise("turn", values, {"a": [f"q{i}" for i in range(10)]}, halves, "o", ("h",))
    assert res["chosen"] == own and res["tune objective"][own] == 1.5
    assert [r["system"] for r in res["rows"] if r["model"] == "o"] == ["vector", own]


@pytest.mark.parametrize("unit", ["turn", "chunk"])
def test_per_query_scores_every_system_on_the_same_questions(
    unit: str,
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memlab.datasets.beam import load_beam
    from memlab.embed import HashingEmbedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = load_beam(beam_dir, tmp_path / "out")
    pts = systems(unit)
    values, qids = per_query(ds, HashingEmbedder(dimensions=64), unit, pts)
    assert list(values) == [p.name for p in pts]
    assert len(qids) == len(ds.queries)
    for v in values.values():
        for arr in v.values():
            assert arr.shape == (len(qids),)
            finite = arr[np.isfinite(arr)]
            assert finite.size and ((finite >= 0) & (finite <= 1)).all()


@pytest.mark.parametrize(
    ("good_folder", "units", "said"),
    [
        (True, "turn,turns", "--units: turns is not a unit"),
        (False, "turn", "is not a folder"),
    ],
)
def test_bad_arguments_are_refused_before_any_data_is_read(
    good_folder: bool,
    units: str,
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    import studies.model_swap as ms

    def no_data() -> None:
        raise AssertionError("a data set was loaded")

    folder = tmp_path if good_folder else tmp_path / "no-such-folder"
    monkeypatch.setattr("memlab.datasets.locomo.load_locomo", no_data)
    monkeypatch.setattr(sys, "argv", ["model_swap.py", "--model", str(folder), "--units", units])
    with pytest.raises(SystemExit) as exc:
        ms.main()
    assert exc.value.code == 2 and said in capsys.readouterr().err
