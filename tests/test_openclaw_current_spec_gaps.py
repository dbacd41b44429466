"""Gaps found by a completeness review against ``openclaw-current.md``: the API
names and signatures the issue lists, spec rules no other test asserted (chunk hash, ``~``
in extra paths, the expansion skip rule, a tier hit's visible score, trigger recall's
threshold, limit, context bound and candidate gathering), docs/presets.md's per-release
table, and the release as a user runs it from the command line (synth → search/get/eval).
Golden values come from the spec; nothing needs the npm package."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memlab.openclaw_current as oc
from memlab.openclaw_current.triggers import (
    LISTED_LIMIT,
    TriggerEntry,
    listed_trigger_candidates,
    merge_trigger_candidates,
    recall_triggers,
    trigger_context,
    trigger_matches,
    workspace_trigger_entries,
)
from memlab.pipeline.presets import preset
from memlab.retrieval.textquery import utf16_len
from tests import release_oracle
from tests.conftest import cli

NOW = datetime(2026, 9, 25, 12, tzinfo=UTC).timestamp() * 1000

# --------------------------------------------------------------- the API for exactness
# name → the leading parameters the issue names (keyword-only ones after "*").
API = {
    "estimate_chars": ["text"],
    "chunk_markdown": ["text", "path"],
    "split_curated_entries": [],
    "strip_annotations": [],
    "parse_annotations": ["lines", "*curated_root"],
    "build_fts_query": ["q", "tokenizer"],
    "expansion_keywords": ["q"],
    "bm25_rank_to_score": [],
    "keyword_boost": ["query", "path", "text", "fts_score"],
    "path_specificity": ["query", "path"],
    "importance_multiplier": [],
    "project_multiplier": ["project_key", "active"],
    "date_from_path": [],
    "is_evergreen": [],
    "decay_multiplier": ["age_days"],
    "mmr_tokenize": [],
    "mmr_rerank": [],
    "trigger_matches": ["message", "entries", "active"],
    "list_memory_files": ["workspace", "extra_paths"],
    "rank_hits": ["query", "chunks", "vector_scores", "bm25_ranks", "*path_rows",
                  "*active_projects", "*now_ms", "*mtimes", "*max_results", "*min_score"],
}  # fmt: skip


# The release's whole ranking per hit is a test oracle,
# not part of the package; it keeps the signature the issue asked for.
ORACLE = {"rank_hits"}


@pytest.mark.parametrize("name", sorted(API))
def test_every_issue_name_is_in_the_module_with_its_parameters(name: str) -> None:
    if name in ORACLE:
        fn = getattr(release_oracle, name)
        assert not hasattr(oc, name)
    else:
        fn = getattr(oc, name)
        assert name in oc.__all__ and callable(fn)
    params = inspect.signature(fn).parameters
    positional = [p for p in params.values() if p.kind is not p.KEYWORD_ONLY]
    for i, want in enumerate(API[name]):
        if want.startswith("*"):
            assert params[want[1:]].kind is inspect.Parameter.KEYWORD_ONLY, want
        else:
            assert positional[i].name == want, (name, i)


# ------------------------------------------------------------------------- §2 hash
def test_chunk_hash_is_sha256_of_the_stripped_text() -> None:
    chunks = oc.chunk_markdown("# h\n- a <!-- importance: 9 -->\n- b\n", "MEMORY.md")
    assert [c.text for c in chunks] == ["# h", "- a", "- b\n"]
    for c in chunks:
        assert c.hash == hashlib.sha256(c.text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------- §1 extraPaths ~
def test_extra_paths_expand_the_home_folder(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "n.md").write_text("x\n")
    (home / "notes" / "n.txt").write_text("x\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    files = oc.list_memory_files(ws, ["~/notes", {"path": "~/notes", "pattern": "*.md"}])
    assert [f.abspath.resolve() for f in files] == [(home / "notes" / "n.md").resolve()]


# ------------------------------------------------------------------ §5.4 skip rule
def _kw(bm25: dict) -> list[str]:
    chunks = [
        dict(id=i, path=f"memory/{i}.md", startLine=1, endLine=1, text=t)
        for i, t in [("a", "router vlan"), ("b", "router only"), ("c", "vlan only")]
    ]
    return [
        r["id"] for r in release_oracle.rank_hits("router vlan", chunks, None, bm25, now_ms=NOW)
    ]


def test_expansion_is_skipped_when_it_rebuilds_the_strict_query_that_found_hits() -> None:
    assert oc.expansion_keywords("router vlan") == ["router", "vlan"]
    # the keywords rebuild "router" AND "vlan": with strict hits, no expansion search runs
    assert _kw({"router vlan": {"a": -2.0}, "router": {"b": -1.0}, "vlan": {"c": -1.0}}) == ["a"]
    # no strict hit: the terms are searched alone and merged
    assert sorted(_kw({"router vlan": {}, "router": {"b": -1.0}, "vlan": {"c": -1.0}})) == [
        "b",
        "c",
    ]


# ------------------------------------------------------------- §5.8 tier visible score
@pytest.mark.parametrize(("active", "score"), [(["net"], 1.15), (["home"], 0.9), ([], 1.0)])
def test_a_tier_hit_shows_the_project_multiplier(active: list[str], score: float) -> None:
    chunks = [
        dict(id="m1", path="memory/net.md", startLine=1, endLine=2, text="firewall rules",
             projectKey="net"),
        dict(id="o1", path="memory/other.md", startLine=1, endLine=1, text="net cabling"),
    ]  # fmt: skip
    res = release_oracle.rank_hits("net", chunks, {"m1": 0.2, "o1": 0.9}, {"o1": -3.0}, now_ms=NOW,
                       active_projects=active)  # fmt: skip
    assert res[0]["id"] == "m1"  # tier 1 (stem) leads the far better body hit
    assert res[0]["score"] == pytest.approx(score)


# ----------------------------------------------------------------- §10 trigger recall
def _entry(line: int, triggers: str, score: float = 0.0, **kw) -> TriggerEntry:  # type: ignore[no-untyped-def]
    return TriggerEntry("MEMORY.md", line, line, kw.pop("snippet", f"- e{line}"), score, triggers,
                        **kw)  # fmt: skip


def test_threshold_is_the_releases_065_not_the_docs_072() -> None:
    # one word found: 0.85 · 0.8 = 0.68 ≥ 0.65 (would fail the docs' 0.72)
    (m,) = trigger_matches("the printer again", [_entry(1, "printer")])
    assert m.match_score == pytest.approx(0.68)
    # 1 of 2 words: (0.4 + 0.1) · 0.8 + 0.2 · 1 = 0.6 < 0.65, even with the best search score
    assert trigger_matches("the printer again", [_entry(1, "office printer", 1.0)]) == []
    # 3 of 4 words ("a" is too short to count): 0.8 · 0.8 = 0.64 below; a search score of
    # 0.1 lifts it to 0.66
    four = "book a flight for tomorrow"
    assert trigger_matches("book the flight tomorrow", [_entry(1, four)]) == []
    (m,) = trigger_matches("book the flight tomorrow", [_entry(1, four, 0.1)])
    assert m.match_score == pytest.approx(0.66)


def test_at_most_three_matches_and_a_bounded_context() -> None:
    long = "- " + "😀" * 700 + " end"
    entries = [_entry(i, "gateway", snippet=long) for i in range(1, 6)]
    got = trigger_matches("gateway", entries)
    assert [m.entry.start_line for m in got] == [1, 2, 3]
    ctx = trigger_context(got)
    assert ctx is not None and utf16_len(ctx) <= 1800
    assert not ("\ud800" <= ctx[-1] <= "\udfff")  # never half a surrogate pair
    assert trigger_context([]) is None


def test_listed_candidates_follow_the_release_filters_and_order() -> None:
    entries = [
        _entry(1, "a", importance=None),
        _entry(2, "a", importance=9),
        _entry(3, "", importance=10),  # no triggers
        _entry(4, "a", project_key="oc"),
        _entry(5, "a", project_key="oc; !invalid-project-annotation"),
        _entry(6, "a", origin_class="system"),
        _entry(7, "a", source="sessions"),
        TriggerEntry("memory/x.md", 1, 1, "- x", 0.0, "a"),  # not a curated root
        TriggerEntry("USER.md", 1, 1, "- u", 0.7, "a", importance=9),
    ]
    assert [(e.path, e.start_line) for e in listed_trigger_candidates(entries)] == [
        ("MEMORY.md", 2), ("USER.md", 1), ("MEMORY.md", 1),
    ]  # fmt: skip
    assert all(e.score == 0.0 for e in listed_trigger_candidates(entries))
    assert [e.start_line for e in listed_trigger_candidates(entries, ["oc"])][-1] == 4
    assert len(listed_trigger_candidates([_entry(i, "a") for i in range(600)])) == LISTED_LIMIT
    assert len(listed_trigger_candidates([_entry(i, "a") for i in range(9)], limit=0)) == 1


def test_search_hits_replace_listed_candidates_in_place() -> None:
    listed = [_entry(1, "a"), _entry(2, "b")]
    found = [_entry(2, "b", 0.5), _entry(9, None, 0.9)]
    merged = merge_trigger_candidates(listed, found)
    assert [(e.start_line, e.score) for e in merged] == [(1, 0.0), (2, 0.5), (9, 0.9)]


def test_recall_triggers_on_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text(
        "# Prefs\n"
        "- Use the WireGuard profile <!-- trigger: vpn, remote access --> <!-- importance: 8 -->\n"
        "- Standup is at 9 <!-- trigger: standup --> <!-- project: raven -->\n"
    )
    (tmp_path / "USER.md").write_text("- Aisle seat <!-- trigger: book window seat -->\n")
    (tmp_path / "memory" / "2026-09-01.md").write_text("- x <!-- trigger: vpn -->\n")
    (tmp_path / "memory.md").write_text("- legacy <!-- trigger: vpn -->\n")  # not indexed
    entries = workspace_trigger_entries(tmp_path)
    assert [(e.path, e.start_line, e.triggers, e.importance) for e in entries] == [
        ("MEMORY.md", 1, None, None),
        ("MEMORY.md", 2, "vpn; remote access", 8),
        ("MEMORY.md", 3, "standup", None),
        ("USER.md", 1, "book window seat", None),
    ]
    got = recall_triggers("is the vpn up?", tmp_path)
    assert [(m.entry.path, m.entry.start_line) for m in got] == [("MEMORY.md", 2)]
    assert got[0].entry.snippet == "- Use the WireGuard profile"  # annotations stripped
    assert recall_triggers("standup moved?", tmp_path) == []  # tagged, project not active
    assert len(recall_triggers("standup moved?", tmp_path, active=["raven"])) == 1
    # 2 of 3 words: 0.8 · (2/3 · 0.8 + 0.2) = 0.587 < 0.65; a keyword-search hit of the
    # same chunk brings its score, + 0.2 · 1 = 0.787
    hit = TriggerEntry("USER.md", 1, 1, "- Aisle seat", 1.0, "book window seat")
    assert recall_triggers("book a window", tmp_path) == []
    (m,) = recall_triggers("book a window", tmp_path, retrieved=[hit])
    assert m.entry.path == "USER.md" and m.match_score == pytest.approx(
        0.8 * (2 / 3 * 0.8 + 0.2) + 0.2
    )


# ------------------------------------------------------------ docs/presets.md releases
def test_docs_release_table_states_every_parameter_of_the_three_releases() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "presets.md").read_text()
    block = doc.split("## OpenClaw's releases side by side")[1].split("Outside the pipeline")[0]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]*)` \| `([^`]*)` \| `([^`]*)` \| ", block, re.M)
    table = {name: cells for name, *cells in rows}
    names = ("openclaw", "openclaw-latest", "openclaw-current")
    params = {n: preset(n).get_params() for n in names}
    assert set(table) == set(params["openclaw"]) - {"name"}
    for key, cells in table.items():
        assert cells == [str(params[n][key]) for n in names], key


# ------------------------------------------------------------------ the command line
def test_the_release_as_a_user_runs_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    corpus = tmp_path / "c"
    mix = "importance,project,filename,trigger,longlived"
    code, _, err = cli("synth", str(corpus), "--days", "8", "--queries-per-type", "3",
                       "--mix", mix)  # fmt: skip
    assert code == 0, err
    ws = corpus / "workspace"
    q = json.loads((corpus / "queries.jsonl").read_text().splitlines()[0])
    assert q["category"] == "importance"
    base = ["search", str(ws), q["query"], "--preset", "openclaw-current", "--embedder", "hashing"]
    code, out, err = cli(*base, "--json")
    assert code == 0, err
    res = json.loads(out)["results"]
    assert res and all(r["corpus"] == "memory" for r in res)
    assert any(isinstance(r.get("importance"), int | float) for r in res)  # §8 in the result
    code, out, err = cli(*base, "--explain")
    assert code == 0 and "importance" in out and "openclaw-current" in out, err
    # memory_get of the release: MEMORY.md windowed; a root memory.md refused, 2026-04 reads it
    (ws / "memory.md").write_text("legacy\n")
    code, out, _ = cli("get", str(ws), "MEMORY.md", "--preset", "openclaw-current")
    assert code == 0 and out
    assert cli("get", str(ws), "memory.md", "--preset", "openclaw-current")[0] == 2
    assert cli("get", str(ws), "memory.md")[1].startswith("legacy")
    code, out, _ = cli("doctor", str(ws))
    assert code == 0 and "would archive memory.md" in out and (ws / "memory.md").exists()
    (ws / "memory.md").unlink()
    # the study's rows
    code, out, err = cli("eval", "synthetic", "--path", str(corpus), "--embedder", "hashing",
                         "--preset", "openclaw,openclaw-current,memlab-best")  # fmt: skip
    assert code == 0, err
    for name in ("openclaw ", "openclaw-current ", "memlab-best "):
        assert re.search(rf"^{name}", out, re.M), name


# ----------------------------------------------------------------- §3/§11 snippets
def test_release_snippets_are_the_first_700_utf16_units(tmp_path: Path) -> None:
    from memlab.embed import resolve_embedder
    from memlab.store import MemoryIndex
    from memlab.tools import release as rt

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    body = "alpha " + "😀" * 400 + " omega"  # 6 + 800 + 6 UTF-16 units, one chunk
    (ws / "memory" / "notes.md").write_text(body + "\n")
    p = preset("openclaw-current")
    idx = MemoryIndex(ws, db_path=tmp_path / "i.sqlite", embedder=resolve_embedder("hashing"),
                      memory_files=p.memory_files)  # fmt: skip
    try:
        idx.sync()
        res = rt.memory_search(idx, "alpha", minScore=0, pipeline=p, citations="off", now=NOW / 1e3)
    finally:
        idx.close()
    (hit,) = res["results"]
    assert hit["snippet"] == body[: 6 + 347] and utf16_len(hit["snippet"]) == 700
