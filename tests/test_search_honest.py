"""`memlab search` tells the truth about the workspace.

Each test runs the command line as a user would (``memlab.cli.main`` in-process) with
the hashing embedder and a private user cache (``XDG_CACHE_HOME``):

- a file edited since the last sync is searched (sync first), or named with --no-sync;
- switching preset or embedder never rebuilds silently: one index per (tokenizer,
  embedder) identity in the user cache, an explicit --db rebuild is announced;
- `memlab eval` runs each system on the index it is defined for (PresetLab);
- --explain accounts for every term of every score and lists dropped candidates;
- plain, --explain and --json output fall back to keyword search the same way.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from memlab.embed import EmbeddingError, HashingEmbedder
from memlab.store import MemoryIndex
from tests.conftest import cli as run
from tests.conftest import write
from tests.test_embed_http import Server, status
from tests.test_embed_http import server as http_server  # noqa: F401 (a fixture)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def tree(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in sorted(root.rglob("*"))}


# ---------------------------------------------------------------------- sync first
def test_search_syncs_an_edited_file_or_names_it_with_no_sync(small_workspace: Path) -> None:
    ws = str(small_workspace)
    base = ["search", ws, "zebra-7731", "--embedder", "hashing", "--min-score", "0", "--json"]
    assert run("index", ws, "--embedder", "hashing", "--json")[0] == 0
    f = small_workspace / "memory/2026-03-20.md"
    f.write_text(f.read_text() + "- The zebra-7731 badge opens the lab.\n")
    os.utime(f, (time.time() + 5, time.time() + 5))  # a later mtime, whatever the clock tick

    code, out, err = run(*base, "--no-sync")
    assert code == 0
    assert "memory/2026-03-20.md" in err and "--no-sync" in err  # named on stderr
    assert not any("zebra" in r["snippet"] for r in json.loads(out)["results"])

    code, out, err = run(*base)
    assert code == 0 and err == ""
    hits = json.loads(out)["results"]
    assert hits[0]["path"] == "memory/2026-03-20.md" and "zebra-7731" in hits[0]["snippet"]


def test_unchanged_workspace_costs_a_stat_per_file(
    small_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = MemoryIndex(small_workspace, embedder=HashingEmbedder(64), progress=False)
    idx.sync()
    f = small_workspace / "MEMORY.md"
    os.utime(f, (time.time() + 7, time.time() + 7))  # touched, same text
    assert idx.stale_files() == ["MEMORY.md"]
    r = idx.ensure_synced(files=True)
    assert r is not None and r.files_changed == 0 and r.embedded == 0
    assert idx.stale_files() == []  # the new mtime was recorded: no sync on every search

    import memlab.store.sync as index_mod

    def no_reads(*a: object, **k: object) -> None:
        raise AssertionError("an unchanged workspace must not be read, only stat'ed")

    monkeypatch.setattr(index_mod, "read_memory_file", no_reads)
    assert idx.ensure_synced(files=True) is None

    # ... and costs about one stat per memory file (the walk's scandir gives the types).
    n_files = len(idx.discover())
    calls: list[str] = []
    real_lstat, real_stat = os.lstat, os.stat

    def counting_lstat(path: object, *a: object, **k: object) -> os.stat_result:
        calls.append(str(path))
        return real_lstat(path, *a, **k)  # type: ignore[arg-type]

    def counting_stat(path: object, *a: object, **k: object) -> os.stat_result:
        calls.append(str(path))
        return real_stat(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counting_lstat)
    monkeypatch.setattr(os, "stat", counting_stat)
    assert idx.ensure_synced(files=True) is None
    per_file = [c for c in calls if c.endswith(".md")]
    assert len(per_file) <= n_files + 2, per_file  # the root files are checked once more
    assert len(calls) <= n_files + 30, calls  # plus a fixed few: index file, folders


# ---------------------------------------------------------------------- one index per identity
def test_alternating_presets_reuses_one_index_per_identity(
    small_workspace: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlab.store import default_db_path, index_identity

    builds: list[str] = []
    real = MemoryIndex._full_reindex

    def counting(self: MemoryIndex, show: bool | None):
        builds.append(self.fts_tokenizer)
        return real(self, show)

    monkeypatch.setattr(MemoryIndex, "_full_reindex", counting)
    before = tree(small_workspace)
    ws = str(small_workspace)
    for _ in range(3):
        for name in ("memlab-best", "openclaw"):
            code, _, err = run(
                "search", ws, "roast coffee", "--embedder", "hashing", "--preset", name
            )
            assert code == 0 and "rebuilding" not in err
    assert builds == ["porter", "unicode61"]  # the first build of each identity only
    assert tree(small_workspace) == before  # nothing written into the workspace
    folder = default_db_path(small_workspace.resolve()).parent
    assert folder.parent == private_cache / "memlab" / "indexes"
    assert sorted(p.name for p in folder.glob("*.sqlite")) == sorted(
        f"{index_identity(tok, HashingEmbedder())}.sqlite" for tok in ("porter", "unicode61")
    )

    code, out, _ = run("status", ws, "--embedder", "hashing", "--fts-tokenizer", "porter")
    ident = index_identity("porter", HashingEmbedder())
    assert code == 0 and f"identity           {ident}" in out
    assert str(folder / f"{ident}.sqlite") in out


def test_explicit_db_rebuild_is_announced_with_its_reason(
    small_workspace: Path, tmp_path: Path
) -> None:
    ws, db = str(small_workspace), str(tmp_path / "mine.sqlite")
    assert run("index", ws, "--embedder", "hashing", "--db", db)[0] == 0
    code, out, err = run("search", ws, "coffee", "--embedder", "none", "--db", db)
    assert code == 0
    model = HashingEmbedder().model
    assert f"rebuilding {db}: embedder changed from hashing/{model} to none/fts-only" in err
    code, out, err = run("index", ws, "--embedder", "hashing", "--db", db)
    assert "embedder changed from none/fts-only to hashing/" in err
    assert "full reindex (fingerprint changed: embedder changed from none/fts-only" in out


def test_read_only_workspace_is_searched_without_writing_to_it(small_workspace: Path) -> None:
    before = tree(small_workspace)
    mode = small_workspace.stat().st_mode
    small_workspace.chmod(0o555)
    try:
        code, out, _ = run("search", str(small_workspace), "MEM-4821", "--embedder", "hashing")
    finally:
        small_workspace.chmod(mode)
    assert code == 0 and "memory/2026-03-20.md" in out
    assert tree(small_workspace) == before


# ---------------------------------------------------------------------- eval: each system its index
def test_eval_runs_each_system_on_the_index_it_is_defined_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.eval.lab.labs as lab_mod  # where Lab looks up `retrieve`

    out = tmp_path / "synth"
    assert run("synth", str(out), "--days", "4", "--queries-per-type", "2")[0] == 0
    seen: list[tuple[str, str]] = []
    real = lab_mod.retrieve

    def recording(index: MemoryIndex, *a: object, **k: object):
        seen.append((index.fts_tokenizer, str(k.get("keyword_mode"))))
        return real(index, *a, **k)

    monkeypatch.setattr(lab_mod, "retrieve", recording)
    code, stdout, err = run(
        "eval", "folder", "--path", str(out), "--embedder", "hashing",
        "--preset", "memlab-best,openclaw", "--metrics", "recall@6",
    )  # fmt: skip
    assert code == 0, err
    assert "memlab-best" in stdout and "openclaw" in stdout
    toks = {tok for tok, _ in seen}
    assert toks == {"porter", "unicode61"}  # one run, each system on its own index
    # --fts-tokenizer changes only the systems that declare no tokenizer of their own.
    seen.clear()
    code, _, err = run(
        "eval", "folder", "--path", str(out), "--embedder", "hashing", "--fts-tokenizer",
        "trigram", "--preset", "memlab-best,openclaw", "--metrics", "recall@6",
    )  # fmt: skip
    assert code == 0, err
    assert {tok for tok, _ in seen} == {"porter", "trigram"}


# ---------------------------------------------------------------------- explain
def test_explain_terms_add_up_for_memlab_best(small_workspace: Path) -> None:
    from memlab.chunking import ChunkerConfig
    from memlab.pipeline.explain import explain
    from memlab.pipeline.presets import preset

    # A long log: several chunks per file, so neighbours are candidates of each other.
    lines = [f"- Coffee note {i}: Peter tried roast number {i} at the cafe.\n" for i in range(40)]
    write(small_workspace, "memory/2026-04-01.md", "# 2026-04-01\n" + "".join(lines))
    p = preset("memlab-best", min_score=0.0)
    idx = MemoryIndex(
        small_workspace,
        embedder=HashingEmbedder(64),
        fts_tokenizer="porter",
        chunker=ChunkerConfig("openclaw", 64, 8),
        progress=False,
    )
    idx.sync()
    cs = p.retrieve(idx, ["tried roast number 12 at the cafe", "gateway"], qids=["a", "b"])
    r = p.rank(cs)
    ex = explain(p, cs, r)
    assert set(ex["fate"]) <= {"returned", "dropped"}
    scored = ex[ex["score"].notna()]
    total = (scored["vector_term"] + scored["text_term"] + scored["other"]) * scored["decay"]
    total = total + scored["neighbor"] + scored["file_context"]  # memlab-best's two context terms
    np.testing.assert_allclose(total, scored["score"], atol=1e-12)
    assert (scored["neighbor"] > 0).any()  # the context term is there and counted
    wv, wt = ex.attrs["weights"]
    assert ex.attrs["formula"].startswith(f"fused = {wv:.3f}·vector_norm + {wt:.3f}·text_norm")
    assert "score = fused + neighbor + file_context + id_tier" in ex.attrs["formula"]
    # The returned rows are exactly the ranking's results, with its scores.
    frame = p.run(cs)
    assert "neighbor" in frame.columns
    np.testing.assert_allclose(frame["neighbor"], ex.loc[ex["fate"] == "returned", "neighbor"])
    got = ex[ex["fate"] == "returned"][["qid", "docno", "score"]].reset_index(drop=True)
    want = frame[["qid", "docno", "score"]].reset_index(drop=True)
    assert got.equals(want)

    code, out, _ = run(
        "search", str(small_workspace), "tried roast number 12 at the cafe", "--embedder",
        "hashing", "--preset", "memlab-best", "--explain",
    )  # fmt: skip
    header = next(ln for ln in out.splitlines() if ln.startswith("#  vector_score"))
    assert code == 0 and "+ neighbor" in out
    assert header.split()[-7:] == [
        "neighbor",
        "file_context",
        "ids_held",
        "id_tier",
        "score",
        "mmr_position",
        "selected_by",
    ]


@pytest.fixture
def decayed_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "decay-ws"
    write(ws, "MEMORY.md", "# Memory\n- Peter prefers dark roast coffee.\n")
    write(ws, "memory/2025-01-10.md", "# 2025-01-10\n- The gateway moved to apollo today.\n")
    write(ws, "memory/2026-11-30.md", "# 2026-11-30\n- Lunch with Anna about the garden.\n")
    return ws


def test_dropped_by_decay_is_shown_and_now_keeps_it(decayed_workspace: Path) -> None:
    ws = str(decayed_workspace)
    base = ["search", ws, "gateway moved to apollo server", "--embedder", "hashing"]
    base += ["--preset", "openclaw-latest", "--now", "2026-12-01"]
    code, out, _ = run(*base)
    assert code == 0 and "no results" in out
    code, out, _ = run(*base, "--explain")
    assert "3 candidate(s) dropped (--dropped lists them" in out
    code, out, _ = run(*base, "--explain", "--dropped")
    line = next(ln for ln in out.splitlines() if ln.startswith("memory/2025-01-10.md"))
    assert "below minScore 0.35 after decay ×" in line

    code, out, _ = run(*base, "--dropped", "--json")
    res = json.loads(out)
    gone = next(c for c in res["candidates"] if c["path"] == "memory/2025-01-10.md")
    assert gone["fate"] == "dropped" and gone["fused"] >= 0.35 > gone["score"]
    age_days = (time_of("2026-12-01") - time_of("2025-01-10")) / 86400
    assert gone["decay"] == pytest.approx(0.5 ** (age_days / 30), rel=1e-9)
    assert gone["reason"] == (
        f"below minScore 0.35 after decay ×{gone['decay']:.4g} (fused {gone['fused']:.3f})"
    )

    at_note = [a if a != "2026-12-01" else "2025-01-10" for a in base]
    code, out, _ = run(*at_note, "--json")
    kept = json.loads(out)["results"]
    assert [r["path"] for r in kept] == ["memory/2025-01-10.md"]
    assert kept[0]["score"] == pytest.approx(gone["fused"])  # no decay at its own date
    assert run(*base[:-1], "yesterday")[0] == 2  # a --now that is not a date


def time_of(day: str) -> float:
    from memlab.cli import parse_now

    return parse_now(day)


# ---------------------------------------------------------------------- one search path
class QueryFails(HashingEmbedder):
    """Documents embed; every query fails as a provider that went down would."""

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbeddingError("provider down (simulated): connection refused")


def test_failing_provider_falls_back_the_same_way_in_every_output(
    small_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.embed as embed_mod

    monkeypatch.setattr(embed_mod, "resolve_embedder", lambda *a, **k: QueryFails(64))
    base = ["search", str(small_workspace), "MEM-4821", "--embedder", "hashing"]

    code, out, err = run(*base)
    assert code == 0, err
    assert "memory/2026-03-20.md" in out
    assert "embedding provider failed, keyword-only results" in err

    code, out, err = run(*base, "--explain")
    assert code == 0 and "mode keyword" in out and "keyword-only results" in err

    code, out, err = run(*base, "--json")
    res = json.loads(out)
    assert code == 0 and res["fallback"] is True and res["mode"] == "fts-only"
    assert res["results"][0]["path"] == "memory/2026-03-20.md"
    assert "keyword-only results" in res["warning"] and "keyword-only results" in err

    code, out, err = run(*base, "--explain", "--json")
    res = json.loads(out)
    assert res["fallback"] is True and res["mode"] == "keyword"
    assert res["candidates"][0]["path"] == "memory/2026-03-20.md"

    code, _, err = run(*base, "--preset", "vector")  # no keyword leg to fall back on
    assert code == 1 and "provider down (simulated)" in err


@pytest.mark.slow
def test_remote_embedder_down_still_answers_by_keyword(
    http_server: Server,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """A remote provider that is down: naming and checking the index sends no request, the
    sync of an edited file fails and is reported, and the search falls back to keywords."""
    server = http_server
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "# Infra\nThe gateway runs on apollo.\n")
    cfg = tmp_path / "openclaw.json"
    search = {"provider": "openai", "remote": {"baseUrl": server.url, "apiKey": "k"}}
    cfg.write_text(json.dumps({"agents": {"defaults": {"memorySearch": search}}}))
    code, out, _ = run("search", str(ws), "gateway apollo", "--config", str(cfg))
    assert code == 0 and "MEMORY.md" in out
    server.default = status(503, "down for maintenance")
    with (ws / "MEMORY.md").open("a") as fh:
        fh.write("Backups go to hermes.\n")
    n_before = len(server.requests)
    code, out, err = run("search", str(ws), "gateway apollo", "--config", str(cfg))
    assert code == 0, err
    assert "MEMORY.md" in out
    assert "keyword" in err and "MEMORY.md" in err  # the fallback and the stale file
    assert len(server.requests) > n_before  # it did try the provider
    code, out, err = run("search", str(ws), "gateway", "--config", str(cfg), "--json")
    assert code == 0 and json.loads(out)["results"]


def test_a_vector_only_preset_without_an_embedder_is_refused(small_workspace: Path) -> None:
    code, out, err = run(
        "search", str(small_workspace), "gateway", "--preset", "vector", "--embedder", "none"
    )
    assert code == 2 and out == ""
    assert "reads only the vector leg" in err and "--embedder none" in err


def test_get_past_the_end_says_why_nothing_printed(small_workspace: Path) -> None:
    code, out, err = run("get", str(small_workspace), "MEMORY.md", "--from", "5000")
    assert code == 0 and out == ""
    assert "MEMORY.md has no line 5000" in err
