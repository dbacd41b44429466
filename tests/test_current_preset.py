"""The ``openclaw-current`` preset (OpenClaw 2026.9.6 as pipeline stages) agrees with
``tests.release_oracle.rank_hits`` (the release's ranking, checked against the release
under node) on generated workspaces; each new stage alone changes rankings as stated."""

from __future__ import annotations

import math
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memlab.chunking.annotations import INVALID_PROJECT_KEY
from memlab.embed import HashingEmbedder
from memlab.openclaw_current import (
    build_fts_query,
    expansion_keywords,
    importance_multiplier,
)
from memlab.pipeline.explain import explain
from memlab.pipeline.presets import PRESETS, preset
from memlab.store import MemoryIndex
from tests.release_oracle import rank_hits

NOW_S = datetime(2026, 9, 25, 12, tzinfo=UTC).timestamp()
TOPICS = [
    "router vlan config", "gateway host", "billing invoices", "backup schedule",
    "dentist appointment", "coffee beans", "kafka cluster", "api rate limits",
    "garden tomatoes", "tax return", "laptop battery", "wifi password",
]  # fmt: skip
FILLER = "the a notes we about then later team decided checked moved fixed".split()


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def sentence(rng: random.Random, topic: str) -> str:
    words = [rng.choice(FILLER) for _ in range(rng.randint(3, 9))]
    words.insert(rng.randint(0, len(words)), topic)
    return " ".join(words)


def make_workspace(root: Path, seed: int) -> None:
    """MEMORY.md entries (some annotated: importance, project keys, a malformed project),
    USER.md, dated logs old and recent (at two depths and with a suffix), undated notes
    named after topics."""
    rng = random.Random(seed)
    notes = [
        "",
        "",
        " <!-- importance: 10 -->",
        " <!-- importance: 2 -->",
        " <!-- importance: 7 -->",
    ]
    notes += [" <!-- project: net -->", " <!-- project: home; net -->", " <!-- project: -->"]
    entries = [f"- {sentence(rng, rng.choice(TOPICS))}{rng.choice(notes)}" for _ in range(10)]
    write(root, "MEMORY.md", "# Memory\n\n" + "\n".join(entries) + "\n")
    write(root, "USER.md", f"# User\n\n- {sentence(rng, 'coffee beans')}\n")
    days = ["2025-11-03", "2026-03-14", "2026-08-30", "2026-09-20", "2026-09-24"]
    for d in days:
        lines = [f"- {sentence(rng, rng.choice(TOPICS))}" for _ in range(rng.randint(2, 6))]
        write(root, f"memory/{d}.md", f"# {d}\n\n" + "\n".join(lines) + "\n")
    write(root, "memory/sub/2026-09-10-1430.md", f"# sub\n\n- {sentence(rng, 'kafka cluster')}\n")
    for name in ("router", "billing", "kafka"):
        body = "\n".join(f"- {sentence(rng, rng.choice(TOPICS))}" for _ in range(3))
        write(root, f"memory/notes/{name}.md", f"# {name}\n\n{body}\n")


QUERIES = [
    *TOPICS,
    "router", "router.md", "memory/notes/router.md", "memory", "MEMORY.md", "notes",
    "2026-09-20.md", "what did we decide about the billing yesterday?",
    "when is the dentist appointment again", "kafka", "tell me about coffee",
    "gateway host vlan", "the", "zzz unknown words", "team decided backup",
    "battery laptop wifi", "OC-4412 PR", "invoices?", "api",
]  # fmt: skip


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> list[MemoryIndex]:
    out = []
    for seed in (1, 2):
        root = tmp_path_factory.mktemp(f"ws{seed}")
        make_workspace(root / "ws", seed)
        idx = MemoryIndex(
            root / "ws",
            db_path=root / "db.sqlite",
            embedder=HashingEmbedder(dimensions=64),
            memory_files="openclaw-2026.9",
        )
        idx.sync()
        out.append(idx)
    return out


