"""The memory as of a time (``memlab.store.asof``): per-query cut-offs in candidate
generation. A future unit is never a candidate, depth counts past units only, and a
cut-off search equals a search on a workspace that physically holds only the past
(both legs, every preset, turn and chunk level); the line system of a best-line preset
takes its top lines after the cut-off."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.chunking import ChunkerConfig
from memlab.datasets.base import Dataset
from memlab.embed import HashingEmbedder
from memlab.eval.lab import Lab
from memlab.pipeline.presets import PRESETS, preset
from memlab.retrieval.candidates import retrieve
from memlab.stages.best_line import line_arrays, line_scores_key
from memlab.store import MemoryIndex
from memlab.store.asof import check_cutoffs, unit_time, unit_times, visible_rows
from tests.conftest import write

WORDS = (
    "kiwi walrus deploy gateway invoice dentist marathon sourdough osaka ticket "
    "budget laptop garden violin harbor lantern"
).split()
# (file, its time as unit_time reads it); MEMORY.md is undated: always visible.
FILES = [
    "memory/2026-01-01.md",
    "memory/2026-01-01-0001.md",
    "memory/2026-01-02.md",
    "memory/2026-01-03.md",
    "memory/2026-01-03-0930.md",
    "memory/2026-01-04.md",
]
QUERIES = ["kiwi walrus", "deploy the gateway", "dentist invoice budget", "violin harbor kiwi"]


def _lines(rng: random.Random, n: int, who: str) -> list[str]:
    out = []
    for i in range(n):
        words = [*rng.sample(WORDS, rng.randint(2, 5)), f"filler{rng.randint(0, 40)}"]
        out.append(f"{'User' if (i % 2 == 0) == (who == 'u') else 'Assistant'}: {' '.join(words)}")
    return out


def make_workspace(root: Path, files: list[str], seed: int = 3) -> Path:
    """The same text for each file whatever subset is written (seeded per file)."""
    for rel in [*files, "MEMORY.md"]:
        rng = random.Random(f"{seed}:{rel}")
        body = _lines(rng, 14, "u") if rel != "MEMORY.md" else [f"- note {w}" for w in WORDS[:6]]
        write(root, rel, "\n".join(["## Session " + rel, *body]) + "\n")
    return root


def index_of(ws: Path, unit: str, tokenizer: str = "unicode61") -> MemoryIndex:
    idx = MemoryIndex(
        ws,
        db_path=ws.parent / f"{ws.name}-{unit}-{tokenizer}.sqlite",
        embedder=HashingEmbedder(dimensions=64),
        chunker=ChunkerConfig("line" if unit == "turn" else "openclaw", tokens=60, overlap=10),
        fts_tokenizer=tokenizer,
        progress=False,
    )
    idx.sync()
    return idx


def test_unit_time_reads_dated_names() -> None:
    day = 1767225600.0  # 2026-01-01 00:00 UTC
    assert unit_time("memory/2026-01-01.md") == day
    assert unit_time("memory/2026-01-01-0930.md") == day + 9.5 * 3600
    assert unit_time("memory/log/2026-01-01-0001.md") == day + 60
    assert unit_time("memory/2026-01-01-notes.md") == day
    assert unit_time("memory/2026-01-01-2460.md") == day  # not a time of day: midnight
    for undated in ("MEMORY.md", "memory/ideas.md", "memory/2026-02-30.md", "notes/2026-01-01.md"):
        assert np.isnan(unit_time(undated)), undated
    assert np.isnan(unit_time("memory/2026-01-01.md", source="sessions"))


def test_visible_rows_rule() -> None:
    t = np.array([1.0, 2.0, np.nan, 3.0])
    assert visible_rows(t, 2.0).tolist() == [True, False, True, False]  # own time hidden
    assert visible_rows(t, np.nan).all()
    assert check_cutoffs(None, 3).shape == (3,)
    assert check_cutoffs(5.0, 2).tolist() == [5.0, 5.0]
    with pytest.raises(ValueError, match="one value per query"):
        check_cutoffs([1.0], 2)
    with pytest.raises(ValueError, match="finite"):
        check_cutoffs([np.inf], 1)


def _key(cs, qi: int) -> dict[tuple[str, int, int], tuple[float, float, int, int]]:
    t = cs.table
    out = {}
    for c, p in enumerate(cs.pos[qi]):
        if p >= 0:
            k = (str(t.paths[p]), int(t.start_lines[p]), int(t.end_lines[p]))
            out[k] = (
                cs.vec_score[qi, c],
                cs.text_raw[qi, c],
                cs.vec_rank[qi, c],
                cs.text_rank[qi, c],
            )
    return out


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The full workspace (key 6) and, for each cut-off point k, the workspace holding only
    the first k dated files (plus MEMORY.md)."""
    base = tmp_path_factory.mktemp("asof")
    return {k: make_workspace(base / f"past{k}", FILES[:k]) for k in (1, 3, 4, 6)}


