from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from memlab.chunking import ChunkerConfig
from memlab.retrieval.textquery import build_fts_query
from memlab.store import IndexLockedError, MemoryIndex, chunk_id
from tests.conftest import CountingEmbedder, write


def make(ws: Path, emb, **kw) -> MemoryIndex:
    return MemoryIndex(ws, embedder=emb, db_path=ws.parent / "idx.sqlite", **kw)


def table_counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("files", "chunks", "chunks_fts", "embedding_cache")
        }
    finally:
        con.close()


def test_first_sync_then_nothing_to_do(small_workspace: Path, hashing) -> None:
    emb = CountingEmbedder(hashing)
    idx = make(small_workspace, emb)
    r1 = idx.sync()
    assert r1.full_reindex and r1.files == 4 and r1.files_changed == 4
    assert r1.embedded == r1.chunks > 0 and r1.cache_hits == 0
    r2 = idx.sync()
    assert not r2.full_reindex and r2.files_changed == 0 and r2.embedded == 0
    assert len(emb.embedded) == r1.embedded
    counts = table_counts(idx.db_path)
    assert counts["chunks"] == counts["chunks_fts"] == r1.chunks
    assert counts["files"] == 4


def test_append_line_reembeds_only_changed_chunk(tmp_path: Path, hashing) -> None:
    ws = tmp_path / "ws"
    # Two files, each several chunks long with a small chunk size.
    long_a = "".join(f"- note {i} about topic alpha number {i}\n" for i in range(60))
    write(ws, "memory/2026-01-01.md", long_a)
    write(ws, "memory/2026-01-02.md", "".join(f"- beta {i}\n" for i in range(40)))
    emb = CountingEmbedder(hashing)
    idx = make(ws, emb, chunker=ChunkerConfig("openclaw", 64, 8))
    first = idx.sync()
    assert first.chunks > 6
    emb.calls.clear()
    with (ws / "memory/2026-01-02.md").open("a") as fh:
        fh.write("- beta appended line\n")
    r = idx.sync()
    assert r.files_changed == 1
    # Only chunk texts not seen before were embedded: the last chunk(s) of the changed file.
    assert 1 <= len(emb.embedded) <= 2
    assert all("beta appended line" in t or t.count("beta") > 0 for t in emb.embedded)
    assert any("beta appended line" in t for t in emb.embedded)
    assert r.cache_hits >= 1
    # Rows of the untouched file are unchanged.
    con = sqlite3.connect(idx.db_path)
    paths = {p for (p,) in con.execute("SELECT DISTINCT path FROM chunks")}
    assert paths == {"memory/2026-01-01.md", "memory/2026-01-02.md"}


def test_delete_file_leaves_every_table(small_workspace: Path, hashing) -> None:
    idx = make(small_workspace, hashing)
    idx.sync()
    (small_workspace / "memory/2026-01-05.md").unlink()
    r = idx.sync()
    assert r.files_removed == 1 and r.chunks_removed >= 1
    con = sqlite3.connect(idx.db_path)
    assert (
        con.execute("SELECT count(*) FROM files WHERE path='memory/2026-01-05.md'").fetchone()[0]
        == 0
    )
    assert (
        con.execute("SELECT count(*) FROM chunks WHERE path='memory/2026-01-05.md'").fetchone()[0]
        == 0
    )
    n_chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert con.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == n_chunks
    # the deleted text is no longer findable
    pos, _ = idx.keyword_search(build_fts_query("a828e60"), 10)
    assert pos.size == 0


def test_fingerprint_change_full_reindex_with_cache_hits(small_workspace: Path, hashing) -> None:
    emb = CountingEmbedder(hashing)
    idx = make(small_workspace, emb, chunker=ChunkerConfig("openclaw", 400, 80))
    first = idx.sync()
    idx.close()
    emb.calls.clear()
    # The small files fit in one chunk either way, so texts are unchanged.
    idx2 = make(small_workspace, emb, chunker=ChunkerConfig("openclaw", 300, 80))
    r = idx2.sync()
    assert r.full_reindex and "chunker" in r.reason
    assert r.cache_hits == first.chunks and r.embedded == 0 and emb.embedded == []
    assert idx2.stored_fingerprint() == idx2.fingerprint()
    assert not list(idx2.db_path.parent.glob("idx.sqlite.tmp-*"))


