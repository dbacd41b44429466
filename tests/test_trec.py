"""TREC files both ways (memlab.eval.trec): a saved experiment re-scored by ir_measures gives
memlab's unit-level figures, and another system's run joins an experiment as a row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.config.vocab import SYNTH_DEFAULT_MIX
from memlab.datasets.base import Dataset
from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.experiment import run_experiment
from memlab.eval.lab import Lab
from memlab.eval.trec import trec_scores, unit_id
from memlab.eval.trecrun import RunMappingError
from memlab.pipeline.presets import preset
from tests.conftest import cli, write

ir_measures = pytest.importorskip("ir_measures")

# memlab metric → ir_measures measure that equals it on a one-to-one question
TWINS = {
    "recall@6": "R@6",
    "recall@10": "R@10",
    "ndcg@10": "nDCG@10",
    "ndcg@3": "nDCG@3",
    "mrr": "RR",
    "precision@5": "P@5",
    "success@3": "Success@3",
}


def systems() -> list:
    """bm25 (many equal scores at turn level), memlab-best (hybrid, neighbour context) and
    an MMR system (re-orders after scoring: written by rank)."""
    return [
        preset("bm25"),
        preset("memlab-best"),
        preset("openclaw", keyword_mode="or", mmr="jaccard").replace(name="openclaw-mmr"),
    ]


def rescored(folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    """{system: {memlab metric: {qid: value}}} computed by ir_measures from the saved
    qrels.trec and runs.trec alone, as the README beside them says."""
    qrels = list(ir_measures.read_trec_qrels(str(folder / "qrels.trec")))
    cols = ["query_id", "q0", "doc_id", "rank", "score", "system"]
    runs = pd.read_csv(folder / "runs.trec", sep=" ", names=cols, dtype=str)
    runs["score"] = runs["score"].astype(float)
    measures = {m: ir_measures.parse_measure(t) for m, t in TWINS.items()}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system, run in runs.groupby("system", sort=False):
        got = {m: {} for m in TWINS}
        back = {v: k for k, v in measures.items()}
        for r in ir_measures.iter_calc(list(measures.values()), qrels, run):
            got[back[r.measure]][r.query_id] = r.value
        out[str(system)] = got
    return out


def assert_rescored_equal(res, folder: Path) -> None:
    """Every system's per-question values and means equal ir_measures' to 1e-9."""
    got = rescored(folder)
    for s in res.systems:
        for m in TWINS:
            mine = res.wide(m)[s.name]
            theirs = pd.Series(got[s.name][m]).reindex(mine.index)
            assert not theirs.isna().any(), (s.name, m)  # every scored question judged
            np.testing.assert_allclose(theirs.to_numpy(), mine.to_numpy(), atol=1e-9)
            assert abs(theirs.mean() - res.table.loc[s.name, m]) < 1e-9


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Dataset:
    root = tmp_path_factory.mktemp("trec")
    # Single-line evidence only (a dated question's span is its day's whole log): the
    # unit-level export is one-to-one.
    mix = tuple(m for m in SYNTH_DEFAULT_MIX if m != "dated")
    return generate(SynthConfig(days=20, seed=3, queries_per_type=6, mix=mix), root / "corpus")


@pytest.fixture(scope="module")
def turn_lab(synth: Dataset, tmp_path_factory) -> Lab:
    return Lab(
        synth,
        embedder=HashingEmbedder(dimensions=64),
        unit="turn",
        index_dir=tmp_path_factory.mktemp("idx"),
        progress=False,
    )


def two_chats(root: Path) -> Dataset:
    """Two workspaces with the same relative file names (LoCoMo's shape: one workspace per
    conversation), one-line turns, single-line evidence; question b2's evidence spans two
    turns (not one to one)."""
    words = "coffee roast billing gateway dentist tuesday plumber invoice garden bike".split()
    queries, evidence = [], []
    for g, off in (("chat-a", 0), ("chat-b", 5)):
        lines = [
            f"User: note {i} about {words[(i + off) % 10]} and {words[i % 7]}" for i in range(12)
        ]
        write(root / g, "memory/2026-01-01.md", "\n".join(lines) + "\n")
        write(root / g, "memory/2026-01-02.md", "User: the spare key is under the pot\n")
        for j in range(4):
            qid = f"{g[-1]}{j}"
            queries.append({"qid": qid, "query": f"{words[(j + off) % 10]} note", "group": g})
            evidence.append(
                {"qid": qid, "path": "memory/2026-01-01.md", "start_line": j + 1, "end_line": j + 1}
            )
    evidence.append({"qid": "b2", "path": "memory/2026-01-01.md", "start_line": 8, "end_line": 9})
    return Dataset(
        "chats",
        root,
        {"chat-a": root / "chat-a", "chat-b": root / "chat-b"},
        pd.DataFrame(queries),
        pd.DataFrame(evidence),
    )


# ----------------------------------------------------------------------------- TREC out
def test_a_saved_experiment_rescored_by_ir_measures_gives_memlabs_figures(
    turn_lab: Lab, tmp_path: Path
) -> None:
    res = run_experiment(systems(), turn_lab, list(TWINS), keep_runs=True)
    out = res.save(tmp_path / "exp")
    for name in ("runs.trec", "qrels.trec", "docs.tsv", "README.md", "experiment.json"):
        assert (out / name).is_file()
    meta = json.loads((out / "experiment.json").read_text())
    pairing = meta["trec"]["pairing"]
    assert pairing["questions"] == pairing["one_to_one"] == res.table["n"].iloc[0]
    assert meta["trec"]["rank_scored"] == ["openclaw-mmr"]
    readme = (out / "README.md").read_text()
    assert f"{pairing['questions']} of {pairing['questions']} questions" in readme
    assert "Every question does" in readme
    assert_rescored_equal(res, out)
    # ids mean something: every run line's docno is a line range docs.tsv maps
    docs = pd.read_csv(out / "docs.tsv", sep="\t").set_index("docno")
    runs = pd.read_csv(out / "runs.trec", sep=" ", header=None)
    assert runs[2].isin(docs.index).all()
    r0 = res.runs.iloc[0]
    d = docs.loc[r0["unit"]]
    assert (d["path"], d["start_line"], d["end_line"]) == (
        r0["path"],
        r0["start_line"],
        r0["end_line"],
    )
    assert r0["unit"] == f"{r0['path']}:{r0['start_line']}-{r0['end_line']}"


def test_group_prefixed_ids_and_a_span_over_two_units(tmp_path: Path) -> None:
    ds = two_chats(tmp_path / "chats")
    lab = Lab(
        ds,
        embedder=HashingEmbedder(dimensions=32),
        unit="turn",
        index_dir=tmp_path / "idx",
        progress=False,
    )
    res = run_experiment([preset("bm25"), preset("memlab-best")], lab, list(TWINS), keep_runs=True)
    out = res.save(tmp_path / "exp")
    qrels = pd.read_csv(out / "qrels.trec", sep=" ", header=None, names=["q", "z", "d", "g"])
    # the same relative file in two workspaces: two documents
    assert {"chat-a:memory/2026-01-01.md:1-1", "chat-b:memory/2026-01-01.md:1-1"} <= set(qrels.d)
    assert set(qrels[qrels.q == "b2"].d) == {
        "chat-b:memory/2026-01-01.md:3-3",
        "chat-b:memory/2026-01-01.md:8-8",
        "chat-b:memory/2026-01-01.md:9-9",
    }
    pairing = json.loads((out / "experiment.json").read_text())["trec"]["pairing"]
    assert pairing == {"questions": 8, "one_to_one": 7, "not_one_to_one": 1, "examples": ["b2"]}
    assert "On the other 1 (e.g. b2)" in (out / "README.md").read_text()
    # on the seven one-to-one questions the figures still agree exactly
    got = rescored(out)
    for s in ("bm25", "memlab-best"):
        mine = res.wide("recall@10")[s].drop("b2")
        theirs = pd.Series(got[s]["recall@10"]).reindex(mine.index)
        np.testing.assert_allclose(theirs.to_numpy(), mine.to_numpy(), atol=1e-9)


def test_chunk_level_save_says_the_measure_is_span_based(tmp_path: Path) -> None:
    ds = two_chats(tmp_path / "chats")
    lab = Lab(
        ds,
        embedder=HashingEmbedder(dimensions=32),
        unit="chunk",
        index_dir=tmp_path / "idx",
        progress=False,
    )
    res = run_experiment([preset("bm25")], lab, ["recall@6", "alpha_ndcg@10"], keep_runs=True)
    out = res.save(tmp_path / "exp")
    pairing = json.loads((out / "experiment.json").read_text())["trec"]["pairing"]
    # b2's two spans sit in one OpenClaw chunk (the whole file)
    assert pairing["not_one_to_one"] == 1 and pairing["examples"] == ["b2"]
    readme = (out / "README.md").read_text()
    assert "span-based measure is not a document measure" in readme
    assert "alpha_ndcg@10: no document-level twin" in readme
    qrels = pd.read_csv(out / "qrels.trec", sep=" ", header=None)
    assert (qrels[2] == "chat-b:memory/2026-01-01.md:1-13").sum() == 4  # b0..b3


def test_scores_fall_strictly_as_float32_and_keep_memlabs_order() -> None:
    runs = pd.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 3,
            "qid": ["q"] * 7,
            "rank": [0, 1, 2, 3, 0, 1, 2],
            "score": [0.5, 0.5, 0.5 - 1e-12, 0.2, 0.1, 0.3, 0.2],  # b rises: by rank
        }
    )
    out, by_rank = trec_scores(runs)
    assert by_rank == ["b"]
    a = out[:4]
    assert out.dtype == np.float32 and (np.diff(a) < 0).all()
    assert a[0] == np.float32(0.5) and a[3] == np.float32(0.2)
    np.testing.assert_array_equal(out[4:], np.float32([1.0, 0.5, 1 / 3]))


def test_unit_ids_escape_blanks() -> None:
    assert unit_id("memory/a b.md", 3, 4) == "memory/a%20b.md:3-4"
    assert unit_id("x%.md", 1, 1, "g 1") == "g%201:x%25.md:1-1"


# ------------------------------------------------------------------------------ TREC in
def test_a_saved_run_read_back_is_the_same_row(turn_lab: Lab, tmp_path: Path) -> None:
    res = run_experiment(systems(), turn_lab, ["recall@6", "ndcg@10"], keep_runs=True)
    out = res.save(tmp_path / "exp")
    runs = pd.read_csv(out / "runs.trec", sep=" ", header=None)
    mine = tmp_path / "bm25.trec"
    bm25 = runs[runs[5] == "bm25"].copy()
    bm25[5] = "other"
    bm25.to_csv(mine, sep=" ", header=False, index=False)
    res2 = run_experiment(
        [preset("bm25"), preset("memlab-best")],
        turn_lab,
        ["recall@6", "ndcg@10"],
        baseline="memlab-best",
        external_runs={"mine": mine},
    )
    assert list(res2.table.index) == ["bm25", "memlab-best", "mine"]
    for m in ("recall@6", "ndcg@10"):
        pd.testing.assert_series_equal(
            res2.wide(m)["mine"], res2.wide(m)["bm25"], check_names=False
        )
        for col in ("p", "p_adj", "wins", "ties", "losses"):
            assert res2.table.loc["mine", f"{m} {col}"] == res2.table.loc["bm25", f"{m} {col}"]
    assert res2.same_ranking_as() == {"mine": "bm25"}
    item = next(s for s in res2.to_json() if s["name"] == "mine")
    assert item["settings"]["external_run"] == str(mine) and item["candidates"] is None
    assert "vs_baseline" in item and "run: mine read from a TREC run file" in res2.format()
    # the run holds 10 results per question; recall@6 reads 6: the same system as measured
    res3 = run_experiment([preset("bm25")], turn_lab, ["recall@6"], external_runs={"mine": mine})
    assert res3.same_ranking_as() == {"mine": "bm25"}


def test_path_line_ids_and_chunk_ids_are_mapped(tmp_path: Path) -> None:
    ds = two_chats(tmp_path / "chats")
    lab = Lab(
        ds,
        embedder=HashingEmbedder(dimensions=32),
        unit="turn",
        index_dir=tmp_path / "idx",
        progress=False,
    )
    chunk_id = lab.index("chat-a").table.ids[0]  # line 1 of chat-a's first file
    run = pd.DataFrame(
        {
            "qid": ["a0", "a1", "a1", "b1", "b2", "b2", "b2"],
            "docno": [
                chunk_id,  # a memlab chunk id
                "memory/2026-01-01.md:5",  # PATH:LINE in the question's workspace
                "chat-a:memory/2026-01-01.md:2-2",  # a unit id with its group
                "memory/2026-01-01.md:1-3",  # a range that is no unit
                "memory/2026-01-01.md:8",
                "memory/2026-01-01.md:9",
                "memory/2026-01-01.md:3",
            ],
            "score": [1.0, 2.0, 1.0, 1.0, 2.0, 1.5, 1.0],
        }
    )
    metrics = ["recall@1", "recall@2", "recall@3"]
    res = run_experiment([preset("bm25")], lab, metrics, external_runs={"ext": run})
    r1, r2, r3 = (res.wide(m)["ext"] for m in metrics)
    assert r1["a0"] == 1.0  # the chunk id is line 1, the evidence of a0
    assert (r1["a1"], r2["a1"]) == (0.0, 1.0)  # score order: line 5 first, then line 2
    assert r1["b1"] == 1.0  # lines 1-3 cover b1's line 2
    # b2's spans: line 3 and lines 8-9; lines 8 and 9 cover one span: it counts once
    assert (r1["b2"], r2["b2"], r3["b2"]) == (0.5, 0.5, 1.0)
    assert r1["a2"] == 0.0 and r1["b0"] == 0.0  # not answered: 0, as trec_eval -c


def test_unknown_questions_and_documents_are_refused_with_counts(tmp_path: Path) -> None:
    ds = two_chats(tmp_path / "chats")
    lab = Lab(
        ds,
        embedder=HashingEmbedder(dimensions=32),
        unit="turn",
        index_dir=tmp_path / "idx",
        progress=False,
    )
    run = pd.DataFrame(
        {
            "qid": ["a0", "a0", "a1", "zz", "yy"],
            "docno": [
                "memory/2026-01-01.md:1",
                "memory/2026-01-01.md:99",  # beyond the file
                "chat-b:memory/2026-01-01.md:1-1",  # another workspace's unit
                "memory/2026-01-01.md:1",
                "memory/2026-01-01.md:1",
            ],
            "score": [1.0] * 5,
        }
    )
    with pytest.raises(RunMappingError) as err:
        run_experiment([preset("bm25")], lab, ["recall@6"], external_runs={"ext": run})
    msg = str(err.value)
    assert "2 question(s) not in the dataset" in msg and "'yy'" in msg
    assert "2 of 3 results name documents memlab cannot place" in msg
    assert "'memory/2026-01-01.md:99'" in msg


def test_cli_run_option_adds_a_row_and_refuses_a_bad_file(
    synth: Dataset, tmp_path: Path, private_cache: Path
) -> None:
    args = [
        "eval",
        "folder",
        "--path",
        str(synth.root),
        "--unit",
        "turn",
        "--embedder",
        "hashing",
        "--preset",
        "bm25",
        "--metrics",
        "recall@6",
    ]
    code, _, err = cli(*args, "--save", str(tmp_path / "exp"))
    assert code == 0, err
    code, out, err = cli(*args, "--run", f"again={tmp_path / 'exp' / 'runs.trec'}", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["again"]["metrics"] == rows["bm25"]["metrics"]
    assert rows["again"]["same_ranking_as"] == "bm25"
    bad = tmp_path / "bad.trec"
    bad.write_text("nope Q0 MEMORY.md:1 1 1.0 x\n")
    code, _, err = cli(*args, "--run", f"bad={bad}")
    assert code == 2 and "1 question(s) not in the dataset" in err
    code, _, err = cli(*args, "--run", f"x={tmp_path / 'missing.trec'}")
    assert code == 2 and "is not a file" in err
