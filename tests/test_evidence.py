"""memlab.eval.evidence: the rank of every evidence span, and its shares by rank bin."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.datasets.synthetic import SynthConfig, generate
from memlab.embed import HashingEmbedder
from memlab.eval.evidence import RANK_EDGES, evidence_ranks, rank_shares
from memlab.eval.lab import Lab
from memlab.pipeline.presets import preset

BINS = ["1-5", "6-10", "11-20", "21-50", "51-200", ">200", "dropped", "not retrieved"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("evidence")
    ds = generate(SynthConfig(days=10, seed=3, queries_per_type=4), root / "data")
    return Lab(ds, embedder=HashingEmbedder(dimensions=128), index_dir=root / "i", progress=False)


@pytest.fixture(scope="module")
def keyword_lab(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    root = tmp_path_factory.mktemp("evidence-fts")
    return Lab(lab.dataset, embedder=None, index_dir=root / "i", progress=False)


PRESETS = [
    "memlab-best",
    "bm25",
    "openclaw",
    "rrf",
    "memlab-best-chunk",
    "openclaw-latest",
    "openclaw-current",
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "fts_only"),
    [(n, False) for n in PRESETS] + [("openclaw", True), ("memlab-best", True)],
)
def test_a_questions_share_of_spans_ranked_within_k_is_its_recall_at_k(
    lab: Lab, keyword_lab: Lab, name: str, fts_only: bool
) -> None:
    """Differential against the metric code: for every k the system returns, the share
    of a question's spans with rank <= k is LabCandidates.score's recall@k (so the full
    ranking extends the returned one: MMR, keyword fill, the release's selection rule and
    the keyword-only top-up included)."""
    p = preset(name).at_k(10)
    lc = (keyword_lab if fts_only else lab).candidates_for_system(p)
    ranks = evidence_ranks(lc, p)
    assert len(ranks) == int(lc.spans.span_valid.sum())
    checked = 0
    for k in (1, 3, 5, 10):
        want = pd.Series(lc.score(p.at_k(k), [f"recall@{k}"])[f"recall@{k}"], index=lc.qids)
        got = ranks.assign(hit=ranks["rank"] <= k).groupby("qid")["hit"].mean()
        np.testing.assert_allclose(got.to_numpy(), want.loc[got.index].to_numpy())
        checked += int((got > 0).sum())
    assert checked > 0  # some evidence is found, so the check compares real ranks


def test_ranks_go_below_the_systems_own_results_but_not_beyond_its_candidates(lab: Lab) -> None:
    p = preset("bm25").at_k(5)
    lc = lab.candidates_for_system(p)
    ranks = evidence_ranks(lc, p)
    assert (ranks["rank"] > p.max_results).any()  # below the results the system returns
    assert ranks["rank"].max() <= p.depth  # one leg: at most its candidates
    assert (ranks["rank"].isna() & ~ranks["retrieved"]).any()  # its keyword leg missed some
    assert ranks.loc[ranks["rank"].notna(), "retrieved"].all()
    full = ranks["rank"]
    cut = evidence_ranks(lc, p, results=3)["rank"]
    pd.testing.assert_series_equal(cut, full.where(full <= 3))  # its own ranking, cut
    assert (full <= 3).any() and (full > 3).any()
    with pytest.raises(ValueError, match="results must be >= 1"):
        evidence_ranks(lc, p, results=0)


def test_a_threshold_drops_retrieved_evidence_and_says_so(lab: Lab) -> None:
    """openclaw's minScore 0.35 removes candidates its legs found: those spans are
    'dropped', not 'not retrieved'; without the threshold they are ranked."""
    p = preset("openclaw").at_k(10)
    lc = lab.candidates_for_system(p)
    ranks = evidence_ranks(lc, p)
    dropped = ranks["rank"].isna() & ranks["retrieved"]
    assert dropped.any()
    open_ranks = evidence_ranks(lc, p.replace(min_score=-1e6))  # no threshold at all
    assert open_ranks.loc[dropped, "rank"].notna().all()
    assert rank_shares(ranks).loc["(all)", "dropped"] == pytest.approx(dropped.mean())


def test_no_candidates_leave_every_span_unranked(lab: Lab) -> None:
    p = preset("bm25").at_k(5)
    lc = lab.candidates_for_system(p)
    cs = lc.cs
    arrays = ("pos", "vec_score", "text_raw", "vec_rank", "text_rank")
    no_columns = {f: getattr(cs, f)[:, :0] for f in arrays}
    empty = dataclasses.replace(
        lc, cs=dataclasses.replace(cs, **no_columns, extra={}), covers=lc.covers[:, :0]
    )
    ranks = evidence_ranks(empty, p)
    assert len(ranks) == int(lc.spans.span_valid.sum()) > 0
    assert ranks["rank"].isna().all() and not ranks["retrieved"].any()
    assert rank_shares(ranks).loc["(all)", "not retrieved"] == 1.0


def test_the_cli_prints_where_each_system_ranks_the_evidence(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_cli import run

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    args = ("eval", "synthetic", "--path", str(lab.dataset.root), "--embedder", "hashing")
    out = run(*args, "--preset", "bm25,memlab-best", "--metrics", "recall@5", "--evidence-ranks")
    for name in ("bm25", "memlab-best"):
        depth = preset(name).at_k(5).depth  # as the table ran it
        assert f"where {name} ranks the evidence ({depth} candidates per leg" in out.stdout
    table = out.stdout.split("where memlab-best ranks the evidence")[1]
    header = next(ln for ln in table.splitlines() if ln.lstrip().startswith("spans"))
    assert header.split() == ["spans", *" ".join(BINS).split()]
    pooled = next(ln for ln in table.splitlines() if ln.startswith("(all) "))
    assert sum(float(x) for x in pooled.split()[2:]) == pytest.approx(100.0, abs=0.5)
    saved = tmp_path / "saved"
    run(*args, "--preset", "bm25,rrf", "--evidence-ranks", "--save", str(saved))
    csv = pd.read_csv(saved / "evidence_ranks.csv")
    assert list(csv.columns) == ["system", "qid", "category", "span", "rank", "retrieved"]
    spans = int(lab.candidates_for_system(preset("bm25")).spans.span_valid.sum())
    assert csv["system"].value_counts().to_dict() == {"bm25": spans, "rrf": spans}
    assert (saved / "per_query.csv").exists()  # beside the experiment's own files
    bad = run(*args, "--evidence-ranks", "--json", check=False)
    assert bad.returncode == 2 and "--evidence-ranks prints a table" in bad.stderr


def _frame(ranks: list[float], cats: list[object]) -> pd.DataFrame:
    n = len(ranks)
    return pd.DataFrame(
        {"qid": range(n), "category": pd.Series(cats, dtype=object), "span": 0, "rank": ranks}
    )


def test_rank_shares_bins_by_closed_upper_edges() -> None:
    frame = _frame([1, 5, 6, 10, 11, 200, 201, np.nan, np.nan], ["a"] * 9)
    frame["retrieved"] = [True] * 8 + [False]
    row = rank_shares(frame).loc["a"]
    assert row["spans"] == 9
    assert row[BINS].tolist() == pytest.approx([2 / 9, 2 / 9, 1 / 9, 0, 1 / 9, 1 / 9, 1 / 9, 1 / 9])
    assert RANK_EDGES == (5, 10, 20, 50, 200)  # the bins BINS names
    with pytest.raises(ValueError, match="increasing positive"):
        rank_shares(_frame([1.0], ["a"]), edges=(5, 5))
    with pytest.raises(ValueError, match="increasing positive"):
        rank_shares(_frame([1.0], ["a"]), edges=(0, 5))


def test_rank_shares_categories_missing_numeric_or_named_all() -> None:
    out = rank_shares(_frame([1.0, 7.0, 3.0], [10, 2, 2]))
    assert out.index.tolist() == ["2", "10", "(all)"]  # by value, not by text
    missing = rank_shares(_frame([1.0, 7.0], [None, "x"]))
    assert set(missing.index) == {"(none)", "x", "(all)"}
    assert missing.loc["(none)", "spans"] == 1
    named_all = rank_shares(_frame([1.0, 30.0], ["all", "x"]))
    assert named_all.loc["all", "spans"] == 1 and named_all.loc["(all)", "spans"] == 2
    empty = rank_shares(_frame([], []))
    assert empty.index.tolist() == ["(all)"] and empty.loc["(all)", "spans"] == 0
    assert empty.drop(columns="spans").isna().all(axis=None)


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(1, 500)), st.sampled_from(["x", "y", "z"])),
        min_size=1,
        max_size=60,
    ),
    st.lists(st.integers(1, 300), min_size=1, max_size=5, unique=True).map(sorted),
)
def test_rank_shares_partition_every_category(items, edges) -> None:
    ranks = [np.nan if r is None else float(r) for r, _ in items]
    out = rank_shares(_frame(ranks, [c for _, c in items]), edges)
    np.testing.assert_allclose(out.drop(columns="spans").sum(axis=1), 1.0)
    assert out.loc["(all)", "spans"] == len(items)
    assert out.drop(index="(all)")["spans"].sum() == len(items)
    r = np.array(ranks)
    assert out.loc["(all)", "not retrieved"] == pytest.approx(np.isnan(r).mean())
    assert out.loc["(all)", f"1-{edges[0]}"] == pytest.approx(np.mean(r <= edges[0]))
    assert list(out.columns[-3:]) == [f">{edges[-1]}", "dropped", "not retrieved"]