def test_chunk_ids_follow_openclaw_formula(small_workspace: Path, hashing) -> None:
    idx = make(small_workspace, hashing)
    idx.sync()
    con = sqlite3.connect(idx.db_path)
    rows = con.execute(
        "SELECT id, path, source, start_line, end_line, hash, model FROM chunks"
    ).fetchall()
    import hashlib

    for cid, path, source, s, e, h, model in rows:
        key = f"{source}:{path}:{s}:{e}:{h}:{model}"
        assert cid == hashlib.sha256(key.encode()).hexdigest()
    assert chunk_id  # public helper exists


def test_fts5_bm25_equals_okapi_by_hand(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    docs = [
        "apple banana apple cherry",
        "banana banana durian",
        "apple durian elderberry fig grape",
        "cherry cherry cherry apple",
        "fig",
        "kiwi lemon mango",
    ]
    for i, d in enumerate(docs):
        write(ws, f"memory/d{i}.md", d)
    idx = make(ws, None)
    idx.sync()
    toks = [d.split() for d in docs]
    n = len(docs)
    avgdl = sum(len(t) for t in toks) / n

    def okapi(query: list[str], doc: list[str]) -> float:
        s = 0.0
        for q in query:
            nq = sum(1 for t in toks if q in t)
            idf = max(math.log((n - nq + 0.5) / (nq + 0.5)), 1e-6)
            f = doc.count(q)
            s += idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * len(doc) / avgdl))
        return s

    for query in (["apple"], ["cherry"], ["apple", "cherry"], ["durian"], ["kiwi"]):
        pos, ranks = idx.keyword_search(build_fts_query(" ".join(query)), 10)
        assert pos.size > 0
        paths = idx.table.paths[pos]
        for p, r in zip(paths, ranks, strict=True):
            doc = toks[int(p.split("/d")[1][:-3])]
            assert -r == pytest.approx(okapi(query, doc), rel=1e-9)
    # A term in half or more of the chunks contributes ~0 (the IDF floor); rank_bm25 uses
    # a different floor (epsilon × mean idf), which is why memlab pins FTS5 by hand.
    assert BM25Okapi(toks).get_scores(["apple"]).shape == (n,)


def test_vector_search_engines_agree(small_workspace: Path, hashing) -> None:
    idx = make(small_workspace, hashing)
    idx.sync()
    q = idx.embed_queries(["coffee preference", "gateway host"])
    pos, sc = idx.vector_search(q, 3)
    sims = q @ idx.table.vectors.T
    for i in range(2):
        expect = np.argsort(-sims[i], kind="stable")[:3]
        assert list(pos[i]) == list(expect)
        np.testing.assert_allclose(sc[i], sims[i][expect], rtol=1e-5)
    # Every backend answers from the same table: exact ones identically, approximate
    # ones (over a corpus this small, with enough probes) too.
    for backend, params in [
        ("faiss", {}),
        ("fp16", {}),
        ("sq8", {"oversample": 50}),
        ("hnsw", {}),
        ("ivf", {"nlist": 2, "nprobe": 2}),
    ]:
        other = make(small_workspace, hashing, vector_backend=backend, vector_params=params)
        pos2, sc2 = other.vector_search(q, 3)
        assert (pos2 == pos).all(), backend
        np.testing.assert_allclose(sc2, sc, rtol=1e-4, atol=1e-6)
        assert other.vector_engine().name == backend
    # A non-finite query row is not scanned (and does not disturb the other rows).
    bad = np.vstack([q[:1], np.full((1, q.shape[1]), np.nan, dtype=np.float32)])
    bpos, bsc = idx.vector_search(bad, 3)
    assert list(bpos[0]) == list(pos[0]) and (bpos[1] == -1).all() and np.isnan(bsc[1]).all()
    # An engine built over other vectors is refused.
    from memlab.retrieval.vectors import make_engine

    with pytest.raises(ValueError, match=r"build it over index\.table\.vectors"):
        idx.set_vector_engine(make_engine("numpy", idx.table.vectors[:-1]))
    idx.set_vector_engine(make_engine("faiss", idx.table.vectors))
    assert (idx.vector_search(q, 3)[0] == pos).all()
    # An all-zero query vector skips the vector side.
    zpos, zsc = idx.vector_search(np.zeros((1, q.shape[1]), dtype=np.float32), 3)
    assert (zpos == -1).all() and np.isnan(zsc).all()


