"""``memlab stats`` (``memlab.eval.stats``): the formulas on hand-made data, their
properties, the synthetic generator's own guarantees measured back, the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.datasets.base import load_folder
from memlab.eval.stats import corpus_stats, query_form, query_terms, term_overlap
from tests.conftest import REPO, cli, write

# ------------------------------------------------------------------ the overlap formula
TERMS = st.frozensets(st.sampled_from("abcdefghij"), max_size=6)


@settings(max_examples=100, deadline=None)
@given(TERMS.filter(bool), st.lists(TERMS, max_size=5))
def test_overlap_is_a_share_in_0_1(terms: frozenset[str], units: list[frozenset[str]]) -> None:
    x = term_overlap(terms, units)
    assert 0.0 <= x <= 1.0
    assert x * len(terms) == pytest.approx(len(terms & frozenset().union(*units)))


@settings(max_examples=100, deadline=None)
@given(TERMS.filter(bool), st.lists(TERMS, max_size=5), st.randoms())
def test_overlap_is_one_when_every_term_is_found_and_order_free(
    terms: frozenset[str], units: list[frozenset[str]], rnd: object
) -> None:
    assert term_overlap(terms, [*units, terms]) == 1.0
    shuffled = list(units)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    order = list(terms)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    assert term_overlap(order, shuffled) == term_overlap(terms, units)


def test_overlap_of_no_terms_is_nan_and_terms_are_the_lexicon_rule() -> None:
    assert math.isnan(term_overlap([], [{"a"}]))
    assert query_terms("What are the Prefers of the boxes?") == {"prefer", "box"}


@pytest.mark.parametrize(
    ("query", "spans", "form"),
    [
        ("王伟的生日是哪天？", 1, "cjk"),
        ("What happened on 2026-03-03?", 1, "dated"),
        ("what happened on March 3", 1, "dated"),
        ("INC-3317", 1, "identifier"),
        ("who picked up INC-3317?", 2, "identifier"),
        ("Where did Ann and Bob meet?", 2, "multi"),
        ("printer warranty", 1, "keyword"),
        ("who is it", 1, "question"),
        ("What is the printer warranty?", 1, "question"),
    ],
)
def test_query_forms(query: str, spans: int, form: str) -> None:
    assert query_form(query, spans) == form


# ------------------------------------------------------------------ exact values
@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """Two groups. In ``a``: an undated note file and two dated logs; ``b``: one log."""
    root = tmp_path / "ds"
    write(root, "a/MEMORY.md", "# Memory\n\n- Ann owns the blue kettle\n- Bob paints fences\n")
    write(root, "a/memory/2026-01-01.md", "# 2026-01-01\n\nAnn bought green paint\n")
    write(
        root, "a/memory/2026-01-05.md", "# 2026-01-05\n\nAnn owns a blue kettle and green paint\n"
    )
    write(root, "b/memory/2026-02-01.md", "User: the boiler needs service\nAssistant: Noted.\n")
    queries = [
        # evidence line 3 of MEMORY.md: terms ann, kettle, blue → all found; the best other
        # visible line (cut-off hides 2026-01-05, which holds them all) holds ann: 1/3
        {"qid": "q1", "query": "Ann blue kettle", "group": "a", "category": "x",
         "cutoff": 1767225600 + 86400},
        # no cut-off: 2026-01-05 line 3 holds ann, green, paint → 1.0 for the distractor
        {"qid": "q2", "query": "Ann green paint?", "group": "a", "category": "y"},
        {"qid": "q3", "query": "锅炉什么时候保养", "group": "b", "category": "y"},
        {"qid": "q4", "query": "the what", "group": "b", "category": "y"},
        {"qid": "q5", "query": "boiler service plan", "group": "b", "category": "y"},
    ]  # fmt: skip
    evidence = [
        {"qid": "q1", "path": "MEMORY.md", "start_line": 3, "end_line": 3},
        {"qid": "q2", "path": "memory/2026-01-01.md", "start_line": 3, "end_line": 3},
        {"qid": "q3", "path": "memory/2026-02-01.md", "start_line": 1, "end_line": 1},
        {"qid": "q4", "path": "memory/2026-02-01.md", "start_line": 1, "end_line": 1},
        {"qid": "q5", "path": "memory/2026-02-01.md", "start_line": 1, "end_line": 2},
    ]
    (root / "dataset.json").write_text(
        json.dumps({"name": "tiny", "workspaces": {"a": "a", "b": "b"}})
    )
    for name, rows in (("queries.jsonl", queries), ("evidence.jsonl", evidence)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_exact_figures_of_a_hand_made_dataset(tiny: Path) -> None:
    s = corpus_stats(load_folder(tiny))
    rows = s["per_query"].set_index("qid")
    assert rows.loc["q1", "term_overlap"] == 1.0
    assert rows.loc["q1", "distractor_overlap"] == pytest.approx(1 / 3)  # the future is hidden
    assert rows.loc["q2", "term_overlap"] == pytest.approx(3 / 3)
    assert rows.loc["q2", "distractor_overlap"] == 1.0
    assert rows.loc["q3", "excluded"] == "cjk" and math.isnan(rows.loc["q3", "term_overlap"])
    assert rows.loc["q4", "excluded"] == "no_terms"
    assert rows.loc["q5", "term_overlap"] == pytest.approx(2 / 3)
    # "User: the boiler needs service" and "Assistant: Noted.": 5 + 2 word tokens
    assert rows.loc["q5", "span_lines"] == 2 and rows.loc["q5", "span_tokens"] == 7
    assert s["excluded"] == {"cjk": 1, "no_terms": 1}
    assert s["term_overlap"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    # a: 3 lines of MEMORY.md (its heading too) and 2 of each log; b: 2
    assert s["by_group"]["a"]["units"] == 7 and s["by_group"]["b"]["units"] == 2
    assert s["units_per_workspace"] == 4.5
    assert s["by_group"]["b"]["transcript_share"] == 1.0 and s["style"] == "notes"
    assert s["category_mix"] == {"x": 0.2, "y": 0.8}


def test_file_level_distractors_are_whole_files(tiny: Path) -> None:
    ds = load_folder(tiny)
    ds.info["level"] = "file"
    rows = corpus_stats(ds)["per_query"].set_index("qid")
    # q2's other files: MEMORY.md (ann) and 2026-01-05 (ann, green, paint)
    assert rows.loc["q2", "distractor_overlap"] == 1.0
    # q1 (cut at 2026-01-02): 2026-01-01 holds ann → 1/3; 2026-01-05 is hidden
    assert rows.loc["q1", "distractor_overlap"] == pytest.approx(1 / 3)


def test_similarities_with_the_hashing_embedder(tiny: Path) -> None:
    rows = corpus_stats(load_folder(tiny), "hashing")["per_query"].set_index("qid")
    assert 0 < rows.loc["q1", "sim_evidence"] <= 1
    # q5's evidence is all of b: no other unit, no distractor similarity
    assert rows["sim_distractor"].isna().tolist() == [False, False, False, False, True]
    # a query that is its evidence line word for word has cosine 1 with it
    write(tiny, "b/memory/2026-02-01.md", "boiler service plan\nAssistant: Noted.\n")
    again = corpus_stats(load_folder(tiny), "hashing")["per_query"].set_index("qid")
    assert again.loc["q5", "sim_evidence"] == pytest.approx(1.0)


def test_the_generator_s_guarantees_measured_back() -> None:
    """On the committed synthetic-small: a fully paraphrased question shares no term with its
    note, an exact question every term (memlab.datasets.synthetic's promises)."""
    s = corpus_stats(load_folder(REPO / "datasets" / "synthetic-small"))
    assert s["by_category"]["paraphrase"]["term_overlap"] == 0.0
    assert s["by_category"]["exact"]["term_overlap"] == 1.0
    assert s["by_category"]["keyword"]["term_overlap"] == 1.0
    assert s["style"] == "notes" and s["level"] == "unit" and s["groups"] == 1


def test_memlab_stats_prints_a_table_and_json(tiny: Path) -> None:
    code, out, err = cli("stats", "folder", "--path", str(tiny), "--embedder", "none")
    assert code == 0, err
    assert "overlap" in out and "group a" in out and "category y" in out and "cjk 1" in out
    code, out, err = cli("stats", "folder", "--path", str(tiny), "--embedder", "hashing", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert {"term_overlap", "distractor_overlap", "by_category", "by_group"} <= set(doc)
    assert doc["by_group"]["b"]["excluded"] == {"cjk": 1, "no_terms": 1}
    assert doc["embedder"].startswith("hashing")
    code, _, err = cli("stats", "folder")
    assert code == 2 and "--path is required" in err


def test_every_loader_s_dataset_has_its_statistics(tmp_path: Path, monkeypatch) -> None:
    """LongMemEval and RealMem (tiny files of the loaders' own tests) through the command
    line: one group per instance / persona, the file level of RealMem read from its info."""
    from tests.test_longmemeval import DATA

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lme = tmp_path / "lme.json"
    lme.write_text(json.dumps(DATA))
    code, out, err = cli("stats", "longmemeval", "--path", str(lme), "--embedder", "none", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["groups"] == len(DATA) and set(doc["by_group"]) <= {d["question_id"] for d in DATA}
    assert doc["style"] == "conversation"
    realmem = REPO / "tests" / "data" / "realmem"
    code, out, err = cli("stats", "realmem", "--path", str(realmem), "--embedder", "none", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["level"] == "file" and doc["groups"] == 2 and 0 <= doc["term_overlap"] <= 1


def test_unit_lines_are_numbered_as_the_index_numbers_them(tmp_path: Path) -> None:
    """A form feed or a Unicode line separator inside a line does not start a new line (the
    index splits on newlines only), so line 3 is still the evidence's line 3."""
    from memlab.chunking.lines import chunk_lines
    from memlab.eval.stats.units import group_units

    text = "# Notes\n- a\x0cb\u2028c\n- the gateway host\n"
    write(tmp_path, "MEMORY.md", text)
    g = group_units(tmp_path)
    at = g.where["MEMORY.md"]
    assert sorted(at) == [c.start_line for c in chunk_lines(text)] == [1, 2, 3]
    assert g.texts[at[3]] == "- the gateway host"
