"""The best-line stage (``memlab.stages.best_line``): chunks ranked by their best line.

Checked here: the grouping against a brute-force loop (Hypothesis), the stage's scores
and tie rule against an independent run of the line system on the line view, the line
view's file, sync and refusal, keyword-only and provider-failure modes, explain, and the
lab's path against the engine's on one index.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.chunking import ChunkerConfig
from memlab.embed import EmbeddingError, HashingEmbedder
from memlab.pipeline import Pipeline
from memlab.pipeline.explain import explain
from memlab.pipeline.presets import CHUNK_AS_UNIT, memlab_best_chunk, preset
from memlab.stages.best_line import (
    best_line_scores,
    held_line_codes,
    line_held_key,
    line_keys,
    line_system_factory,
    novel_line_order,
)
from memlab.store import MemoryIndex
from memlab.tools import memory_search
from tests.conftest import write
from tests.test_beam import beam_dir  # noqa: F401  (a fixture)

QUERIES = ["where is the deploy key", "what does Miso eat", "green tea", "vault rotation"]


def brute_force(cp, cs, ce, lp, ln, ls) -> np.ndarray:
    out = np.full(len(cp), np.nan)
    for path, line, score in zip(lp, ln, ls, strict=True):
        for c in range(len(cp)):
            if cp[c] == path and cs[c] <= line <= ce[c] and np.isfinite(score):
                out[c] = score if np.isnan(out[c]) else max(out[c], score)
    return out


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(
        st.tuples(st.sampled_from("abc"), st.integers(1, 30), st.integers(0, 8)), max_size=12
    ),
    lines=st.lists(
        st.tuples(
            st.sampled_from("abcd"),
            st.integers(1, 40),
            st.one_of(st.floats(-5, 5, allow_nan=False), st.just(float("nan"))),
        ),
        max_size=15,
    ),
)
def test_best_line_scores_is_the_max_over_contained_lines(chunks, lines) -> None:
    cp = np.array([c[0] for c in chunks], dtype=object)
    cs = np.array([c[1] for c in chunks], dtype=np.int64)
    ce = cs + np.array([c[2] for c in chunks], dtype=np.int64)
    lp = np.array([x[0] for x in lines], dtype=object)
    ln = np.array([x[1] for x in lines], dtype=np.int64)
    ls = np.array([x[2] for x in lines], dtype=np.float64)
    got = best_line_scores(cp, cs, ce, lp, ln, ls)
    np.testing.assert_array_equal(got, brute_force(cp, cs, ce, lp, ln, ls))


def greedy_by_hand(order: list[int], held: dict[int, dict[int, float]]) -> list[int]:
    """The novel order spelled out: ``held[c]`` maps line id → score for column ``c``."""
    placed: list[int] = []
    covered: set[int] = set()
    left = list(order)
    while True:
        best, best_c = -np.inf, None
        for c in left:  # in order: a later column must beat, not tie
            new = [s for line, s in held[c].items() if line not in covered and np.isfinite(s)]
            if new and max(new) > best:
                best, best_c = max(new), c
        if best_c is None:
            return placed + left
        placed.append(best_c)
        left.remove(best_c)
        covered |= set(held[best_c])


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 9),
    n_valid=st.integers(0, 9),
    lines=st.lists(
        st.tuples(
            st.integers(0, 8),
            st.integers(0, 11),
            st.one_of(st.sampled_from([0.5, 1.0, 2.0]), st.floats(-3, 3, allow_nan=False)),
        ),
        max_size=25,
    ),
    seed=st.integers(0, 1000),
)
def test_novel_line_order_is_the_greedy_new_line_rule(n, n_valid, lines, seed) -> None:
    rng = np.random.default_rng(seed)
    n_valid = min(n, n_valid)
    order = rng.permutation(n)
    valid = np.zeros(n, dtype=bool)
    valid[order[:n_valid]] = True
    score_of = {}
    held: dict[int, dict[int, float]] = {c: {} for c in range(n)}
    for c, line, s in lines:
        if c < n:
            s = score_of.setdefault(line, s)  # one line, one score
            held[c][line] = s
    # The codes by hand: tier = dense rank of the score (0 = highest), line = its id.
    depth = 12
    tiers = {v: t for t, v in enumerate(sorted(set(score_of.values()), reverse=True))}
    k = max([len(h) for h in held.values()] + [1])
    codes = np.full((1, n, k), -1, dtype=np.int64)
    for c, h in held.items():
        for j, code in enumerate(sorted(tiers[s] * depth + line for line, s in h.items())):
            codes[0, c, j] = code
    got = novel_line_order(order[None, :], valid[None, :], codes, depth)[0]
    want = greedy_by_hand(order[:n_valid].tolist(), {c: held[c] for c in order[:n_valid]})
    assert got[:n_valid].tolist() == want
    assert got[n_valid:].tolist() == order[n_valid:].tolist()  # invalid columns stay put
    # A limit places only that many greedily; the rest keep their order.
    limit = seed % 4
    cut = novel_line_order(order[None, :], valid[None, :], codes, depth, limit)[0]
    placed = cut[: min(limit, len(want))].tolist()
    assert placed == want[: len(placed)]
    assert cut[len(placed) :].tolist() == [c for c in order if c not in placed]


def test_held_line_codes_order_by_score_tier_then_line() -> None:
    paths = np.array(["a", "a"], dtype=object)
    # lines: a:2 (0.5), a:4 (0.9), a:5 (0.5), a:6 (NaN: left out), b:1 (0.9)
    got = held_line_codes(
        paths,
        np.array([1, 4]),
        np.array([4, 9]),
        np.array(["a", "a", "a", "a", "b"], dtype=object),
        np.array([2, 4, 5, 6, 1]),
        np.array([0.5, 0.9, 0.5, np.nan, 0.9]),
        depth=10,
    )
    # tiers: 0.9 -> 0, 0.5 -> 1; code = tier * 10 + position
    assert got.tolist() == [[1, 10], [1, 12]]
    assert (got % 10).tolist() == [[1, 0], [1, 2]]  # the lines each chunk holds
    with pytest.raises(ValueError, match="5 top lines for a depth of 4"):
        held_line_codes(paths, np.ones(2), np.ones(2), paths[:0], np.zeros(0), np.ones(5), 4)


def test_held_line_codes_are_list_positions_when_every_score_is_equal() -> None:
    paths = np.array(["a", "a", "b"], dtype=object)
    args = (
        paths,
        np.array([1, 4, 1]),
        np.array([5, 9, 3]),
        np.array(["a", "b", "a", "c", "a"], dtype=object),
        np.array([4, 2, 9, 1, 20]),
    )
    got = held_line_codes(*args, np.ones(5), depth=5)
    # chunk a:1-5 holds line 0 (a:4); a:4-9 holds lines 0 and 2; b:1-3 holds line 1
    assert got.tolist() == [[0, -1], [0, 2], [1, -1]]
    no_lines = held_line_codes(paths, np.ones(3), np.ones(3), paths[:0], np.zeros(0), [], 5)
    assert no_lines.tolist() == [[-1], [-1], [-1]]


def test_line_matrices_is_best_line_scores_and_held_line_codes_in_one_pass(
    workspace: Path,
) -> None:
    from memlab.stages.best_line import line_hits, line_matrices

    idx = chunk_index(workspace)
    p = memlab_best_chunk()
    qids = [str(i) for i in range(len(QUERIES))]
    cs = p.retrieve(idx, QUERIES, qids=qids)
    line_p = p.line_system()
    lcs = line_p.retrieve(idx.line_view("porter"), QUERIES, qids=qids)
    hits = line_hits(lcs, line_p.rank(lcs))
    best, held = line_matrices(cs, hits, 100)
    assert line_matrices(cs, hits)[1] is None
    np.testing.assert_array_equal(line_matrices(cs, hits)[0], best)
    t = cs.table
    for i, (lp, ln, ls) in enumerate(hits):
        cols = np.nonzero(cs.pos[i] >= 0)[0]
        pos = cs.pos[i, cols]
        chunk = (t.paths[pos], t.start_lines[pos], t.end_lines[pos])
        np.testing.assert_array_equal(best[i, cols], best_line_scores(*chunk, lp, ln, ls))
        codes = held_line_codes(*chunk, lp, ln, ls, 100)
        np.testing.assert_array_equal(held[i, cols, : codes.shape[1]], codes)
        assert (held[i, cols, codes.shape[1] :] == -1).all()
    assert (held[cs.pos < 0] == -1).all()


def test_parameters_are_checked_by_name() -> None:
    with pytest.raises(ValueError, match=r"best_line must be '' \(off\) or one of memlab-best"):
        Pipeline().replace(best_line="vector")
    with pytest.raises(ValueError, match="best_line_depth must be an integer >= 1"):
        Pipeline().replace(best_line="bm25", best_line_depth=0)
    with pytest.raises(
        ValueError, match=r"cannot be combined with exact_tiers=True: the chunk's score"
    ):
        memlab_best_chunk(exact_tiers=True)
    with pytest.raises(ValueError, match="selection_rule='openclaw-current'"):
        memlab_best_chunk(selection_rule="openclaw-current")
    with pytest.raises(ValueError, match=r"decay='exact' and importance_boost=True: the chunk's"):
        memlab_best_chunk(decay="exact", importance_boost=True)
    with pytest.raises(
        ValueError, match=r"memory_files='openclaw-2026\.9': a line view needs memory_files in"
    ):
        memlab_best_chunk(memory_files="openclaw-2026.9")
    assert memlab_best_chunk(exact_tiers=True, **CHUNK_AS_UNIT).exact_tiers
    assert memlab_best_chunk(decay="exact", **CHUNK_AS_UNIT).decay == "exact"
    with pytest.raises(ValueError, match="best_line_order must be one of max, novel; got 'new'"):
        memlab_best_chunk(best_line_order="new")
    with pytest.raises(ValueError, match=r"cannot be combined with mmr='jaccard'"):
        memlab_best_chunk(mmr="jaccard")  # two diversity orders at once
    assert memlab_best_chunk(mmr="jaccard", best_line_order="max").mmr == "jaccard"
    with pytest.raises(ValueError, match="best_line is off"):
        Pipeline().line_system()
    assert line_system_factory("bm25")().name == "bm25"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "ws"
    facts = "".join(f"- Note {i}: the build {i} passed on runner {i % 3}.\n" for i in range(30))
    write(ws, "MEMORY.md", "# Facts\n\n- Hana prefers green tea.\n" + facts)
    chat = [
        "User: where is the deploy key kept?",
        "Assistant: It is in vault/prod, rotated monthly.",
        "User: thanks. And what does Miso eat?",
        "Assistant: Miso eats salmon twice a day.",
    ] * 6
    write(ws, "memory/2026-11-30.md", "## Chat\n\n" + "\n".join(chat) + "\n")
    return ws


def chunk_index(ws: Path, embedder=None) -> MemoryIndex:
    idx = MemoryIndex(
        ws,
        embedder=HashingEmbedder(64) if embedder is None else embedder,
        fts_tokenizer="porter",
        chunker=ChunkerConfig("openclaw", 48, 12),  # several overlapping chunks per file
        progress=False,
    )
    idx.sync()
    return idx


def by_hand(idx: MemoryIndex, p: Pipeline, query: str) -> dict[tuple[str, int, int], float]:
    """Every chunk's best score among the line system's top lines, computed from an
    independent search of the line view."""
    lines = p.line_system().search(idx.line_view("porter"), query, with_text=False)
    t = idx.table
    out = {}
    for c in range(len(t)):
        inside = lines[
            (lines["path"] == t.paths[c])
            & (lines["start_line"] >= t.start_lines[c])
            & (lines["start_line"] <= t.end_lines[c])
        ]
        if len(inside):
            out[(t.paths[c], int(t.start_lines[c]), int(t.end_lines[c]))] = inside["score"].max()
    return out


def test_chunks_are_scored_by_their_best_line_and_ties_go_to_the_chunk_score(
    workspace: Path,
) -> None:
    idx = chunk_index(workspace)
    p = memlab_best_chunk(max_results=50, best_line_order="max")
    unit = memlab_best_chunk(max_results=1000, **CHUNK_AS_UNIT)
    for q in QUERIES:
        got = p.search(idx, q, with_text=False)
        want = by_hand(idx, p, q)
        keys = list(zip(got["path"], got["start_line"], got["end_line"], strict=True))
        assert set(keys) == set(want)  # exactly the chunks holding a top line
        np.testing.assert_allclose(got["score"], [want[k] for k in keys], rtol=0, atol=1e-12)
        assert (np.diff(got["score"].to_numpy()) <= 0).all()
        chunk_score = {
            (r.path, r.start_line, r.end_line): r.score
            for r in unit.search(idx, q, with_text=False).itertuples()
        }
        for a, b in itertools.pairwise(keys):  # equal line scores: chunk score decides
            if want[a] == want[b]:
                assert chunk_score[a] >= chunk_score[b]
    # The overlapping chunks do share best lines, so the tie rule was exercised above.
    assert any(len(set(by_hand(idx, p, q).values())) < len(by_hand(idx, p, q)) for q in QUERIES)


def test_the_novel_order_places_the_chunk_with_the_best_new_line_next(workspace: Path) -> None:
    idx = chunk_index(workspace)
    p = memlab_best_chunk(max_results=50)
    assert p.best_line_order == "novel"  # the preset's order
    by_max = p.replace(best_line_order="max")
    moved = 0
    for q in QUERIES:
        got = p.search(idx, q, with_text=False)
        first = by_max.search(idx, q, with_text=False)
        keys = list(zip(got["path"], got["start_line"], got["end_line"], strict=True))
        max_keys = list(zip(first["path"], first["start_line"], first["end_line"], strict=True))
        assert sorted(keys) == sorted(max_keys)  # the same chunks, each with its best line
        np.testing.assert_array_equal(
            got.set_index(["path", "start_line"])["score"].sort_index(),
            first.set_index(["path", "start_line"])["score"].sort_index(),
        )
        # By hand from an independent search of the line view: each next chunk holds the
        # best line no chunk above holds; ties in the max order's order.
        lines = p.line_system().search(idx.line_view("porter"), q, with_text=False)
        held = {
            key: {
                (r.path, r.start_line): r.score
                for r in lines.itertuples()
                if r.path == key[0] and key[1] <= r.start_line <= key[2]
            }
            for key in max_keys
        }
        assert keys == greedy_by_hand(max_keys, held)
        moved += keys != max_keys
    assert moved > 0  # overlapping chunks did share a best line: the rule was exercised


def test_the_novel_order_needs_the_held_lines(workspace: Path) -> None:
    idx = chunk_index(workspace)
    p = memlab_best_chunk()
    cs = p.retrieve(idx, QUERIES, qids=[str(i) for i in range(len(QUERIES))])
    assert set(line_keys(p)) <= set(cs.extra)
    del cs.extra[line_held_key(p)]
    with pytest.raises(ValueError, match=r"best_line_order='novel' needs the lines each chunk"):
        p.rank(cs)
    p.replace(best_line_order="max").rank(cs)  # the max order reads the scores alone


def test_merged_candidate_sets_keep_each_groups_held_lines(
    beam_dir: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memlab.datasets.beam import load_beam
    from memlab.eval.lab import Lab
    from memlab.eval.merge import merge_candidate_sets

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = load_beam(beam_dir, tmp_path / "out")  # one workspace per chat
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="chunk", index_dir=tmp_path / "i")
    q = ds.queries
    p = memlab_best_chunk(max_results=10)
    parts, indexes, alone = [], [], []
    for g, rows in q.groupby("group").indices.items():
        idx = lab.lab_for(p).index(g)
        sub = q.iloc[rows]
        cs = p.retrieve(idx, sub["query"].tolist(), qids=sub["qid"].tolist())
        parts.append((g, cs, np.asarray(rows)))
        indexes.append(idx)
        alone.append(p.run(cs)[["qid", "path", "start_line", "score"]])
    assert len(parts) > 1
    # One group's codes one slot wider (an unused slot: the same lines), so the merge
    # must pad the others' K.
    wide = parts[0][1].extra
    key = line_held_key(p)
    wide[key] = np.concatenate(
        [wide[key], np.full((*wide[key].shape[:2], 1), -1, wide[key].dtype)], axis=2
    )
    assert len({cs.extra[key].shape[2] for _, cs, _ in parts}) > 1
    merged = merge_candidate_sets(parts, indexes, len(q))
    got = merged.extra[key]
    assert got.shape[2] == max(cs.extra[key].shape[2] for _, cs, _ in parts)
    for _, cs, rows in parts:
        k = cs.extra[key].shape[2]
        np.testing.assert_array_equal(got[rows, : cs.width, :k], cs.extra[key])
        assert (got[rows, : cs.width, k:] == -1).all()  # K padding
        assert (got[rows, cs.width :] == -1).all()  # width padding
    # A part without the held lines cannot be merged: its chunks would read the padding.
    del parts[1][1].extra[key]
    with pytest.raises(ValueError, match=r"the parts carry different CandidateSet\.extra keys"):
        merge_candidate_sets(parts, indexes, len(q))
    want = pd.concat(alone).set_index("qid").loc[q["qid"]].reset_index()
    got = p.run(merged)[["qid", "path", "start_line", "score"]]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))


def test_memory_search_answers_with_chunks_and_the_workspace_is_untouched(
    workspace: Path, tmp_path: Path
) -> None:
    before = sorted(str(x.relative_to(workspace)) for x in workspace.rglob("*"))
    idx = chunk_index(workspace)
    out = memory_search(idx, "what does Miso eat", pipeline=preset("memlab-best-chunk"))
    assert out["results"], out
    top = out["results"][0]
    assert top["path"] == "memory/2026-11-30.md" and "Miso eats salmon" in top["snippet"]
    assert top["endLine"] > top["startLine"]  # a chunk, not a line
    json.dumps(out)
    view = idx.line_view("porter")
    assert view.db_path.parent == idx.db_path.parent
    assert view.db_path.name == f"{idx.db_path.stem}.lines-porter.sqlite"
    assert str(tmp_path / "cache") in str(view.db_path)
    assert idx.status()["line_views"] == {"porter": str(view.db_path)}
    assert sorted(str(x.relative_to(workspace)) for x in workspace.rglob("*")) == before


def test_a_sync_of_the_index_syncs_its_line_view(workspace: Path) -> None:
    idx = chunk_index(workspace)
    p = preset("memlab-best-chunk")
    assert "quokka" not in " ".join(p.search(idx, "quokka habitat")["text"])
    write(workspace, "memory/2026-12-01.md", "## Chat\n\nUser: the quokka habitat is Rottnest.\n")
    idx.sync()
    hits = p.search(idx, "quokka habitat")
    assert hits["path"].iloc[0] == "memory/2026-12-01.md"


def test_a_sync_by_another_index_object_keeps_the_line_view_in_step(workspace: Path) -> None:
    # The MCP server's layout: a reader answers searches, a watcher's writer syncs.
    reader = chunk_index(workspace)
    p = preset("memlab-best-chunk")
    p.search(reader, "what does Miso eat")  # the reader builds the line view
    writer = chunk_index(workspace)
    assert writer.db_path == reader.db_path and writer.line_view_tokenizers() == ["porter"]
    write(workspace, "memory/2026-12-01.md", "## Chat\n\nUser: the quokka habitat is Rottnest.\n")
    writer.sync()
    hits = p.search(reader, "quokka habitat")
    assert hits["path"].iloc[0] == "memory/2026-12-01.md"
    (workspace / "memory/2026-12-01.md").unlink()
    writer.sync()
    assert "memory/2026-12-01.md" not in set(p.search(reader, "quokka habitat")["path"])


def test_keyword_only_index_and_a_failing_provider_rank_by_keyword_lines(
    workspace: Path,
) -> None:
    p = preset("memlab-best-chunk")
    idx = MemoryIndex(workspace, embedder=None, fts_tokenizer="porter", progress=False)
    idx.sync()
    res = memory_search(idx, "Miso salmon", pipeline=p)
    assert res["mode"] == "fts-only" and "Miso eats salmon" in res["results"][0]["snippet"]

    class QueryFails(HashingEmbedder):
        def embed_query(self, text: str) -> np.ndarray:
            raise EmbeddingError("provider down (simulated)")

    bad = chunk_index(workspace, embedder=QueryFails(64))
    res = memory_search(bad, "Miso salmon", pipeline=p)
    assert "keyword-only results" in res["warning"]
    assert "Miso eats salmon" in res["results"][0]["snippet"]


def test_the_release_file_rule_has_no_line_view(workspace: Path) -> None:
    idx = MemoryIndex(workspace, embedder=None, memory_files="openclaw-2026.9", progress=False)
    with pytest.raises(ValueError, match=r"a line view needs one of openclaw-2026\.4"):
        idx.line_view()


def test_explain_names_the_chunks_without_a_top_line(workspace: Path) -> None:
    idx = chunk_index(workspace)
    p = memlab_best_chunk(best_line_depth=1)  # one line: one or two chunks hold it
    cs = p.retrieve(idx, ["what does Miso eat"], qids=["q"])
    ex = explain(p, cs)
    returned = ex[ex["fate"] == "returned"]
    assert 1 <= len(returned) <= 2
    assert (ex["reason"] == "holds none of the query's top 1 lines (best_line)").any()
    assert (returned["score"] == returned["best_line"]).all()


def test_explain_says_the_order_is_by_new_lines() -> None:
    from memlab.pipeline.explain import explain_formula

    tail = "placed by new lines: next, the chunk whose best top line no chunk above holds"
    assert tail in explain_formula(memlab_best_chunk(), "hybrid")
    assert "new lines" not in explain_formula(memlab_best_chunk(best_line_order="max"), "hybrid")
    assert explain_formula(memlab_best_chunk(), "hybrid").startswith(
        "fused = 0.300·vector_norm + 0.700·text_norm; score = best_line (ties by fused"
    )


@pytest.fixture
def synth_lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A chunk-level lab over a small generated dataset (hashing embedder, private cache)."""
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.eval.lab import Lab

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = generate(SynthConfig(days=6, queries_per_type=3, notes_per_day=6), tmp_path / "data")
    return Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="chunk", index_dir=tmp_path / "i")


