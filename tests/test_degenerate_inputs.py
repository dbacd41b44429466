"""Every system answers a degenerate workspace or query with results (maybe none), never
a crash.

A query with no candidate is a score row of width 0, which every reduction (the z-score
normalisation's minimum, say) must take without an initial value failing. The property test runs every preset, and a system switching on each stage, over
every degenerate case (an empty workspace, one file of one line, only undecodable files,
one chunk, identical chunks, an empty keyword leg, an empty vector leg), with queries and
limits drawn by Hypothesis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.config.vocab import NORMALIZATIONS
from memlab.embed import HashingEmbedder
from memlab.pipeline import Pipeline
from memlab.pipeline.explain import explain
from memlab.pipeline.presets import PRESETS, memlab_learned, preset
from memlab.retrieval.fusion import FUSIONS, fuse, normalize
from memlab.stages import STAGES
from memlab.store import MemoryIndex
from memlab.tools import memory_search, search_with_fallback
from tests.conftest import cli

REPO = Path(__file__).resolve().parents[1]
LOG = "## 2026-01-05\n- Alice likes green tea.\n- Bob fixed the gateway.\n"
TWO_FILES = {"MEMORY.md": "# Memory\n\nAlice likes green tea.\n", "memory/2026-01-05.md": LOG}
# case -> files ({relative path: text or bytes})
CASES: dict[str, dict[str, str | bytes]] = {
    "empty workspace": {},
    "one file of one line": {"MEMORY.md": "Alice likes green tea."},
    "all files undecodable": {"MEMORY.md": b"\xff\xfe\x00A\x00", "memory/a.md": b"tea \xff"},
    "one chunk": {"memory/2026-01-05.md": LOG},
    "every chunk identical": {f"memory/2026-01-0{i}.md": LOG for i in range(1, 5)},
    "empty keyword leg": TWO_FILES,
    "empty vector leg": TWO_FILES,
}
NO_RESULTS = ("empty workspace", "all files undecodable")
# A system for each stage that no preset may switch on; `test_every_stage_is_covered`
# fails when a stage is added without one.
STAGE_SYSTEMS: dict[str, Pipeline] = {
    "+lexical_boost": preset("openclaw", lexical_boost=True),
    "+decay": preset("openclaw", decay="exact"),
    "+importance": preset("openclaw", importance_boost=True),
    "+project": preset("openclaw", project_boost=True, active_projects=("x",)),
    "+neighbor": preset("openclaw", neighbor_prev=0.3, neighbor_next=0.3),
    "+file_context": preset("wsum", file_context=1.0),
    "+headings": preset("openclaw", drop_headings=True),
    "+learned": memlab_learned(),
    "+identifier_tier": preset("wsum", identifier_tier=True),
    "+normalize floor": preset("memlab-best", text_unmatched="floor"),
    "+normalize pooled": preset("memlab-best", text_unmatched="pooled"),
    "+best_line": preset("memlab-best-chunk", best_line_order="max"),
    "+exact_tiers": preset("openclaw", exact_tiers=True),
    "+mmr": preset("openclaw", mmr="jaccard"),
    "+mmr embedding": preset("wsum", mmr="embedding"),
    "+novel_lines": preset("memlab-best-chunk"),
}
SYSTEMS: dict[str, Pipeline] = {**{n: preset(n) for n in PRESETS}, **STAGE_SYSTEMS}
# Query text that no memory file holds: the keyword leg of the "empty keyword leg" case
# finds nothing, whatever Hypothesis appends (no digit: the files hold dates).
NOWHERE = st.text(alphabet="qxzé中 -*\"'()?!", max_size=12)


class ZeroQueryEmbedder:
    """The hashing embedder for documents, the all-zero vector for every query: the vector
    leg is skipped (spec §3), so it finds nothing."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    provider = property(lambda self: self.inner.provider)
    model = property(lambda self: self.inner.model)
    dimensions = property(lambda self: self.inner.dimensions)
    identity_key = property(lambda self: self.inner.identity_key)

    def embed_documents(self, texts: Any) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return np.zeros(self.inner.dimensions, dtype=np.float32)

    def count_truncated(self, texts: Any) -> int:
        return self.inner.count_truncated(texts)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``get(case, system)``: the synced index of that case's workspace with the system's
    tokenizer and file rule (one per combination, shared by the examples)."""
    root = tmp_path_factory.mktemp("degenerate")
    made: dict[tuple[str, str | None, str], MemoryIndex] = {}
    for case, files in CASES.items():
        ws = root / case.replace(" ", "-")
        ws.mkdir()
        for rel, text in files.items():
            f = ws / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(text if isinstance(text, bytes) else text.encode())

    def get(case: str, p: Pipeline) -> MemoryIndex:
        spec = p.retrieval_spec()
        key = (case, spec.fts_tokenizer, spec.memory_files)
        if key not in made:
            emb: Any = HashingEmbedder(64)
            if case == "empty vector leg":
                emb = ZeroQueryEmbedder(emb)
            made[key] = MemoryIndex(
                root / case.replace(" ", "-"),
                db_path=root / f"{len(made)}.sqlite",
                embedder=emb,
                fts_tokenizer=spec.fts_tokenizer or "unicode61",
                memory_files=spec.memory_files,
                progress=False,
            )
        return made[key]

    yield get
    for idx in made.values():
        idx.close()


def test_every_stage_is_covered() -> None:
    """Each stage runs in at least one system of the property test, and each ``+stage``
    system runs the stage it is named for."""
    on = {s for p in SYSTEMS.values() for s in p.active_stages()}
    assert [s.name for s in STAGES if s.name not in on] == []
    for name, p in STAGE_SYSTEMS.items():
        stage = name[1:].split()[0]
        assert stage in p.active_stages(), name


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("system", list(SYSTEMS))
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.sampled_from(["alice green tea", "gateway", "tea", "Bob"]),
    noise=NOWHERE,
    max_results=st.integers(1, 8),
    min_score=st.sampled_from([None, 0.0, 0.35, 1.0, -1e6]),
)
def test_every_system_answers_degenerate_input(
    indexes: Any,
    system: str,
    case: str,
    words: str,
    noise: str,
    max_results: int,
    min_score: float | None,
) -> None:
    p = SYSTEMS[system]
    idx = indexes(case, p)
    query = f"zebraquartz {noise}" if case == "empty keyword leg" else f"{words} {noise}"
    res = memory_search(idx, query, max_results, min_score, pipeline=p)
    assert "unavailable" not in res, res
    results = res["results"]
    assert len(results) <= max_results
    scores = [r["score"] for r in results]
    assert all(np.isfinite(scores)) and scores == sorted(scores, reverse=True)
    assert {r["path"] for r in results} <= set(CASES[case])
    if case in NO_RESULTS:
        assert results == []
    # the case is what it says it is, and --explain accounts for the same search
    out = search_with_fallback(idx, p.replace(max_results=max_results), query)
    cs = out.candidates
    if case == "empty keyword leg":
        assert (cs.text_rank < 0).all()
    if case == "empty vector leg":
        assert (cs.vec_rank < 0).all()
    if case == "one chunk":
        assert len(idx.table) == 1
    if case == "every chunk identical":
        assert len(set(idx.texts(np.arange(len(idx.table))))) == 1
    ex = explain(out.pipeline, cs, out.ranking)
    assert (ex["fate"] == "returned").sum() == len(out.frame)


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}


@pytest.mark.slow
def test_cli_searches_an_empty_workspace_with_every_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user's command on an empty workspace: no results and exit 0, for every preset —
    each through the command line's own entry point, and one as a shell runs it (its own
    process: exit code, stdout and stderr as the shell sees them)."""
    ws = tmp_path / "empty"
    ws.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in PRESETS:
        code, out, err = cli(
            "search", str(ws), "anything", "--preset", name, "--embedder", "hashing"
        )
        assert code == 0, (name, err)
        assert out.startswith("no results for 'anything'"), (name, out)
        assert "error" not in err, (name, err)
    cmd = [sys.executable, "-m", "memlab.cli", "search", str(ws), "anything"]
    proc = subprocess.run(
        [*cmd, "--preset", "memlab-best", "--embedder", "hashing"],
        capture_output=True,
        text=True,
        env=env(tmp_path),
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("no results for 'anything'"), proc.stdout
    assert "error" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("name", ["memlab-best", "memlab-best-chunk", "openclaw-current"])
def test_json_and_explain_on_an_empty_workspace(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ws = tmp_path / "empty"
    ws.mkdir()
    code, out, err = cli(
        "search", str(ws), "anything", "--preset", name, "--embedder", "hashing", "--json"
    )
    assert code == 0, err
    res = json.loads(out)
    assert res["results"] == [] and "unavailable" not in res
    code, out, err = cli(
        "search", str(ws), "anything", "--preset", name, "--embedder", "hashing", "--explain"
    )
    assert code == 0, err
    assert out.startswith("no results for 'anything'")


@pytest.mark.parametrize("method", NORMALIZATIONS)
def test_every_normalisation_and_fusion_takes_a_query_without_candidates(method: str) -> None:
    """The cause of the crash, for every method: a row of width 0 normalises and fuses to a
    row of width 0 (a query with no candidate), one row per query."""
    for shape in [(0,), (1, 0), (3, 0)]:
        assert normalize(np.empty(shape), method, lower=-1.0).shape == shape
    for fusion in FUSIONS:
        empty = np.empty((2, 0))
        assert fuse(fusion, vec=empty, text=empty).shape == (2, 0)