def release_chunks(index: MemoryIndex) -> list[dict]:
    t = index.table
    texts = index.texts(list(range(len(t))))
    out = []
    for k in range(len(t)):
        imp = None if t.importance is None or np.isnan(t.importance[k]) else t.importance[k]
        out.append(
            {
                "id": str(t.ids[k]),
                "path": str(t.paths[k]),
                "startLine": int(t.start_lines[k]),
                "endLine": int(t.end_lines[k]),
                "text": texts[k],
                "source": str(t.sources[k]),
                "importance": imp,
                "projectKey": None if t.project_keys is None else t.project_keys[k],
            }
        )
    return out


def path_bm25(index: MemoryIndex, term: str) -> dict[str, float]:
    """The filename leg's raw ranks, computed here independently of memlab's candidates."""
    fts = build_fts_query(term)
    if fts is None:
        return {}
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE p USING fts5(path, tokenize='unicode61')")
    con.executemany("INSERT INTO p VALUES (?)", [(x,) for x in sorted(set(index.table.paths))])
    rows = con.execute("SELECT path, bm25(p) FROM p WHERE p MATCH ? LIMIT 200", (fts,))
    return {p: r for p, r in rows}


def release_results(index, cs, qi, *, keyword=True, vector=True, **kw) -> list[dict]:
    """rank_hits on the raw legs of query ``qi``: the CandidateSet's cosines, and bm25 ranks
    of the body table (index.keyword_search) and of a path table, per search string."""
    q = cs.queries[qi].strip()
    t = index.table
    vec = None
    if vector:
        has = cs.has_vec[qi]
        vec = {
            str(t.ids[p]): float(s)
            for p, s in zip(cs.pos[qi][has], cs.vec_score[qi][has], strict=True)
        }
    bm25 = paths = None
    if keyword:
        bm25, paths = {}, {}
        for term in [q, *expansion_keywords(q)]:
            pos, ranks = index.keyword_search(build_fts_query(term), 200)
            bm25[term] = {str(t.ids[p]): float(r) for p, r in zip(pos, ranks, strict=True)}
            paths[term] = path_bm25(index, term)
    mtimes = {str(p): float(m) * 1000 for p, m in zip(t.paths, t.mtimes, strict=True)}
    return rank_hits(
        q, release_chunks(index), vec, bm25, path_rows=paths, now_ms=NOW_S * 1000,
        mtimes=mtimes, **kw,
    )  # fmt: skip


def memlab_results(p, cs) -> list[list[tuple[str, float]]]:
    df = p.run(cs)
    return [list(zip(g.docno, g.score, strict=True)) for _, g in df.groupby("qid", sort=False)]


def assert_agree(ours: list[tuple[str, float]], theirs: list[dict], where: str) -> None:
    assert [d for d, _ in ours] == [r["id"] for r in theirs], where
    for (_, a), r in zip(ours, theirs, strict=True):
        assert math.isclose(a, r["score"], rel_tol=0, abs_tol=1e-9), where


def run_all(p, index) -> tuple[object, list[list[tuple[str, float]]]]:
    qids = [f"q{i}" for i in range(len(QUERIES))]
    cs = p.retrieve(index, QUERIES, qids=qids, times=[NOW_S] * len(QUERIES))
    got = {q: [] for q in qids}
    df = p.run(cs)
    for qid, g in df.groupby("qid", sort=False):
        got[qid] = list(zip(g.docno, g.score, strict=True))
    return cs, [got[q] for q in qids]