def test_the_lab_ranks_like_the_engine(synth_lab) -> None:
    lab, ds = synth_lab, synth_lab.dataset
    p = memlab_best_chunk(max_results=10)
    lc = lab.candidates_for_system(p)
    r = p.rank(lc.cs)
    q = ds.queries
    for i in range(len(q)):
        idx = lab.lab_for(p).index(q["group"].iloc[i])
        want = p.search(idx, q["query"].iloc[i], with_text=False)
        cols = r.columns[i][r.columns[i] >= 0]
        pos = lc.cs.pos[i, cols]
        got = list(zip(lc.cs.table.paths[pos], lc.cs.table.start_lines[pos], strict=True))
        assert got == list(zip(want["path"], want["start_line"], strict=True)), q["qid"].iloc[i]
        # float32 query vectors: the lab embeds its questions in one batch, search one by one
        np.testing.assert_allclose(r.scores[i][: len(cols)], want["score"], rtol=0, atol=1e-5)
    from memlab.eval.experiment import run_experiment

    res = run_experiment([p, preset("bm25")], lab, ["recall@6"])
    text = res.format()
    row = next(line.split() for line in text.splitlines() if line.startswith(p.name))
    assert row[3] == "wsum+line"
    assert "+line: chunks ranked by their best line under memlab-best" in text
    assert "; memlab-best-chunk: placed by new lines (the next chunk holds" in text
    plain = run_experiment([p.replace(best_line_order="max")], lab, ["recall@6"]).format()
    assert "placed by new lines" not in plain
    assert {s["name"]: s["candidates"]["best_line"] for s in res.to_json()} == {
        p.name: "memlab-best",
        "bm25": None,
    }


