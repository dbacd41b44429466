"""PooledEmbedder: windows of word pieces, pooled; a text that fits stays the inner vector."""

from __future__ import annotations

import itertools
import re
from types import SimpleNamespace

import numpy as np
import pytest

from memlab.embed.base import normalize_vectors
from memlab.embed.hashing import HashingEmbedder
from memlab.embed.pooled import PooledEmbedder, piece_windows


class PieceTokenizer:
    """Words split into pieces of at most 3 characters (a stand-in for WordPiece)."""

    def encode(self, text: str, add_special_tokens: bool = False) -> SimpleNamespace:
        assert add_special_tokens is False
        offsets, word_ids = [], []
        for w, m in enumerate(re.finditer(r"\S+", text)):
            for s in range(m.start(), m.end(), 3):
                offsets.append((s, min(s + 3, m.end())))
                word_ids.append(w)
        return SimpleNamespace(offsets=offsets, word_ids=word_ids)


def words(n: int) -> str:
    return " ".join(f"w{i:04d}x" for i in range(n))  # 6 characters: 2 pieces per word


def pooled(**kw: object) -> PooledEmbedder:
    opts = {"window": 12, "overlap": 2, "specials": 2, "tokenizer": PieceTokenizer(), **kw}
    return PooledEmbedder(HashingEmbedder(64), **opts)  # type: ignore[arg-type]


@pytest.mark.parametrize("n,size,overlap", [(1, 4, 0), (10, 4, 1), (37, 8, 3), (100, 10, 0)])
def test_windows_cover_every_piece_within_size(n: int, size: int, overlap: int) -> None:
    ids = list(range(n))  # every piece its own word: no boundary to respect
    spans = piece_windows(ids, size, overlap)
    covered = np.zeros(n, dtype=int)
    for s, e in spans:
        assert 0 < e - s <= size
        covered[s:e] += 1
    assert covered.min() >= 1
    assert spans[0][0] == 0 and spans[-1][1] == n
    for (_, e0), (s1, _) in itertools.pairwise(spans):
        assert s1 == e0 - overlap  # consecutive windows share exactly `overlap` pieces


def test_windows_do_not_cut_words() -> None:
    ids = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]  # 3 pieces per word
    spans = piece_windows(ids, 4, 0)
    assert spans == [(0, 3), (3, 6), (6, 10)]  # the last window fits whole words
    # A word longer than the window is cut (else no progress).
    assert piece_windows([0] * 7, 3, 0) == [(0, 3), (3, 6), (6, 7)]


def test_windows_edges_and_errors() -> None:
    assert piece_windows([], 4, 0) == []
    assert piece_windows([0, 1, 2], 3, 2) == [(0, 3)]
    with pytest.raises(ValueError, match="overlap"):
        piece_windows([0], 3, 3)
    with pytest.raises(ValueError, match="window size"):
        piece_windows([0], 0, 0)


def test_short_text_is_exactly_the_inner_vector() -> None:
    e = pooled()
    text = words(5)  # 10 pieces = window − specials
    assert e.windows(text) == [text]
    assert np.array_equal(e.embed_documents([text])[0], e.inner.embed_documents([text])[0])


@pytest.mark.parametrize("mode", ["mean", "max"])
def test_long_text_is_the_normalised_pool_of_its_windows(mode: str) -> None:
    e = pooled(pooling=mode)
    text = words(40)
    wins = e.windows(text)
    assert len(wins) > 3
    got = e.embed_documents([text, "", words(2)])
    assert np.allclose(np.linalg.norm(got[0]), 1.0, atol=1e-6)
    assert not got[1].any()  # blank stays zero
    inner = e.inner.embed_documents(wins)
    pool = inner.mean(axis=0) if mode == "mean" else inner.max(axis=0)
    assert np.allclose(got[0], normalize_vectors(pool), atol=1e-6)
    assert not np.allclose(got[0], e.inner.embed_documents([text])[0], atol=1e-3)


def test_windows_hold_every_word_and_respect_the_limit() -> None:
    e = pooled()
    text = words(33)
    wins = e.windows(text)
    assert {w for win in wins for w in win.split()} == set(text.split())
    for win in wins:
        assert len(PieceTokenizer().encode(win).offsets) <= 12 - 2


def test_max_windows_keeps_the_first_windows() -> None:
    full, capped = pooled(), pooled(max_windows=2)
    text = words(40)
    assert capped.windows(text) == full.windows(text)[:2]
    inner = capped.inner.embed_documents(full.windows(text)[:2])
    want = normalize_vectors(inner.mean(axis=0))
    assert np.allclose(capped.embed_documents([text])[0], want, atol=1e-6)
    with pytest.raises(ValueError, match="max_windows"):
        pooled(max_windows=0)


def test_identity_names_the_pooling() -> None:
    keys = {
        pooled(max_windows=2).identity_key,
        pooled().identity_key,
        pooled(pooling="max").identity_key,
        pooled(overlap=0).identity_key,
        pooled(window=20).identity_key,
        HashingEmbedder(64).identity_key,
    }
    assert len(keys) == 6
    assert pooled().identity_key == pooled().identity_key
    assert "mean-pool" in pooled().model


def test_query_is_one_window() -> None:
    e = pooled()
    q = words(40)
    assert np.array_equal(e.embed_query(q), e.inner.embed_query(q))
    assert np.array_equal(e.embed_queries([q])[0], e.inner.embed_query(q))
    assert e.count_truncated([q]) == 0


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="pooling"):
        pooled(pooling="sum")
    with pytest.raises(ValueError, match="overlap"):
        pooled(overlap=10)
    with pytest.raises(ValueError, match="window"):
        pooled(window=2)


@pytest.mark.model
def test_packaged_model_windows_fit_256_pieces() -> None:
    from memlab.embed.onnx import OnnxEmbedder

    inner = OnnxEmbedder()
    e = PooledEmbedder(inner)
    short = "the gateway runs on the mini pc in the hall"
    assert np.array_equal(e.embed_documents([short])[0], inner.embed_documents([short])[0])
    long = " ".join(f"topic{i} detail" for i in range(300))
    wins = e.windows(long)
    assert len(wins) >= 3
    assert max(inner.token_counts(wins)) <= 256
    v = e.embed_documents([long])[0]
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_load_word_pieces_names_provider_and_file(tmp_path: object) -> None:
    """The one tokenizer loader (onnx, pooled, benchmarks): a missing tokenizer.json is an
    EmbeddingError naming the provider and the path."""
    from memlab.embed.base import EmbeddingError, load_word_pieces

    with pytest.raises(
        EmbeddingError, match=r"^pooled: loading .*tokenizer\.json failed after 1 attempt"
    ):
        load_word_pieces(tmp_path, "pooled")