def cutoff_before(k: int) -> float:
    """The cut-off that hides FILES[k:]: the time of FILES[k]."""
    return unit_time(FILES[k])


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["turn", "chunk"])
@pytest.mark.parametrize("k", [1, 3, 4])
@pytest.mark.parametrize("mode", ["or", "and"])
def test_both_legs_equal_a_workspace_holding_only_the_past(
    worlds: dict[int, Path], unit: str, k: int, mode: str
) -> None:
    full = index_of(worlds[6], unit)
    past = index_of(worlds[k], unit)
    for depth in (3, 50):
        cut = retrieve(full, QUERIES, depth=depth, keyword_mode=mode, cutoffs=cutoff_before(k))
        ref = retrieve(past, QUERIES, depth=depth, keyword_mode=mode)
        for qi in range(len(QUERIES)):
            got, want = _key(cut, qi), _key(ref, qi)
            assert got.keys() == want.keys(), (QUERIES[qi], depth)
            for key in want:
                # bm25 over the past's own statistics, bit for bit; the same cosines
                np.testing.assert_array_equal(got[key][1:], want[key][1:])
                np.testing.assert_allclose(got[key][0], want[key][0], rtol=0, atol=1e-6)
        assert np.isfinite(cut.cutoffs).all()


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["turn", "chunk"])
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_ranks_as_on_the_past_workspace(
    worlds: dict[int, Path], unit: str, name: str
) -> None:
    p = preset(name).at_k(8)
    tok = p.retrieval_spec().fts_tokenizer or "unicode61"
    k = 3
    full, past = index_of(worlds[6], unit, tok), index_of(worlds[k], unit, tok)
    qids = [f"q{i}" for i in range(len(QUERIES))]
    cols = ["qid", "path", "start_line", "end_line", "score"]
    got = p.run(p.retrieve(full, QUERIES, qids=qids, cutoffs=[cutoff_before(k)] * len(QUERIES)))
    want = p.run(p.retrieve(past, QUERIES, qids=qids))
    assert len(want)
    later = {str(f) for f in FILES[k:]}
    assert not set(got["path"]) & later  # never a future unit
    pd.testing.assert_frame_equal(
        got[cols].reset_index(drop=True), want[cols].reset_index(drop=True), atol=1e-6
    )


# Queries that hit the release's filename leg: a date of a past file, of a future one,
# a path word every file holds, and a short token (a trigram substring filter).
PATH_QUERIES = ["2026-01-02", "2026-01-04 kiwi", "memory walrus", "01 md", "kiwi"]