def test_a_saved_run_keeps_the_new_line_order_for_tools_that_sort_by_score(
    synth_lab, tmp_path: Path
) -> None:
    from memlab.eval.experiment import run_experiment

    p = memlab_best_chunk(max_results=10)
    res = run_experiment([p, preset("bm25")], synth_lab, ["recall@6"], keep_runs=True)
    runs = pd.read_csv(
        res.save(tmp_path / "exp") / "runs.trec",
        sep=" ",
        names=["qid", "q0", "docno", "rank", "score", "system"],
    )
    mine = runs[runs["system"] == p.name]
    # trec_eval and ranx sort by score: 1/rank keeps the greedy order
    assert np.allclose(mine["score"], 1.0 / mine["rank"], atol=1e-6)
    assert len(mine) > 0 and "novel_lines" in p.active_stages()
    bm = runs[runs["system"] == "bm25"]["score"].to_numpy()
    want = res.runs[res.runs["system"] == "bm25"]["score"].to_numpy()
    np.testing.assert_allclose(bm, want, atol=1e-6)  # a system that does not re-order


def test_a_sweep_over_the_line_depth_scores_each_depth_with_its_own_lines(synth_lab) -> None:
    from memlab.eval.sweep import sweep

    lab = synth_lab
    base = memlab_best_chunk()
    res = sweep(lab, base, {"best_line_depth": [1, 100]}, ["recall@10"], pinned=True)
    for depth in (1, 100):
        p = base.replace(best_line_depth=depth)
        want = np.nanmean(lab.candidates_for_system(p).score(p, ["recall@10"])["recall@10"])
        got = res.table.loc[res.table["best_line_depth"] == depth, "mean"].iloc[0]
        assert got == pytest.approx(want)
    # one line per query holds at most two chunks: recall@10 must fall at depth 1
    t = res.table.set_index("best_line_depth")["mean"]
    assert t.loc[1] < t.loc[100]