def test_keyword_only_index(small_workspace: Path) -> None:
    idx = make(small_workspace, None)
    r = idx.sync()
    assert idx.model == "fts-only" and r.embedded == 0
    assert idx.table.vectors is None
    pos, ranks = idx.keyword_search(build_fts_query("MEM-4821"), 5)
    assert idx.table.paths[pos[0]] == "memory/2026-03-20.md" and ranks[0] < 0
    # A query SQLite rejects yields no hits instead of an error.
    assert idx.keyword_search('"unbalanced', 5)[0].size == 0


def test_trigram_and_path_prefix(small_workspace: Path) -> None:
    idx = make(small_workspace, None, fts_tokenizer="trigram", fts_path_prefix=True)
    idx.sync()
    pos, _ = idx.keyword_search('"828e6"', 5)  # a substring: only trigram finds it
    assert pos.size == 1
    pos, _ = idx.keyword_search('"2026-03-20"', 5)  # matches the path prefix
    assert "memory/2026-03-20.md" in set(idx.table.paths[pos])


def test_unreadable_file_reported_not_fatal(small_workspace: Path, hashing) -> None:
    (small_workspace / "memory/bad.md").write_bytes(b"\xff\xfe\x00bad")
    idx = make(small_workspace, hashing)
    r = idx.sync()
    assert [p for p, _ in r.files_failed] == ["memory/bad.md"]
    assert "UTF-8" in r.files_failed[0][1]
    assert r.files == 5 and r.chunks > 0


def test_status_reports_dirty(small_workspace: Path, hashing) -> None:
    idx = make(small_workspace, hashing)
    idx.sync()
    st = idx.status()
    assert st["dirty"] is False and st["fingerprint_current"]
    write(small_workspace, "memory/2026-03-21.md", "- new\n")
    st = idx.status()
    assert st["dirty"] is True and st["dirty_files"] == ["memory/2026-03-21.md"]


def test_corrupt_index_file_is_rebuilt(small_workspace: Path, hashing) -> None:
    db = small_workspace.parent / "idx.sqlite"
    db.write_bytes(b"this is not sqlite" * 100)
    idx = make(small_workspace, hashing)
    r = idx.sync()
    assert r.full_reindex and r.chunks > 0
    assert (small_workspace / "MEMORY.md").read_text().startswith("# Memory")


