"""``qmd-like``: QMD's retrieval without its models (``memlab.qmd``, the ``qmd`` keyword leg,
the ``qmd_documents`` stage), against QMD's documented examples and an oracle written
from QMD's ``hybridQuery`` (tobi/qmd ``src/store.ts``, no expansion, no reranker) that
reads the files from disk, not from memlab's index.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.qmd import DocumentSearch, best_chunk, build_fts5_query, document_title
from memlab.qmd.query import normalize_cjk
from tests.conftest import cli, write

# QMD's own examples (buildFTS5Query's docstring, isDottedToken's comment).
QMD_EXAMPLES = {
    "performance -sports": '"performance"* NOT "sports"*',
    '"machine learning"': '"machine learning"',
    "multi-agent memory": '"multi agent" AND "memory"*',
    "DEC-0054": '"dec 0054"',
    "-multi-agent": None,  # only a negation: FTS5 NOT is binary
    "2026.4.10": '"2026"* AND "4"* AND "10"*',
    "how do I deploy": '"how"* AND "do"* AND "i"* AND "deploy"*',
    "v1.2.3 -1.0.21": '"v1"* AND "2"* AND "3"* NOT ("1"* AND "0"* AND "21"*)',
    "找到 会议": '"找 到" AND "会 议"',
    "don't  stop!": '"don\'t"* AND "stop"*',
    "": None,
}


@pytest.mark.parametrize("query", list(QMD_EXAMPLES))
def test_query_syntax_is_qmds(query: str) -> None:
    assert build_fts5_query(query) == QMD_EXAMPLES[query]


@given(st.text(max_size=40))
def test_every_query_string_is_valid_fts5(text: str) -> None:
    """Whatever a user types, the MATCH string parses (or there is none)."""
    q = build_fts5_query(text)
    if q is None:
        return
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter unicode61')")
    db.execute("SELECT * FROM t WHERE t MATCH ?", (q,)).fetchall()


def test_title_and_best_chunk_are_qmds() -> None:
    assert document_title("intro\n# Deploy notes\n## Steps\n", "a/b.md") == "Deploy notes"
    assert document_title("# Notes\ntext\n## Kitchen\n", "x.md") == "Kitchen"
    assert document_title("no heading here", "memory/2026-03-03.md") == "2026-03-03"
    # the most query words longer than 2 characters; the first on a tie
    texts = ["alpha beta", "gamma deploy beta", "deploy beta gamma"]
    assert best_chunk("Deploy the GAMMA beta at 9", texts) == 1
    assert best_chunk("nothing here", texts) == 0
    assert normalize_cjk("会议ok") == " 会 议 ok"


def test_document_search_weights_title_over_body() -> None:
    """bm25(documents_fts, 1.5, 4.0, 1.0): a word in the title outranks the same word in a
    body; every term must match, as a prefix of a porter stem (``kitchen`` finds
    ``kitchens``; as in QMD, ``deploy`` stems to ``deploi`` and misses ``deployment``)."""
    search = DocumentSearch.build(
        {
            "a.md": "# Gardening\n\nwe clean the kitchens and plan the deployment\n",
            "b.md": "# Kitchen\n\nthe plan for tomorrow\n",
            "c.md": "# Other\n\nplan only\n",
        }
    )
    hits = search.search(build_fts5_query("kitchen plan"), 20)
    assert [p for p, _ in hits] == ["b.md", "a.md"]
    assert all(s < 0 for _, s in hits)
    assert search.search(build_fts5_query("kitchen nowhere"), 20) == []
    assert search.search(build_fts5_query("deploy"), 20) == []
    assert search.search('"unbalanced', 20) == []  # a query FTS5 refuses finds nothing


# ----------------------------------------------------------------------- the oracle
def oracle(ws: Path, index, query: str, limit: int) -> list[tuple[str, int]]:
    """QMD's hybridQuery without expansion or reranker, from its source: FTS over the files
    read from disk (top 20), the vector list from the 60 nearest chunks (best chunk per
    file, top 20), reciprocalRankFusion with weights 2 and the top-rank bonus (stable sort,
    files in first-seen order: FTS list first), the best 40, each file's best chunk by
    query words; returns (path, start line) of the first ``limit``."""
    files = {str(p.relative_to(ws)): p.read_text() for p in sorted(ws.rglob("*.md"))}
    fts = DocumentSearch.build(files).search(build_fts5_query(query), 20)
    t = index.table
    qv = index.embedder.embed_query(query)
    cos = t.vectors @ qv
    near = np.argsort(-cos, kind="stable")[:60]
    best: dict[str, float] = {}
    for i in near:
        p = str(t.paths[i])
        if p not in best or cos[i] > best[p]:
            best[p] = float(cos[i])
    vec = sorted(best, key=lambda p: -best[p])[:20]
    scores: dict[str, list[float]] = {}
    for lst in ([p for p, _ in fts], vec):
        for rank, p in enumerate(lst):
            e = scores.setdefault(p, [0.0, rank])
            e[0] += 2.0 / (60 + rank + 1)
            e[1] = min(e[1], rank)
    for e in scores.values():
        e[0] += 0.05 if e[1] == 0 else 0.02 if e[1] <= 2 else 0.0
    ranked = sorted(scores, key=lambda p: -scores[p][0])[:40]
    out = []
    for p in ranked[:limit]:
        rows = sorted(np.flatnonzero(t.paths == p), key=lambda r: t.start_lines[r])
        texts = index.texts(rows)
        out.append((p, int(t.start_lines[rows[best_chunk(query, texts)]])))
    return out


WORDS = "alpha beta gamma delta deploy plan kitchen garden invoice server backup coffee".split()


def random_workspace(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    for d in range(rng.randint(3, 9)):
        lines = [f"# Day {d}", ""]
        for _ in range(rng.randint(2, 60)):
            lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))))
        name = "MEMORY.md" if d == 0 else f"memory/2026-03-{d:02d}.md"
        write(root, name, "\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(6))
def test_qmd_like_equals_the_oracle(tmp_path: Path, seed: int, private_cache) -> None:
    """memlab search --preset qmd-like (hashing vectors, OpenClaw's chunks) returns the
    files, in the order and at the chunks, QMD's algorithm gives on the same vectors."""
    from memlab.chunking import ChunkerConfig
    from memlab.embed import HashingEmbedder
    from memlab.pipeline.presets import preset
    from memlab.store import MemoryIndex

    ws = tmp_path / "ws"
    random_workspace(ws, seed)
    idx = MemoryIndex(
        ws,
        db_path=tmp_path / "i.sqlite",
        embedder=HashingEmbedder(dimensions=64),
        chunker=ChunkerConfig("openclaw", 60, 10),
        progress=False,
    )
    idx.sync()
    rng = random.Random(seed)
    p = preset("qmd-like", max_results=8)
    for _ in range(8):
        q = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        got = p.search(idx, q)
        want = oracle(ws, idx, q, 8)
        assert list(zip(got["path"], got["start_line"], strict=True)) == want, q
        assert got["path"].is_unique  # one result per file
    idx.close()


def test_search_cli_one_result_per_file(tmp_path: Path, private_cache) -> None:
    ws = tmp_path / "ws"
    random_workspace(ws, 11)
    code, out, err = cli(
        "search", str(ws), "deploy plan", "--preset", "qmd-like", "--embedder", "hashing", "--json"
    )
    assert code == 0, err
    paths = [r["path"] for r in json.loads(out)["results"]]
    assert paths and len(paths) == len(set(paths))