@pytest.mark.parametrize("tok", ["unicode61", "trigram"])
@pytest.mark.parametrize("k", [1, 3, 4])
def test_release_keyword_leg_sees_the_past_paths_only(
    worlds: dict[int, Path], tok: str, k: int
) -> None:
    """keyword_mode="openclaw-current" (body searches, expansion terms, the path table
    and its exact tiers) under a cut-off equals the same mode on the past workspace:
    hits, their order and every score the release computes."""
    full, past = index_of(worlds[6], "chunk", tok), index_of(worlds[k], "chunk", tok)
    cut = retrieve(
        full,
        PATH_QUERIES,
        depth=10,
        vector=False,
        keyword_mode="openclaw-current",
        cutoffs=cutoff_before(k),
    )
    want = retrieve(past, PATH_QUERIES, depth=10, vector=False, keyword_mode="openclaw-current")
    later = {str(f) for f in FILES[k:]}
    assert any(
        str(full.table.paths[p]) in later
        for p in retrieve(
            full, PATH_QUERIES, depth=10, vector=False, keyword_mode="openclaw-current"
        ).pos.ravel()
        if p >= 0
    )  # without the cut-off the future files are hits
    for qi in range(len(PATH_QUERIES)):
        g, w = cut.pos[qi], want.pos[qi]
        g_keys = [(str(full.table.paths[p]), int(full.table.start_lines[p])) for p in g if p >= 0]
        w_keys = [(str(past.table.paths[p]), int(past.table.start_lines[p])) for p in w if p >= 0]
        assert g_keys == w_keys, PATH_QUERIES[qi]
        assert not {path for path, _ in g_keys} & later
        n = len(w_keys)
        for key in ("kw_score", "kw_text", "kw_path", "kw_spec", "kw_body"):
            np.testing.assert_allclose(
                cut.extra[key][qi][:n],
                want.extra[key][qi][:n],
                rtol=0,
                atol=1e-9,
                err_msg=f"{key} for {PATH_QUERIES[qi]!r}",
            )


def test_mixed_cutoffs_in_one_batch_equal_one_at_a_time(worlds: dict[int, Path]) -> None:
    full = index_of(worlds[6], "turn")
    cuts = [np.nan, cutoff_before(4), cutoff_before(1), cutoff_before(3)]
    batch = retrieve(full, QUERIES, depth=20, keyword_mode="or", cutoffs=cuts)
    for qi, c in enumerate(cuts):
        one = retrieve(full, [QUERIES[qi]], depth=20, keyword_mode="or", cutoffs=[c])
        mine = batch.pos[qi] >= 0
        np.testing.assert_array_equal(batch.pos[qi][mine], one.pos[0][one.pos[0] >= 0])
        np.testing.assert_array_equal(batch.text_raw[qi][mine], one.text_raw[0][: mine.sum()])
        np.testing.assert_allclose(
            batch.vec_score[qi][mine], one.vec_score[0][: mine.sum()], rtol=0, atol=1e-6
        )


def test_depth_counts_past_units_only(worlds: dict[int, Path]) -> None:
    full = index_of(worlds[6], "turn")
    times = unit_times(full.table)
    c = cutoff_before(3)
    for depth in (1, 2, 4):
        cs = retrieve(full, ["kiwi"], depth=depth, keyword_mode="or", cutoffs=[c])
        pos = cs.pos[0][cs.pos[0] >= 0]
        assert not (times[pos] >= c).any()
        # each leg returns `depth` units although future units would score higher
        assert (cs.vec_rank[0] >= 0).sum() == depth
        assert (cs.text_rank[0] >= 0).sum() == depth
    free = retrieve(full, ["kiwi"], depth=40, keyword_mode="or")
    assert (times[free.pos[0][free.pos[0] >= 0]] >= c).any()  # the future exists


def test_a_future_line_never_takes_a_past_lines_place(tmp_path: Path) -> None:
    """best_line_depth 1: the future file holds the query's best line. Were the line
    system's cut-off taken before the time filter, the past chunk would hold none of the
    top lines and be lost."""
    write(tmp_path, "memory/2026-01-01.md", "## Day one\nUser: the kiwi launch is friday\n")
    write(tmp_path, "memory/2026-01-05.md", "## Day five\nUser: kiwi kiwi kiwi launch\n")
    chunks = MemoryIndex(
        tmp_path, db_path=tmp_path / "c.sqlite", embedder=HashingEmbedder(dimensions=64)
    )
    chunks.sync()
    p = preset("memlab-best-chunk", best_line_depth=1)
    cut = [unit_time("memory/2026-01-05.md")]
    cs = p.retrieve(chunks, ["kiwi launch"], qids=["q"], cutoffs=cut)
    res = p.run(cs)
    assert res["path"].tolist() == ["memory/2026-01-01.md"]
    # The counterfactual: chunk candidates cut, line candidates not.
    line_p = p.line_system()
    lines = chunks.line_view(p.line_tokenizer(chunks.fts_tokenizer))
    leaked = line_p.retrieve(lines, ["kiwi launch"], qids=["q"])
    extra = line_arrays(p, cs, line_p, leaked)
    assert not np.isfinite(extra[line_scores_key(p)][0]).any()