def test_second_writer_waits_then_fails_clearly(small_workspace: Path, hashing) -> None:
    import fcntl
    import os

    idx = make(small_workspace, hashing, lock_timeout=0.2)
    lock = idx.db_path.with_name(idx.db_path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(IndexLockedError, match="another process"):
            idx.sync()
    finally:
        os.close(fd)
    assert idx.sync().chunks > 0


@pytest.mark.slow
def test_sigkill_during_full_reindex_leaves_old_index_usable(
    small_workspace: Path, tmp_path: Path
) -> None:
    db = tmp_path / "kill.sqlite"
    setup = textwrap.dedent(
        f"""
        from memlab.store import MemoryIndex
        from memlab.embed import HashingEmbedder
        MemoryIndex({str(small_workspace)!r}, embedder=HashingEmbedder(dimensions=64), db_path={str(db)!r}).sync()
        """
    )
    subprocess.run([sys.executable, "-c", setup], check=True)
    # A full reindex (new chunk size) whose embedder hangs: killed while building the new file.
    crash = textwrap.dedent(
        f"""
        import os, signal, time
        from memlab.chunking import ChunkerConfig
        from memlab.store import MemoryIndex
        from memlab.embed import HashingEmbedder
        class Slow(HashingEmbedder):
            def embed_documents(self, texts):
                print("embedding", flush=True)
                time.sleep(60)
        MemoryIndex({str(small_workspace)!r}, embedder=Slow(dimensions=64), db_path={str(db)!r},
                    chunker=ChunkerConfig("openclaw", 16, 2)).sync()
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", crash], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "embedding"
    proc.kill()
    proc.wait()
    from memlab.embed import HashingEmbedder

    idx = MemoryIndex(small_workspace, embedder=HashingEmbedder(dimensions=64), db_path=db)
    assert idx.stored_fingerprint() == idx.fingerprint()  # the old index, intact
    pos, _ = idx.keyword_search(build_fts_query("a828e60"), 5)
    assert pos.size == 1
    leftovers = list(tmp_path.glob("kill.sqlite.tmp-*"))
    # A killed build may leave its temp file; the next full reindex is unaffected by it.
    idx2 = MemoryIndex(
        small_workspace,
        embedder=HashingEmbedder(dimensions=64),
        db_path=db,
        chunker=ChunkerConfig("openclaw", 16, 2),
    )
    assert idx2.sync().full_reindex
    assert idx2.keyword_search(build_fts_query("a828e60"), 5)[0].size == 1
    del leftovers


def test_sessions_source(tmp_path: Path, hashing) -> None:
    ws = tmp_path / "ws"
    write(ws, "MEMORY.md", "- fact\n")
    write(
        ws,
        "sessions/s1.jsonl",
        '{"role": "user", "content": "Where is the gateway?"}\n'
        "not json\n"
        '{"message": {"role": "assistant", "content": [{"type": "text", "text": "On the\\nMac Studio."}]}}\n'
        '{"role": "system", "content": "ignored"}\n',
    )
    idx = make(ws, hashing, sources=("memory", "sessions"))
    idx.sync()
    con = sqlite3.connect(idx.db_path)
    text = con.execute("SELECT text FROM chunks WHERE source='sessions'").fetchone()[0]
    assert text == "User: Where is the gateway?\nAssistant: On the Mac Studio."


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="fts_tokenizer"):
        MemoryIndex(".", embedder=None, fts_tokenizer="bogus")
    with pytest.raises(ValueError, match="vector_backend"):
        MemoryIndex(".", embedder=None, vector_backend="bogus")


def test_table_loads_in_batches_and_engine_follows_syncs(
    small_workspace: Path, hashing, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.store.table as index_mod

    idx = make(small_workspace, hashing)
    idx.sync()
    whole = idx.table
    engine = idx.vector_engine()
    monkeypatch.setattr(index_mod, "LOAD_BATCH", 2)  # several batches, one snapshot
    again = make(small_workspace, hashing)
    t = again.table
    assert len(t) == len(whole) > 2
    for field in ("rowids", "ids", "paths", "sources", "start_lines", "end_lines", "mtimes"):
        assert list(getattr(t, field)) == list(getattr(whole, field)), field
    np.testing.assert_array_equal(t.vectors, whole.vectors)
    # A sync reloads the table; the engine is rebuilt over the new rows.
    note = "- Zanzibar ferry timetable moved to the blue folder"
    (small_workspace / "memory" / "2026-03-21.md").write_text(note + "\n", encoding="utf-8")
    idx.sync()
    assert idx.vector_engine() is not engine
    pos, _ = idx.vector_search(idx.embed_queries([note]), 1)
    assert idx.table.paths[pos[0, 0]] == "memory/2026-03-21.md"


class _Conn:
    """A connection proxy whose table-loading cursor calls ``hook(batch_number)``."""

    def __init__(self, conn: sqlite3.Connection, hook) -> None:
        self._conn, self._hook = conn, hook

    def __getattr__(self, name: str):
        return getattr(self._conn, name)

    def execute(self, sql: str, *args):
        cur = self._conn.execute(sql, *args)
        return _Cursor(cur, self._hook) if sql.startswith("SELECT c.rowid") else cur


class _Cursor:
    def __init__(self, cur: sqlite3.Cursor, hook) -> None:
        self._cur, self._hook, self._n = cur, hook, 0

    def fetchmany(self, size: int):
        self._n += 1
        self._hook(self._n)
        return self._cur.fetchmany(size)

    def close(self) -> None:
        self._cur.close()


def test_table_load_is_one_snapshot_and_never_pins_the_connection(
    small_workspace: Path, hashing, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memlab.store.table as index_mod

    idx = make(small_workspace, hashing)
    idx.sync()
    n = len(idx.table)
    monkeypatch.setattr(index_mod, "LOAD_BATCH", 1)
    other = sqlite3.connect(idx.db_path)

    deleted: list[int] = []

    def delete_one(batch: int) -> None:
        if batch == 2 and not deleted:  # another connection commits while rows are read
            other.execute("DELETE FROM chunks WHERE rowid = (SELECT max(rowid) FROM chunks)")
            other.commit()
            deleted.append(batch)

    reader = make(small_workspace, hashing)
    reader._conn = _Conn(reader.connect(), delete_one)
    assert len(reader.table) == n  # the snapshot taken before the delete
    assert not reader._conn.in_transaction
    assert reader.refresh() and len(reader.table) == n - 1  # the commit is seen afterwards

    def fail(batch: int) -> None:
        if batch == 2:
            raise KeyboardInterrupt

    broken = make(small_workspace, hashing)
    broken._conn = _Conn(broken.connect(), fail)
    with pytest.raises(KeyboardInterrupt):
        broken.table  # noqa: B018
    assert not broken._conn.in_transaction
    other.execute("DELETE FROM chunks WHERE rowid = (SELECT max(rowid) FROM chunks)")
    other.commit()
    broken._conn = broken._conn._conn
    assert len(broken.table) == n - 2  # not pinned to the snapshot of the failed load
    other.close()


def test_table_with_missing_embeddings(small_workspace: Path, hashing) -> None:
    idx = make(small_workspace, hashing)
    idx.sync()
    con = sqlite3.connect(idx.db_path)
    first = con.execute("SELECT min(rowid) FROM chunks").fetchone()[0]
    con.execute("UPDATE chunks SET embedding = NULL WHERE rowid = ?", (first,))
    con.commit()
    con.close()
    fresh = make(small_workspace, hashing)
    t = fresh.table
    assert t.vectors.shape == (len(t), hashing.dimensions)
    assert not t.vectors[0].any() and t.vectors[1:].any(axis=1).all()
    empty = MemoryIndex(small_workspace, embedder=hashing, db_path=small_workspace / "e.sqlite")
    assert len(empty.table) == 0 and empty.table.vectors is None
    assert empty.vector_search(np.ones((1, hashing.dimensions), dtype=np.float32), 3)[0].shape == (
        1,
        0,
    )


def test_rebuild_reason_says_what_changed_in_words(
    small_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlab.embed import HashingEmbedder
    from memlab.store import describe_fingerprint_change

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    db = tmp_path / "why.sqlite"
    a = MemoryIndex(small_workspace, embedder=HashingEmbedder(dimensions=64), db_path=db)
    assert a.rebuild_reason() == "new index"
    a.sync()
    assert a.rebuild_reason() == ""
    b = MemoryIndex(small_workspace, embedder=None, db_path=db, fts_tokenizer="porter")
    want = (
        "embedder changed from hashing/hashing-64 to none/fts-only;"
        " FTS tokenizer changed from unicode61 to porter"
    )
    assert b.rebuild_reason() == want
    assert describe_fingerprint_change(a.fingerprint(), b.fingerprint()) == want
    r = b.sync()
    assert r.full_reindex and r.reason == f"fingerprint changed: {want}"
    # The default file is named by that identity, so the two never share a file.
    c = MemoryIndex(small_workspace, embedder=None, fts_tokenizer="porter")
    d = MemoryIndex(small_workspace, embedder=None)
    assert c.db_path.parent == d.db_path.parent and c.db_path != d.db_path
    assert c.db_path.name == f"{c.identity}.sqlite" and c.identity.startswith("porter-none-")
    assert not c.db_path.is_relative_to(small_workspace)
