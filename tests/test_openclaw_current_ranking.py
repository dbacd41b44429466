"""OpenClaw 2026.9.6's ranking functions (spec openclaw-current.md §5–§9).

The spec-example tests always run. The differential tests run the published
release's own functions under node (tests/data/openclaw_release_harness.mjs) and
skip with a message when node or the unpacked package is absent
(``tests/openclaw_release.py``: ``make test`` fetches it with npm).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memlab.openclaw_current import (
    bm25_rank_to_score,
    build_fts_query,
    date_from_path,
    decay_multiplier,
    expansion_keywords,
    importance_multiplier,
    is_evergreen,
    keyword_boost,
    mmr_rerank,
    mmr_tokenize,
    path_specificity,
    project_multiplier,
)
from memlab.openclaw_current.keyword import locale_key
from memlab.openclaw_current.ranking import extract_keywords, fts_substring_terms, project_excluded
from tests.openclaw_release import require_release
from tests.release_oracle import rank_hits

NOW = datetime(2026, 9, 25, 12, tzinfo=UTC).timestamp() * 1000
DAY = 86_400_000


# ------------------------------------------------------------------ §5.2 query, bm25
def test_build_fts_query_spec_example():
    assert build_fts_query("OC-4412 PR") == '"OC" AND "4412" AND "PR"'
    assert build_fts_query("  ?! ") is None
    assert build_fts_query("café_2 naïve") == '"café_2" AND "naïve"'


def test_trigram_splits_short_tokens_into_substring_filters():
    assert build_fts_query("OC-4412 PR", tokenizer="trigram") == '"4412"'
    assert fts_substring_terms("OC-4412 PR", tokenizer="trigram") == ["OC", "PR"]
    assert fts_substring_terms("OC-4412 PR") == []
    with pytest.raises(ValueError, match="tokenizer"):
        build_fts_query("x", tokenizer="porter")


def test_bm25_rank_to_score():
    assert bm25_rank_to_score(0) == 1.0
    assert bm25_rank_to_score(-0.0) == 1.0
    assert bm25_rank_to_score(-3.0) == 0.75
    assert bm25_rank_to_score(1.0) == 0.5
    assert bm25_rank_to_score(math.nan) == bm25_rank_to_score(-math.inf) == 0.001


# ------------------------------------------------------------------ §5.3 boost
def test_keyword_boost_spec_examples():
    line = "- billing invoices go out monthly via stripe to clients"  # 55 chars, 9 distinct tokens
    assert len(line) == 55
    assert round(keyword_boost("billing invoices", "MEMORY.md", line, 0.0), 4) == 0.6744
    assert round(keyword_boost("router vlan", "memory/router.md", "x" * 26, 0.1), 4) == 0.4425


def test_keyword_boost_edges():
    assert keyword_boost("?!", "MEMORY.md", "text", 0.3) == 0.3  # no query token: unchanged
    assert keyword_boost("router", "memory/router.md", "router " * 40, 0.9) == 1.0  # capped at 1
    # case-insensitive on text and path; repeated query tokens count once
    assert keyword_boost("ROUTER router", "Memory/ROUTER.md", "router", 0.0) == pytest.approx(
        0.45 + 0.2 + 0.18 + 6 / 160
    )


# ------------------------------------------------------------------ §5.4 expansion
def test_expansion_spec_examples():
    assert expansion_keywords("what did we decide about the API yesterday?") == ["decide", "api"]
    assert expansion_keywords("之前讨论的那个方案") == ["之", "讨", "论", "个", "方", "案"]


def test_expansion_rules():
    assert expansion_keywords("router") == []  # the whole query is not searched again
    assert expansion_keywords("ab 2026 ok gateway") == ["gateway"]  # short ASCII, digits
    assert expansion_keywords("a b c d e f g h i j kk lll mmmm nnnnn oooooo p7 q8 r9 s0") == [
        "lll", "mmmm", "nnnnn", "oooooo", "p7", "q8",
    ]  # fmt: skip
    assert extract_keywords("之前讨论", tokenizer="trigram") == ["之前讨论"]
    assert extract_keywords("サーバーの設定を確認した") == ["サーバー", "設定", "確認"]
    assert extract_keywords("서버에서 설정을") == ["서버에서", "서버", "설정을", "설정"]
    assert extract_keywords("¿Qué pasó con la factura?") == ["pasó", "factura"]


# ------------------------------------------------------------------ §5.5 filename leg
def test_path_specificity():
    assert path_specificity("memory", "MEMORY.md") == 1
    assert path_specificity("MEMORY.md", "MEMORY.md") == 3
    assert path_specificity("notes.md", "memory/sub/notes.md") == 2
    assert path_specificity("notes", "memory/sub/notes.md") == 1
    assert path_specificity("./memory\\sub/notes.md", "memory/sub/notes.md") == 3
    assert (
        path_specificity("sub/notes.md", "memory/sub/notes.md") == 0
    )  # a '/' needs the whole path
    assert path_specificity(".", "memory/.md") == 0
    assert path_specificity(".env", "memory/.env") == 2  # a leading dot is no extension
    assert path_specificity("  ", "MEMORY.md") == 0


# ------------------------------------------------------------------ §7 decay
def test_decay_spec_examples():
    assert [round(decay_multiplier(d), 4) for d in (10, 30, 60)] == [0.7937, 0.5, 0.25]
    assert decay_multiplier(30) == 0.5
    assert decay_multiplier(-3) == 1.0
    assert decay_multiplier(math.nan) == decay_multiplier(math.inf) == 1.0


def test_date_from_path_spec_examples():
    day = datetime(2026, 1, 2, tzinfo=UTC)
    for p in (
        "memory/sub/2026-01-02.md",
        "memory/2026-01-02-1430.md",
        "archive/memory/2026-01-02.md",
    ):
        assert date_from_path(p) == day, p
    assert date_from_path(".\\memory\\2026-01-02.md") == day
    for p in (
        "memory/2026-02-30.md",
        "memory/2026-9-20.md",
        "notes/2026-01-02.md",
        "memory/0099-01-02.md",
    ):
        assert date_from_path(p) is None, p


def test_evergreen_spec_examples():
    assert is_evergreen("MEMORY.md") and is_evergreen("USER.md")
    assert is_evergreen("memory/notes.md") and is_evergreen("memory/2026-9-20.md")
    assert not is_evergreen("memory/2026-09-20.md")
    assert not is_evergreen("DREAMS.md") and not is_evergreen("notes/extra.md")
    assert not is_evergreen("memory/2026-13-01.md")  # dated shape, invalid date: mtime decides


# ------------------------------------------------------------------ §8, §9 multipliers
def test_importance_multiplier_spec_examples():
    assert importance_multiplier(None) == 1.0
    assert [round(importance_multiplier(n), 10) for n in (1, 5, 8, 10)] == [0.8, 1.0, 1.15, 1.25]
    assert importance_multiplier(7.9) == importance_multiplier(7)
    assert importance_multiplier(0) == importance_multiplier(1)
    assert importance_multiplier(99) == importance_multiplier(10)


def test_project_multiplier():
    assert project_multiplier("net; home", {"net", "home"}) == 1.15
    assert project_multiplier("net; home", ["net"]) == 0.9
    assert project_multiplier(None, ["net"]) == project_multiplier("net", []) == 1.0
    assert project_multiplier("net", None) == 1.0
    assert round(importance_multiplier(8) * project_multiplier("net", ["net"]), 4) == 1.3225  # §14
    assert project_excluded("net; !invalid-project-annotation")
    assert not project_excluded("net") and not project_excluded(None)


# ------------------------------------------------------------------ §6 MMR
def test_mmr_tokenize():
    assert mmr_tokenize("Hello 我喜欢hello你好") == {
        "hello", "我", "喜", "欢", "你", "好", "我喜", "喜欢", "你好",
    }  # fmt: skip
    assert mmr_tokenize("Привет") == set()


def test_mmr_rerank_demotes_near_copies_and_keeps_everything():
    items = [
        {"id": "a", "score": 1.0, "snippet": "router vlan config trunk"},
        {"id": "b", "score": 0.9, "snippet": "router vlan config trunk again"},
        {"id": "c", "score": 0.85, "snippet": "dentist appointment tuesday"},
    ]
    assert [it["id"] for it in mmr_rerank(items)] == ["a", "c", "b"]
    assert [it["id"] for it in mmr_rerank(items, 1.0)] == ["a", "b", "c"]
    # all scores equal: relevance 1 each, ties by list order; token-less texts compare by text
    same = [{"id": i, "score": 0.5, "snippet": t} for i, t in enumerate(["Да", "да ", "нет"])]
    assert [it["id"] for it in mmr_rerank(same)] == [0, 2, 1]


# ------------------------------------------------------------------ §5 whole ranking
def scenario_a() -> dict:
    """Spec §5 [hybridSearch A]: the numbers and order the release computed."""
    m12 = "- router vlan config trunk port 24 core switch"
    chunks = [
        dict(id="m12", path="MEMORY.md", startLine=12, endLine=12, text=m12, importance=8),
        dict(id="m30", path="MEMORY.md", startLine=30, endLine=30, text=m12 + " again"),
        dict(
            id="d20",
            path="memory/2026-09-20.md",
            startLine=1,
            endLine=2,
            text="moved router vlan config trunk",
        ),
        dict(id="d22", path="memory/2026-09-22.md", startLine=4, endLine=4, text="vlan notes"),
        dict(
            id="net",
            path="memory/projects/net.md",
            startLine=1,
            endLine=5,
            text="gateway firewall dhcp",
        ),
        dict(id="ext", path="notes/extra.md", startLine=1, endLine=2, text="cabling in the rack"),
        dict(
            id="usr",
            path="USER.md",
            startLine=1,
            endLine=1,
            text="- prefers wired links",
            importance=3,
        ),
    ]
    return dict(
        query="router vlan config",
        chunks=chunks,
        vector={"m12": 0.82, "m30": 0.81, "d20": 0.78, "net": 0.9, "ext": 0.62, "usr": 0.52},
        bm25={"m12": -4.0, "m30": -4.0, "d20": -3.0, "d22": -1.008},
        mtimes={"notes/extra.md": NOW - 2 * DAY},
    )


def run_a(**kw) -> list[dict]:
    s = scenario_a()
    return rank_hits(
        s["query"], s["chunks"], s["vector"], s["bm25"], now_ms=NOW, mtimes=s["mtimes"], **kw
    )


def test_rank_hits_spec_hybrid_a():
    s = scenario_a()
    d22 = s["chunks"][3]
    boosted = keyword_boost(s["query"], d22["path"], d22["text"], bm25_rank_to_score(-1.008))
    # the spec prints 0.8144 and 0.2254: consistent only for a boost in [0.81449, 0.8145)
    assert 0.81449 <= boosted < 0.8145
    res = run_a()
    assert [(r["path"], r["startLine"]) for r in res] == [
        ("MEMORY.md", 12),
        ("memory/projects/net.md", 1),
        ("memory/2026-09-20.md", 1),
        ("MEMORY.md", 30),
        ("notes/extra.md", 1),
        ("memory/2026-09-22.md", 4),
    ]
    score = {r["id"]: r["score"] for r in res}
    assert round(score["m12"], 4) == 1.0051  # (0.574 + 0.3) · 1.15
    assert round(score["d20"], 4) == 0.7450  # 0.846 · 0.8807 (5.5 days)
    assert round(score["m30"], 3) == 0.867  # above 2026-09-20, demoted by MMR
    assert round(score["d22"], 4) == 0.2254  # keyword-only fill below minScore
    assert "usr" not in score  # vector-only 0.3276 < 0.35
    assert set(res[0]) == {"id", "path", "startLine", "score"}


def test_rank_hits_selection_rules():
    assert [r["id"] for r in run_a(max_results=2)] == ["m12", "net"]
    # nothing passes: keyword hits >= 0 only, vector-only hits never
    res = run_a(min_score=5.0)
    assert [r["id"] for r in res] == ["m12", "d20", "m30", "d22"]
    assert rank_hits("  ", [], {}, {}, now_ms=NOW) == []


def test_rank_hits_exact_path_tiers_lead():
    s = scenario_a()
    res = rank_hits("memory", s["chunks"], s["vector"], {}, now_ms=NOW, mtimes=s["mtimes"])
    assert (
        res[0]["path"] == "MEMORY.md" and res[0]["score"] == 1.0
    )  # tier 1 (stem), its first chunk
    assert res[0]["startLine"] == 12
    # a malformed project annotation takes the chunk out of ranking
    s["chunks"][1]["projectKey"] = "!invalid-project-annotation"
    res = rank_hits(s["query"], s["chunks"], s["vector"], s["bm25"], now_ms=NOW, mtimes=s["mtimes"])
    assert "m30" not in {r["id"] for r in res}


def test_rank_hits_project_affinity():
    s = scenario_a()
    s["chunks"][4]["projectKey"] = "home"
    res = rank_hits(s["query"], s["chunks"], s["vector"], s["bm25"], now_ms=NOW, mtimes=s["mtimes"],
                    active_projects=["net"])  # fmt: skip
    assert {r["id"]: r["score"] for r in res}["net"] == pytest.approx(0.63 * 0.9)


def test_keyword_only_and_vector_only_modes():
    s = scenario_a()
    kw = rank_hits(s["query"], s["chunks"], None, s["bm25"], now_ms=NOW, mtimes=s["mtimes"])
    assert [r["id"] for r in kw] == ["m12", "m30", "d20", "d22"]  # boosted × decay × importance
    assert kw[0]["score"] == pytest.approx(1.15)
    vec = rank_hits(s["query"], s["chunks"], s["vector"], None, now_ms=NOW, mtimes=s["mtimes"])
    assert [r["id"] for r in vec] == ["m12", "net", "m30", "d20", "ext", "usr"]  # raw cosine


def test_locale_key_matches_icu_order_of_ascii():
    names = ["memory/a b.md", "memory/a_b.md", "memory/a-b.md", "memory/a.md", "memory/A.md",
             "memory/a/b.md", "memory/a#.md", "memory/a~.md", "memory/a$.md", "memory/a1.md",
             "memory/ab.md"]  # fmt: skip
    # the order node's String.prototype.localeCompare gives these
    assert sorted(reversed(names), key=locale_key) == names


# ------------------------------------------------------------------ differential (node)
HARNESS = Path(__file__).parent / "data" / "openclaw_release_harness.mjs"


def release(calls: list[tuple[str, list]]) -> list:
    dist = require_release("extensions/memory-core/manager-runtime.js")
    payload = json.dumps([{"fn": fn, "args": args} for fn, args in calls])
    out = subprocess.run(["node", str(HARNESS), str(dist)], input=payload, capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    return json.loads(out.stdout)


QUERIES = [
    "what did we decide about the API yesterday?", "之前讨论的那个方案", "OC-4412 PR",
    "サーバーの設定を確認した", "서버에서 설정을 바꿨어요", "¿Qué pasó con la factura de mañana?",
    "o que você fez ontem com o servidor", "ما هو موعد الاجتماع غدا", "router vlan config",
    "Ünïcödé naïve café", "MEMORY.md", "memory", "  ./memory/2026-09-20.md ", "a b 12 345 x_y",
    "ΣΊΣΥΦΟΣ straße İstanbul", "emoji 😀 test", "help me find the gateway token please",
]  # fmt: skip
PATHS = ["MEMORY.md", "USER.md", "memory/2026-09-20.md", "memory/sub/notes.md", "Memory/ROUTER.md",
         "memory/2026-9-20.md", "memory/2026-13-01.md", "archive/memory/2026-01-02-x.md", ".\\memory\\2026-01-02.md",
         "memory/café.md", "notes/.env", "memory/0099-01-01.md", "memory/2024-02-29.md", "memory/2023-02-29.md"]  # fmt: skip


def test_differential_text_functions():
    calls: list[tuple[str, list]] = []
    for q in QUERIES:
        calls += [
            ("buildFtsQuery", [q]),
            ("extractKeywords", [q]),
            ("fallbackTerms", [q]),
            ("mmrTokenize", [q]),
        ]
        for p in PATHS[:6]:
            calls.append(("keywordBoost", [q, p, q + " notes about " + p, 0.25]))
        for p in PATHS:
            calls.append(("pathSpecificity", [q, p]))
    got = release(calls)
    mine = []
    for q in QUERIES:
        mine += [
            build_fts_query(q),
            extract_keywords(q),
            expansion_keywords(q),
            sorted(mmr_tokenize(q)),
        ]
        mine += [keyword_boost(q, p, q + " notes about " + p, 0.25) for p in PATHS[:6]]
        mine += [path_specificity(q, p) for p in PATHS]
    assert mine == got


def test_differential_numbers():
    ages = [-1, 0, 0.5, 5.5, 10, 29.999, 30, 60, 365.25, 1e6]
    imps = [1, 2, 5, 7.5, 8, 10]
    keys = [None, "", "net", "net; home", ";", " net ;", "home"]
    calls = [("decayMultiplier", [a]) for a in ages] + [("importanceMultiplier", [n]) for n in imps]
    calls += [("projectMultiplier", [k, a]) for k in keys for a in ([], ["net"], ["net", "home"])]
    calls += [("dateFromPath", [p]) for p in PATHS] + [
        ("isEvergreenMemoryPath", [p]) for p in PATHS
    ]
    calls += [("bm25RankToScore", [r]) for r in (-12.5, -1, 0, 0.3, 7)]
    got = release(calls)
    mine = [decay_multiplier(a) for a in ages] + [importance_multiplier(n) for n in imps]
    mine += [project_multiplier(k, a) for k in keys for a in ([], ["net"], ["net", "home"])]
    dates = [date_from_path(p) for p in PATHS]
    mine += [d.strftime("%Y-%m-%dT%H:%M:%S.000Z") if d else None for d in dates]
    mine += [is_evergreen(p) for p in PATHS] + [
        bm25_rank_to_score(r) for r in (-12.5, -1, 0, 0.3, 7)
    ]
    assert mine == got


def test_differential_mmr_orders():
    rng = random.Random(7)
    words = "router vlan config trunk port core switch dentist tuesday 我 喜欢 你好 Да".split()
    cases = []
    for _ in range(30):
        n = rng.randint(2, 9)
        items = [
            {"id": f"i{k}", "score": rng.choice([0.5, 0.7, rng.random()]),
             "snippet": " ".join(rng.sample(words, rng.randint(0, 4)))}
            for k in range(n)
        ]  # fmt: skip
        cases.append((items, rng.choice([0.0, 0.3, 0.7, 1.0])))
    got = release([("mmrOrder", [items, lam]) for items, lam in cases])
    assert [[it["id"] for it in mmr_rerank(items, lam)] for items, lam in cases] == got


def random_scenario(rng: random.Random, sizes: tuple[int, int] = (4, 14)) -> dict:
    paths = ["MEMORY.md", "USER.md", "memory/2026-09-20.md", "memory/2026-09-01.md", "memory/net.md",
             "memory/sub/2026-08-02-trip.md", "notes/extra.md", "memory/router.md"]  # fmt: skip
    words = "router vlan config gateway token dentist tuesday trunk port".split()
    chunks = []
    for k in range(rng.randint(*sizes)):
        chunk_text = " ".join(rng.choices(words, k=rng.randint(0, 7)))
        chunks.append(dict(id=f"c{k}", path=rng.choice(paths), startLine=k * 3 + 1, endLine=k * 3 + 2, text=chunk_text,
                           **({"importance": rng.randint(1, 10)} if rng.random() < 0.3 else {}),
                           **({"projectKey": rng.choice(["net", "net; home"])} if rng.random() < 0.2 else {})))  # fmt: skip
    query = " ".join(rng.sample([*words, "memory", "net"], rng.randint(1, 3)))
    if rng.random() < 0.2:
        query = rng.choice(["memory", "net", "MEMORY.md", "router", "memory/net.md"])
    vector = {c["id"]: round(rng.uniform(0.1, 0.95), 3) for c in chunks if rng.random() < 0.7}
    bm25 = {query: {c["id"]: -round(rng.uniform(0.1, 9), 3) for c in chunks if rng.random() < 0.5}}
    for term in expansion_keywords(query):
        bm25[term] = {c["id"]: -round(rng.uniform(0.1, 9), 3) for c in chunks if term in c["text"]}
    paths_fts = {query: {p: -round(rng.uniform(0.1, 3), 3) for p in paths if rng.random() < 0.3}}
    return dict(query=query, chunks=chunks, vector=vector, bm25=bm25, paths=paths_fts,
                active=rng.choice([[], ["net"]]), mtimes={"notes/extra.md": NOW - 3 * DAY},
                maxResults=rng.choice([3, 6, 10]), minScore=rng.choice([0.0, 0.35, 0.6]), nowMs=NOW)  # fmt: skip


def test_differential_rank_hits():
    rng = random.Random(11)
    scenarios = [scenario_a() | {"bm25": {"router vlan config": scenario_a()["bm25"]}, "paths": {}, "active": [],
                                 "maxResults": 6, "minScore": 0.35, "nowMs": NOW}]  # fmt: skip
    scenarios += [random_scenario(rng) for _ in range(40)]
    scenarios += [random_scenario(rng, (230, 320)) for _ in range(3)]  # the 200-wide windows
    got = release([("rankHits", [s["query"], s]) for s in scenarios])
    for s, expected in zip(scenarios, got, strict=True):
        mine = rank_hits(s["query"], s["chunks"], s["vector"], s["bm25"], path_rows=s["paths"],
                         active_projects=s["active"], now_ms=NOW, mtimes=s["mtimes"],
                         max_results=s["maxResults"], min_score=s["minScore"])  # fmt: skip
        assert [{k: r[k] for k in ("path", "startLine", "score")} for r in mine] == expected, s[
            "query"
        ]


def test_differential_keyword_only_mode():
    rng = random.Random(5)
    scenarios = [random_scenario(rng) for _ in range(30)]
    got = release([("rankKeywordOnly", [s["query"], s]) for s in scenarios])
    for s, expected in zip(scenarios, got, strict=True):
        mine = rank_hits(s["query"], s["chunks"], None, s["bm25"], path_rows=s["paths"],
                         active_projects=s["active"], now_ms=NOW, mtimes=s["mtimes"],
                         max_results=s["maxResults"], min_score=s["minScore"])  # fmt: skip
        assert [{k: r[k] for k in ("path", "startLine", "score")} for r in mine] == expected, s[
            "query"
        ]