def test_a_line_view_left_behind_makes_the_index_stale(workspace: Path) -> None:
    from memlab.store.writer import IndexWriter

    idx = chunk_index(workspace)
    p = preset("memlab-best-chunk")
    p.search(idx, "what does Miso eat")  # builds the line view
    write(workspace, "memory/2026-12-01.md", "## Chat\n\nUser: the quokka habitat is Rottnest.\n")
    IndexWriter.sync(idx)  # the chunk index alone, as a sync that failed half-way leaves it
    fresh = chunk_index_object(workspace)
    assert fresh.stale_files() == ["memory/2026-12-01.md"]  # only the view is behind
    assert fresh.ensure_synced(files=True) is not None
    assert fresh.stale_files() == []
    assert p.search(fresh, "quokka habitat")["path"].iloc[0] == "memory/2026-12-01.md"


def chunk_index_object(ws: Path) -> MemoryIndex:
    return MemoryIndex(
        ws,
        embedder=HashingEmbedder(64),
        fts_tokenizer="porter",
        chunker=ChunkerConfig("openclaw", 48, 12),
        progress=False,
    )


def test_line_view_files_keep_the_index_file_suffix(workspace: Path, tmp_path: Path) -> None:
    a = MemoryIndex(workspace, db_path=tmp_path / "a.db", embedder=None, progress=False)
    b = MemoryIndex(workspace, db_path=tmp_path / "a.sqlite", embedder=None, progress=False)
    assert a.line_view("porter").db_path.name == "a.lines-porter.db"
    assert b.line_view("porter").db_path.name == "a.lines-porter.sqlite"
    assert MemoryIndex(workspace, db_path=tmp_path / "a.db").line_view_tokenizers() == ["porter"]