# (minScore, vector window): a narrow vector window leaves keyword-only hits in these
# small workspaces (every chunk is among the 200 nearest otherwise), exercising the fill
# and, at minScore 5, the nothing-passes rule.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("min_score", "window", "active"),
    [(0.35, 200, ()), (0.0, 200, ("net",)), (0.6, 4, ()), (0.35, 2, ("home",)), (5.0, 3, ())],
)
def test_preset_agrees_with_rank_hits_hybrid(indexes, min_score, window, active):
    p = preset(
        "openclaw-current", min_score=min_score, max_candidates=window, active_projects=active
    )
    n_tier = n_fill = n_relaxed = n_imp = n_proj = 0
    for wi, index in enumerate(indexes):
        t = index.table
        assert (t.importance > 0).any() and (t.project_keys == INVALID_PROJECT_KEY).any()
        cs, ours = run_all(p, index)
        for qi in range(len(QUERIES)):
            theirs = release_results(
                index, cs, qi, min_score=min_score, active_projects=list(active)
            )
            assert_agree(ours[qi], theirs, f"ws{wi} {QUERIES[qi]!r}")
        r = p.rank(cs)
        rows, slots = np.nonzero(r.columns >= 0)
        shown = (rows, r.columns[rows, slots])
        n_imp += int((r.stage["importance"][shown] != 1).sum())
        n_proj += int((r.stage["project"][shown] != 1).sum())
        n_tier += int((r.stage["tier"] > 0).any(axis=1).sum())
        n_fill += int((r.selected_by == 2).sum())
        n_relaxed += int((r.selected_by == 1).sum())
    assert n_tier >= 6  # file-name queries reached the exact tiers
    assert n_imp > 0  # annotated importance shaped returned scores
    assert (n_proj > 0) == bool(active)  # project affinity only with active keys
    if window < 200 and min_score < 1:
        assert n_fill > 0  # keyword-only fill was exercised
    if min_score > 1:
        assert n_relaxed > 0  # nothing passed: keyword hits >= 0


def test_preset_agrees_in_keyword_only_and_vector_only_modes(indexes):
    index = indexes[0]
    kw = preset("openclaw-current", vector=False)
    cs, ours = run_all(kw, index)
    assert kw.mode(cs) == "keyword"
    for qi in range(len(QUERIES)):
        assert_agree(ours[qi], release_results(index, cs, qi, vector=False), QUERIES[qi])
    vec = preset("openclaw-current", keyword=False)
    cs, ours = run_all(vec, index)
    assert vec.mode(cs) == "vector"
    for qi in range(len(QUERIES)):
        assert_agree(ours[qi], release_results(index, cs, qi, keyword=False), QUERIES[qi])


def test_expansion_and_filename_leg_reach_candidates(indexes):
    index = indexes[0]
    p = preset("openclaw-current")
    q = "what did we decide about the billing yesterday?"
    assert expansion_keywords(q) == ["decide", "billing"]
    cs = p.retrieve(index, [q], times=[NOW_S])
    strict, _ = index.keyword_search(build_fts_query(q), 200)
    # the strict AND query of 9 words finds nothing; the expansion terms find billing
    assert strict.size == 0 and cs.extra["kw_hit"].any()
    texts = cs.texts(cs.pos[0][cs.extra["kw_hit"][0] & cs.extra["kw_body"][0]])
    assert texts and all("billing" in x or "decide" in x for x in texts)
    cs = p.retrieve(index, ["router.md"], times=[NOW_S])
    spec = cs.extra["kw_spec"][0][cs.extra["kw_hit"][0]]
    assert 2 in spec.tolist()  # memory/notes/router.md by its basename


def annotated(index: MemoryIndex, **cols) -> MemoryIndex:
    """The index with annotation columns set on its loaded table (as H1's store does)."""
    t = index.table
    for k, v in cols.items():
        setattr(t, k, v)
    t.derived_cache.clear()
    return index


def test_importance_and_project_agree_and_multiply(indexes, tmp_path):
    index = indexes[1]
    t = index.table
    n = len(t)
    rng = np.random.default_rng(3)
    imp = np.where(rng.random(n) < 0.5, rng.integers(1, 11, n).astype(float), np.nan)
    keys = np.array(
        [rng.choice([None, "net", "home", "net; home", INVALID_PROJECT_KEY]) for _ in range(n)],
        dtype=object,
    )
    old = (t.importance, t.project_keys)
    try:
        annotated(index, importance=imp, project_keys=keys)
        p = preset("openclaw-current", active_projects=("net",))
        cs, ours = run_all(p, index)
        for qi in range(len(QUERIES)):
            theirs = release_results(index, cs, qi, active_projects=["net"])
            assert_agree(ours[qi], theirs, QUERIES[qi])
        ex = explain(p, cs)
        assert "× importance × project" in ex.attrs["formula"]
        kept = ex[(ex["tier"] == 0) & ex["score"].notna()]
        prod = kept["decayed"] * kept["importance"] * kept["project"]
        assert np.allclose(prod, kept["score"], rtol=0, atol=1e-12)
        # malformed project annotations leave ranking
        out = set(t.ids[keys == INVALID_PROJECT_KEY])
        assert out and not out & set(p.run(cs).docno)
        gone = ex[ex["docno"].isin(out)]
        assert (
            len(gone) and (gone["reason"] == "malformed project annotation (leaves ranking)").all()
        )
    finally:
        annotated(index, importance=old[0], project_keys=old[1])


