"""The command line run as a user would: real subprocesses of the installed `memlab`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli, write

MEMLAB = [sys.executable, "-m", "memlab.cli"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Indexes default to the user cache: each test gets its own (and leaves ~/.cache alone)."""
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def run(
    *args: str, check: bool = True, subprocess_: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the command line; in-process by default (fast), in a real subprocess on request.

    A few tests go through a real ``python -m memlab.cli`` process, as a user would;
    the rest call ``memlab.cli.main`` with redirected output, which exercises the
    same argument parsing, dispatch and exit codes without the start-up cost.
    """
    if subprocess_:
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        proc = subprocess.run(
            [*MEMLAB, *args], capture_output=True, text=True, env=env, timeout=300
        )
    else:
        proc = subprocess.CompletedProcess(list(args), *cli(*args))
    if check and proc.returncode != 0:
        raise AssertionError(f"memlab {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def test_version_and_help() -> None:
    from memlab import __version__

    assert run("--version", subprocess_=True).stdout.strip() == f"memlab {__version__}"
    out = run("--help", subprocess_=True).stdout
    for cmd in ("files", "chunk", "index", "status", "watch", "search", "get", "synth", "demo"):
        assert cmd in out


def test_files_and_chunk(small_workspace: Path) -> None:
    out = run("files", str(small_workspace)).stdout
    assert "MEMORY.md" in out and "memory/notes/ideas.md" in out and "notes.txt" not in out
    rows = json.loads(run("files", str(small_workspace), "--json").stdout)
    assert next(r["path"] for r in rows) == "MEMORY.md"
    f = write(
        small_workspace, "long.md", "".join(f"line {i} " + "x" * 90 + "\n" for i in range(40))
    )
    chunks = json.loads(run("chunk", str(f), "--tokens", "100", "--overlap", "20", "--json").stdout)
    assert chunks[0]["start_line"] == 1 and chunks[-1]["end_line"] == 41
    lines = f.read_text().split("\n")
    for c in chunks:
        assert c["text"] == "\n".join(lines[c["start_line"] - 1 : c["end_line"]])
    table = run("chunk", str(f), "--tokens", "100").stdout
    assert "lines" in table and "1-" in table
    bad = run("chunk", str(small_workspace / "nope.md"), check=False)
    assert bad.returncode == 2 and "file not found" in bad.stderr


@pytest.mark.slow
def test_index_status_search_get(small_workspace: Path) -> None:
    ws = str(small_workspace)
    first = json.loads(run("index", ws, "--embedder", "hashing", "--json").stdout)
    assert first["full_reindex"] and first["chunks"] > 0
    second = json.loads(run("index", ws, "--embedder", "hashing", "--json").stdout)
    assert second["embedded"] == 0 and not second["full_reindex"]
    st = json.loads(run("status", ws, "--embedder", "hashing", "--json").stdout)
    assert st["dirty"] is False and st["chunks"] == first["chunks"]
    out = run("search", ws, "MEM-4821", "--embedder", "hashing", "--min-score", "0").stdout
    assert "memory/2026-03-20.md" in out
    res = json.loads(
        run(
            "search",
            ws,
            "MEM-4821",
            "--embedder",
            "hashing",
            "--json",
            "--min-score",
            "0",
            subprocess_=True,
        ).stdout
    )
    assert res["results"][0]["path"] == "memory/2026-03-20.md" and res["mode"] == "hybrid"
    ex = run(
        "search",
        ws,
        "coffee",
        "--embedder",
        "hashing",
        "--explain",
        "--preset",
        "openclaw-latest",
        "--min-score",
        "0",
    ).stdout
    assert "vector_score" in ex and "decay" in ex and "mmr_position" in ex
    got = run("get", ws, "memory/2026-01-05.md", "--from", "2", "--lines", "1").stdout
    assert got == "- Preference: Peter likes dark roast coffee.\n"
    refused = run("get", ws, "../outside.md", check=False)
    assert refused.returncode == 2 and "outside the workspace" in refused.stderr
    bad = run("search", ws, "x", "--embedder", "hashing", "--set", "vector_weight=3", check=False)
    assert bad.returncode == 2 and "vector_weight must be in [0, 1]" in bad.stderr


def test_search_help_groups_its_options_and_set_takes_the_rare_knobs(
    small_workspace: Path,
) -> None:
    """`memlab search --help` groups its options (what to search, how to rank, what to
    print); the rarely used ranking knobs are `--set` keys, the old flags still work with a
    note, and a key that is no parameter is named with the allowed keys."""
    text = run("search", "--help").stdout
    heads = ["what to search:", "how to rank:", "what to print:", "what to search: the index"]
    at = [text.index(h) for h in heads]
    assert at == sorted(at)
    rank = text[at[1] : at[2]]
    for flag in ("--preset", "--max-results", "--min-score", "--set KEY=VALUE", "--now"):
        assert flag in rank, flag
    for flag in ("--json", "--explain", "--dropped", "--citations", "--width"):
        assert flag in text[at[2] : at[3]], flag
    assert "--db" in text[at[3] :] and "--config" in text[at[3] :]
    for moved in ("--vector-weight", "--text-weight", "--candidate-multiplier"):
        assert moved not in text, moved
    ws = str(small_workspace)
    base = ["search", ws, "coffee roast", "--embedder", "hashing", "--explain", "--min-score", "0"]
    new = run(*base, "--set", "vector_weight=0.4", "--set", "candidate_multiplier=8.0")
    assert "vector_weight=0.4" in new.stdout and "candidate_multiplier=8.0" in new.stdout
    old = run(*base, "--vector-weight", "0.4", "--candidate-multiplier", "8")
    assert old.stdout == new.stdout
    assert "--vector-weight is now --set vector_weight=0.4" in old.stderr
    # the ranking flags of their own win over --set
    both = run(*base, "--set", "max_results=1", "--max-results", "2").stdout
    assert "max_results=2" in both
    bad = run(*base, "--set", "vectorweight=0.4", check=False)
    assert bad.returncode == 2 and bad.stdout == ""
    assert (
        "--set vectorweight: not a pipeline parameter (did you mean vector_weight?)" in bad.stderr
    )
    assert "allowed keys: active_projects, " in bad.stderr and "vector_weight" in bad.stderr


def test_search_vector_backends_agree(small_workspace: Path) -> None:
    from memlab.cli import VECTOR_BACKENDS
    from memlab.store import VECTOR_BACKENDS as INDEX_BACKENDS

    assert VECTOR_BACKENDS == INDEX_BACKENDS
    ws = str(small_workspace)
    base = ["search", ws, "coffee roast", "--embedder", "hashing", "--json", "--min-score", "0"]
    want = json.loads(run(*base).stdout)["results"]
    assert want
    for backend in ("faiss", "fp16", "hnsw"):
        got = json.loads(run(*base, "--vector-backend", backend).stdout)["results"]
        assert [(r["path"], r["startLine"]) for r in got] == [
            (r["path"], r["startLine"]) for r in want
        ], backend
    bad = run(*base, "--vector-backend", "annoy", check=False)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


@pytest.mark.slow
def test_missing_workspace_is_clear_error(tmp_path: Path) -> None:
    p = run("index", str(tmp_path / "nope"), "--embedder", "hashing", check=False, subprocess_=True)
    assert p.returncode == 2 and "workspace not found" in p.stderr


def test_search_takes_query_settings_from_config(small_workspace: Path, tmp_path: Path) -> None:
    ws = str(small_workspace)
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(
        "{agents: {defaults: {memorySearch: {provider: 'local',"
        " query: {maxResults: 2, minScore: 0, hybrid: {vectorWeight: 0.4, textWeight: 0.6}}}}}}"
    )
    base = ["search", ws, "coffee roast", "--embedder", "hashing", "--config", str(cfg)]
    res = json.loads(run(*base, "--json").stdout)["results"]
    assert len(res) == 2  # the config's maxResults and minScore, not the preset's 6 / 0.35
    ex = run(*base, "--explain").stdout
    assert "vector_weight=0.4" in ex and "max_results=2" in ex
    # An explicit preset still wins; flags override the config.
    assert len(json.loads(run(*base, "--json", "--preset", "openclaw").stdout)["results"]) <= 1
    assert len(json.loads(run(*base, "--json", "--max-results", "3").stdout)["results"]) == 3
    bad = run(*base, "--agent", "nobody", check=False)
    assert bad.returncode != 0 and "no agent 'nobody'" in bad.stderr


def test_memlab_best_search_uses_its_porter_index(small_workspace: Path) -> None:
    ws = str(small_workspace)
    out = run("search", ws, "preferences", "--embedder", "hashing", "--preset", "memlab-best")
    assert "memory/2026-0" in out.stdout  # stemmed: "preferences" matches "Preference"
    st = json.loads(
        run("status", ws, "--embedder", "hashing", "--fts-tokenizer", "porter", "--json").stdout
    )
    assert st["dirty"] is False  # the index memlab-best used is the porter one
    none = run("search", ws, "zqxv", "--embedder", "none")
    assert "try --min-score 0" in none.stdout


def test_index_and_status_name_the_cache_file_and_identity(
    small_workspace: Path, private_cache: Path
) -> None:
    from memlab.embed import HashingEmbedder
    from memlab.store import index_identity

    ws = str(small_workspace)
    out = run("index", ws, "--embedder", "hashing").stdout
    ident = index_identity("unicode61", HashingEmbedder())
    line = next(ln for ln in out.splitlines() if ln.startswith("index: "))
    db = Path(line.removeprefix("index: "))
    assert db.name == f"{ident}.sqlite" and db.is_file()
    assert db.is_relative_to(private_cache / "memlab" / "indexes")
    assert not (small_workspace / ".memlab").exists()
    st = json.loads(run("status", ws, "--embedder", "hashing", "--json").stdout)
    assert st["index_path"] == str(db) and st["identity"] == ident
    missing = run("status", ws, "--embedder", "none", check=False)
    assert missing.returncode == 2 and f"this workspace has indexes for: {ident}" in missing.stderr