def test_the_mcp_server_builds_the_line_view_before_the_first_call(workspace: Path) -> None:
    from memlab.server import MemoryService

    reader, writer = chunk_index_object(workspace), chunk_index_object(workspace)
    service = MemoryService(reader, writer, preset("memlab-best-chunk"))
    view = writer.db_path.with_name(f"{writer.db_path.stem}.lines-porter.sqlite")
    assert not view.exists()
    service.start()
    try:
        assert view.exists()
        res = service.search("what does Miso eat")
        assert "Miso eats salmon" in res["results"][0]["snippet"]
    finally:
        service.stop()


def test_a_sweep_on_one_candidate_set_refuses_several_line_settings(synth_lab) -> None:
    from memlab.eval.sweep import sweep

    lab = synth_lab
    base = memlab_best_chunk()
    lc = lab.candidates_for_system(base)
    with pytest.raises(ValueError, match="sweep on a Lab"):
        sweep(lc, base, {"best_line_depth": [1, 100]}, ["recall@10"], pinned=True)
    sweep(lc, base, {"vector_weight": [0.3, 0.5]}, ["recall@10"], pinned=True)  # one line set
    # One other setting alone is refused too: the set's scores were made for depth 100,
    # and ranking depth 1 by them would report depth 100's figures under depth 1's name.
    shallow = base.replace(best_line_depth=1)
    with pytest.raises(ValueError, match=r"no line arrays for best_line:memlab-best:1:"):
        sweep(lc, base, {"best_line_depth": [1]}, ["recall@10"], pinned=True)
    with pytest.raises(ValueError, match=r"carry best_line:memlab-best:100:vector\+keyword"):
        shallow.rank(lc.cs)
    # A set carrying both settings' scores serves both, each with its own.
    both = lab.with_best_line(lab.with_best_line(lc, shallow), base)
    got = sweep(both, base, {"best_line_depth": [1, 100]}, ["recall@10"], pinned=True)
    want = np.stack(
        [lab.with_best_line(lc, s).score(s, ["recall@10"])["recall@10"] for s in (shallow, base)]
    )
    np.testing.assert_array_equal(got.per_query["recall@10"], want)
    assert not np.array_equal(want[0], want[1], equal_nan=True)  # the settings do differ here


def test_a_corrupt_line_view_is_stale_and_the_next_sync_rebuilds_it(workspace: Path) -> None:
    idx = chunk_index(workspace)
    p = preset("memlab-best-chunk")
    p.search(idx, "what does Miso eat")
    view = idx.line_view("porter").db_path
    idx.close()
    view.write_bytes(b"not a database" * 100)
    fresh = chunk_index_object(workspace)
    assert "memory/2026-11-30.md" in fresh.stale_files()  # stale, not an error
    assert fresh.status()["dirty"]
    fresh.ensure_synced(files=True)  # what memlab search does first
    assert fresh.stale_files() == []
    assert "Miso eats salmon" in p.search(fresh, "what does Miso eat")["text"].iloc[0]
    assert list(view.parent.glob(f"{view.name}.corrupt-*"))  # set aside, not deleted