def test_each_stage_alone_in_wsum(indexes):
    index = indexes[0]
    t = index.table
    base = preset("wsum")
    q = ["router vlan config", "billing invoices"]
    cs = base.retrieve(index, q, times=[NOW_S] * 2)
    ref = base.run(cs)
    # every stage off: bit-identical to wsum
    same = base.replace(importance_boost=False, exact_tiers=False, lexical_boost=False)
    assert same == base and same.run(cs).equals(ref)
    # importance 10 lifts a chunk's score by 1.25, importance 1 lowers it to 0.8
    old = t.importance
    try:
        target = int(ref["pos"].iloc[-1])
        imp = np.full(len(t), np.nan)
        imp[target] = 10.0
        annotated(index, importance=imp)
        on = base.replace(importance_boost=True).run(cs)
        a = ref.set_index(["qid", "docno"])["score"]
        b = on.set_index(["qid", "docno"])["score"]
        row = ref[ref["pos"] == target].iloc[0]
        key = (row["qid"], row["docno"])
        assert b[key] == a[key] * 1.25 == a[key] * importance_multiplier(10)
        others = [k for k in a.index if k != key and k in b.index]
        assert all(b[k] == a[k] for k in others)
    finally:
        annotated(index, importance=old)
    # the lexical boost raises every keyword hit's text score, never lowers it
    lb = base.replace(lexical_boost=True)
    s0, s1 = base.scores(cs), lb.scores(cs)
    ht = s0["has_text"]
    assert (s1["text_in"][ht] >= s0["text_in"][ht]).all() and (
        s1["text_in"][ht] > s0["text_in"][ht]
    ).any()
    # the release's decay: a 2025 log decays, MEMORY.md does not
    dec = base.replace(decay="openclaw-current").scores(cs)["decay"]
    paths = t.paths[np.where(cs.valid, cs.pos, 0)]
    assert (dec[(paths == "MEMORY.md") & cs.valid] == 1.0).all()
    old_log = (paths == "memory/2025-11-03.md") & cs.valid
    if old_log.any():
        assert (dec[old_log] < 0.1).all()


def test_alias_and_fast_sweep_refuses(indexes):
    from memlab.eval.fastsweep import fast_path_reason, rank_settings

    assert preset("openclaw-2026.9") == preset("openclaw-current")
    assert "openclaw-2026.9" not in PRESETS  # an alias is not a second system
    index = indexes[0]
    p = preset("openclaw-current")
    cs = p.retrieve(index, ["router"], times=[NOW_S])
    assert fast_path_reason(cs, [p]) is not None
    for extra in ({"selection_rule": "openclaw-current"}, {"importance_boost": True}):
        w = preset("wsum", **extra)
        assert fast_path_reason(cs, [w]) is not None, extra
    # the release's decay rule is a multiplier the fast path reads from the stage arrays
    ws = [preset("wsum", decay="openclaw-current", vector_weight=w) for w in (0.2, 0.7)]
    cs = ws[0].retrieve(index, QUERIES, times=[NOW_S] * len(QUERIES))
    assert fast_path_reason(cs, ws) is None
    fast = rank_settings(cs, ws)
    assert fast.path != "loop"
    for i, w in enumerate(ws):
        r = w.rank(cs)
        assert np.array_equal(fast.columns[i][:, : r.columns.shape[1]], r.columns)
        assert np.allclose(fast.scores[i][:, : r.columns.shape[1]], r.scores, equal_nan=True)


