"""The dev-set protocol's halves (memlab.eval.protocol): fixed rules, one owner.

Synthetic data sets check the rules exactly; the shipped dev sets (skipped when absent)
check the counts docs/studies/index.md quotes.
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.eval.protocol import (
    conversation_halves,
    question_halves,
    scored_questions,
    small_groups,
)
from memlab.eval.sweep import split_queries


def _ds(groups: list[str], cats: list[str], with_evidence: list[bool]) -> SimpleNamespace:
    qids = [f"{g}:q{i}" for i, g in enumerate(groups)]
    queries = pd.DataFrame({"qid": qids, "group": groups, "category": cats})
    ev = pd.DataFrame({"qid": [q for q, e in zip(qids, with_evidence, strict=True) if e]})
    return SimpleNamespace(queries=queries, evidence=ev)


def test_conversation_halves_use_natural_order_of_groups() -> None:
    # Natural order is 1, 2, 3, 9, 10 (a string sort would put chat-10 second), so the
    # even positions 0, 2, 4 — chats 1, 3 and 10 — tune.
    groups = [f"chat-{n}" for n in (10, 2, 1, 9, 3)] * 2
    ds = _ds(groups, ["a"] * 10, [True] * 10)
    tune, report = conversation_halves(ds)
    tune_groups = {q.split(":")[0] for q in tune}
    report_groups = {q.split(":")[0] for q in report}
    assert tune_groups == {"chat-1", "chat-3", "chat-10"}
    assert report_groups == {"chat-2", "chat-9"}


def test_halves_leave_out_questions_without_evidence() -> None:
    ds = _ds(["a", "a", "b", "b"], ["x", "x", "x", "x"], [True, False, True, False])
    tune, report = conversation_halves(ds)
    assert (tune, report) == (["a:q0"], ["b:q2"])
    assert scored_questions(ds)["qid"].tolist() == ["a:q0", "b:q2"]
    qt, qr = question_halves(ds)
    assert sorted(qt + qr) == ["a:q0", "b:q2"]


def test_conversation_halves_need_two_groups() -> None:
    with pytest.raises(ValueError, match="at least 2 groups"):
        conversation_halves(_ds(["a", "a"], ["x", "x"], [True, True]))


def test_question_halves_need_categories() -> None:
    ds = _ds(["a", "b"], ["x", "y"], [True, True])
    ds.queries = ds.queries.drop(columns=["category"])
    with pytest.raises(KeyError, match="category"):
        question_halves(ds)


@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("xyz"), st.booleans()),
        min_size=2,
        max_size=40,
    )
)
def test_question_halves_are_the_documented_split(rows: list[tuple[str, str, bool]]) -> None:
    """A partition of the scored questions, equal to split_queries(…, 0.5, seed=0, strata)."""
    ds = _ds([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    tune, report = question_halves(ds)
    scored = scored_questions(ds)
    assert not set(tune) & set(report)
    assert sorted(tune + report) == sorted(scored["qid"])
    assert (tune, report) == split_queries(
        scored["qid"].tolist(), 0.5, seed=0, strata=scored["category"].tolist()
    )
    per_cat = Counter(scored["category"])
    tune_cat = Counter(scored.set_index("qid").loc[tune, "category"]) if tune else Counter()
    for cat, n in per_cat.items():
        if n >= 2:  # each category on both sides, half of it (rounded) to tune
            assert 1 <= tune_cat[cat] <= n - 1


@pytest.mark.locomo
def test_locomo_dev_halves() -> None:
    from memlab.datasets.locomo import load_locomo, locomo_default_path

    if locomo_default_path() is None:
        pytest.skip("LoCoMo not found")
    ds = load_locomo()
    tune, report = question_halves(ds)
    assert (len(tune), len(report)) == (498, 498)
    ct, cr = conversation_halves(ds)
    q = ds.queries.set_index("qid")
    assert set(q.loc[ct, "group"]) == {"conv-26", "conv-41", "conv-43"}
    assert set(q.loc[cr, "group"]) == {"conv-30", "conv-42"}
    assert (len(ct), len(cr)) == (632, 364)


def test_beam_dev_halves() -> None:
    from memlab.datasets.beam import beam_default_path, load_beam

    if beam_default_path() is None:
        pytest.skip("BEAM not found")
    ds = load_beam()
    tune, report = conversation_halves(ds)
    q = ds.queries.set_index("qid")
    chat = {g: int(g.rsplit("-", 1)[1]) for g in set(q["group"])}
    assert {chat[g] for g in q.loc[tune, "group"]} == {1, 3, 5, 7, 9}
    assert {chat[g] for g in q.loc[report, "group"]} == {2, 4, 6, 8, 10}
    assert (len(tune), len(report)) == (89, 90)


def test_small_groups_are_the_first_of_each_half() -> None:
    groups = [f"chat-{n}" for n in (10, 2, 1, 9, 3)] * 2
    ds = _ds(groups, ["a"] * 10, [True] * 10)
    assert small_groups(ds) == ["chat-1", "chat-2"]
    # groups without a scored question are not candidates
    ds = _ds(["a", "b", "c"], ["x"] * 3, [False, True, True])
    assert small_groups(ds) == ["b", "c"]
    assert small_groups(_ds(["a", "a"], ["x", "x"], [True, True])) == ["a"]
    with pytest.raises(ValueError, match="no question has evidence"):
        small_groups(SimpleNamespace(name="d", **vars(_ds(["a"], ["x"], [False]))))


@given(st.lists(st.sampled_from(["g1", "g2", "g3", "g10"]), min_size=1, max_size=30))
def test_small_groups_keep_one_tuning_and_one_reporting_group(groups: list[str]) -> None:
    ds = _ds(groups, ["x"] * len(groups), [True] * len(groups))
    got = small_groups(ds)
    distinct = set(groups)
    assert len(got) == min(2, len(distinct)) and set(got) <= distinct
    if len(distinct) >= 2:
        tune, report = conversation_halves(ds)
        assert {q.split(":")[0] for q in tune} >= {got[0]}
        assert {q.split(":")[0] for q in report} >= {got[1]}