def test_refusals(worlds: dict[int, Path]) -> None:
    full = index_of(worlds[6], "chunk")

    class Approximate:
        exact = False
        name = "ivf"
        vectors = full.table.vectors

        def search(self, q, k):  # pragma: no cover - never reached
            raise AssertionError

    full.set_vector_engine(Approximate())
    with pytest.raises(ValueError, match="exact vector engine"):
        retrieve(full, ["kiwi"], cutoffs=[cutoff_before(2)])


def _lab_dataset(root: Path, ws: Path, cutoff: float | None) -> Dataset:
    q = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(len(QUERIES))],
            "query": QUERIES,
            "cutoff": [cutoff] * len(QUERIES) if cutoff is not None else [np.nan] * 4,
        }
    )
    ev = pd.DataFrame({"qid": ["q0"], "path": [FILES[0]], "start_line": [1], "end_line": [20]})
    return Dataset("asof", root, {"default": ws}, q, ev)


@pytest.mark.parametrize("unit", ["turn", "chunk"])
def test_lab_candidates_are_past_only_for_every_preset(
    worlds: dict[int, Path], tmp_path: Path, unit: str
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(worlds[6], ws)
    c = cutoff_before(3)
    lab = Lab(
        _lab_dataset(tmp_path, ws, c),
        embedder=HashingEmbedder(dimensions=64),
        unit=unit,
        index_dir=tmp_path / "idx",
    )
    systems = [preset(n).at_k(10) for n in sorted(PRESETS)]
    for name, lc in lab.candidates_for(systems).items():
        times = unit_times(lc.cs.table)
        pos = lc.cs.pos[lc.cs.pos >= 0]
        assert not (times[pos] >= c).any(), name
        assert np.all(lc.cs.cutoffs == c)
    # The cache is keyed by the cut-offs: the same lab without them sees the future.
    free = Lab(
        lab.dataset, embedder=lab.embedder, unit=unit, index_dir=tmp_path / "idx", as_of=False
    )
    lc = free.candidates(40, keyword_mode="or")
    assert (unit_times(lc.cs.table)[lc.cs.pos[lc.cs.pos >= 0]] >= c).any()
    assert lab.cutoff_key() is not None and free.cutoff_key() is None


def test_folder_format_cutoff_column(tmp_path: Path) -> None:
    """``cutoff`` in queries.jsonl: null = none; a number hides later files in the lab."""
    import json

    from memlab.datasets.base import load_folder

    make_workspace(tmp_path / "workspace", FILES)
    rows = [
        {"qid": "a", "query": "kiwi walrus", "cutoff": cutoff_before(1)},
        {"qid": "b", "query": "kiwi walrus", "cutoff": None},
    ]
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ev = {"qid": "a", "path": FILES[0], "start_line": 1, "end_line": 3}
    (tmp_path / "evidence.jsonl").write_text(json.dumps(ev) + "\n")
    ds = load_folder(tmp_path)
    assert ds.queries["cutoff"].iloc[0] == cutoff_before(1)
    assert np.isnan(ds.queries["cutoff"].iloc[1])
    lab = Lab(ds, embedder=HashingEmbedder(dimensions=64), unit="turn", index_dir=tmp_path / "i")
    cs = lab.candidates(100, keyword_mode="or").cs
    times = unit_times(cs.table)
    seen = [set(cs.table.paths[cs.pos[i][cs.pos[i] >= 0]]) for i in range(2)]
    assert seen[0] <= {"MEMORY.md", FILES[0]} and FILES[0] in seen[0]
    assert set(FILES) <= seen[1]  # no cut-off: every file
    assert np.isnan(times[cs.table.paths == "MEMORY.md"]).all()