def test_cli_search_with_the_preset(indexes, tmp_path, capsys):
    from memlab.cli import main

    ws = tmp_path / "cli-ws"
    make_workspace(ws, 5)
    rc = main(["search", str(ws), "router vlan config", "--preset", "openclaw-current",
               "--embedder", "hashing", "--db", str(tmp_path / "cli.sqlite"), "--explain",
               "--now", "2026-09-25"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc in (0, None)
    header = next(line for line in out.splitlines() if line.startswith("#  vector_score"))
    assert header.split()[-8:-2] == [
        "decay",
        "importance",
        "project",
        "tier",
        "rank_score",
        "score",
    ]
    assert "score = fused × decay × importance × project; exact-path tiers lead" in out


def test_project_tiers_mmr_and_selection_alone_in_wsum(indexes):
    index = indexes[1]
    t = index.table
    base = preset("wsum")
    queries = ["router vlan config", "router.md", "billing invoices"]
    cs = base.retrieve(index, queries, times=[NOW_S] * 3)
    ref = base.run(cs).set_index(["qid", "docno"])
    # project affinity: ×1.15 all keys active, ×0.9 tagged otherwise, ×1 untagged;
    # malformed annotations leave ranking
    on = base.replace(project_boost=True, active_projects=("net",)).run(cs)
    keys = {str(i): k for i, k in zip(t.ids, t.project_keys, strict=True)}
    factor = {None: 1.0, "net": 1.15, "home; net": 0.9}
    seen = set()
    for r in on.itertuples():
        k = keys[r.docno]
        assert k != INVALID_PROJECT_KEY
        assert r.score == ref.loc[(r.qid, r.docno), "score"] * factor[k]
        seen.add(k)
    assert len(seen) >= 2
    # exact tiers alone: the file a query names leads, scored 1 (no project stage)
    tiers = base.replace(exact_tiers=True).run(cs)
    top = tiers[tiers.qid == "1"].iloc[0]
    assert (top.path, top.score, top.tier) == ("memory/notes/router.md", 1.0, 2)
    assert ref.loc["1"].iloc[0].name != top.docno or ref.loc["1"].iloc[0]["score"] != 1.0
    # the release's MMR re-orders the whole list (a permutation), its first pick the best
    mr = base.replace(mmr="openclaw-current", max_results=50).rank(cs)
    plain = base.replace(max_results=50).rank(cs)
    for qi in range(len(queries)):
        ok = mr.stage["valid"][qi]
        assert sorted(mr.stage["mmr_position"][qi][ok]) == list(range(int(ok.sum())))
        assert mr.columns[qi, 0] == plain.columns[qi, 0]
    assert (mr.columns != plain.columns).any()
    # the selection rule alone: with a threshold nothing passes, keyword hits >= 0 only
    high = base.replace(min_score=5.0, selection_rule="openclaw-current")
    r = high.rank(cs)
    st = r.stage
    picked = r.columns[r.columns >= 0]
    assert picked.size and st["has_text"][np.nonzero(r.columns >= 0)[0], picked].all()
    assert set(r.selected_by[r.columns >= 0].tolist()) == {1}


def test_docs_state_the_preset_diff():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "presets.md").read_text()
    want = ", ".join(f"`{k}={v}`" for k, v in preset("openclaw-current").diff().items())
    assert want in " ".join(doc.split())


def test_tiers_without_mmr_and_with_the_older_mmr(indexes):
    index = indexes[0]
    cs = preset("wsum").retrieve(index, ["router.md", "memory"], times=[NOW_S] * 2)
    for mmr in ("off", "jaccard"):
        p = preset("wsum", exact_tiers=True, selection_rule="openclaw-current", mmr=mmr)
        r = p.rank(cs)
        tier = r.stage["tier"]
        for qi in range(2):
            shown = tier[qi, r.columns[qi][r.columns[qi] >= 0]]
            assert shown[0] > 0, mmr  # the named file leads
            if mmr == "off":
                assert list(shown) == sorted(shown, reverse=True)  # tiers before the rest
