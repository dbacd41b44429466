"""StaticModelEmbedder: memlab's wrapper around tokenlearn-static-model, tested against a
fake ``static_model`` module (always runs); one test uses the real package when installed."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from memlab.embed.base import EmbeddingError
from memlab.embed.static import MAX_TOKENS, StaticModelEmbedder

DIM = 4


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str], int]]:
    """A fake ``static_model`` package: one vector per text from its words (bag of
    letters a–d), unnormalised; records every ``encode_batch`` call."""
    calls: list[tuple[str, list[str], int]] = []
    pkg = tmp_path / "static_model"
    (pkg / "model").mkdir(parents=True)
    mod = types.ModuleType("static_model")
    mod.__file__ = str(pkg / "__init__.py")

    def encode_batch(model_dir: str, texts: list[str], max_tokens: int) -> list[list[float]]:
        calls.append((model_dir, list(texts), max_tokens))
        return [[float(t.count(c)) + 0.5 for c in "abcd"] for t in texts]

    def ensure_model_ready(path: Path) -> Path:
        assert path == pkg / "model"
        return path

    mod.encode_batch = encode_batch  # type: ignore[attr-defined]
    mod.ensure_model_ready = ensure_model_ready  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "static_model", mod)
    return calls


def test_wrapper_trims_skips_blanks_and_normalises(fake: list) -> None:
    e = StaticModelEmbedder()
    assert e.dimensions == DIM
    v = e.embed_documents(["  abba  ", "   ", "cd"])
    assert v.shape == (3, DIM) and v.dtype == np.float32
    want = np.array([2.5, 2.5, 0.5, 0.5]) / np.linalg.norm([2.5, 2.5, 0.5, 0.5])
    assert np.allclose(v[0], want, atol=1e-6)
    assert not v[1].any()  # blank → zero vector, never sent to the model
    assert np.allclose(np.linalg.norm(v[[0, 2]], axis=1), 1.0, atol=1e-6)
    model_dir, texts, max_tokens = fake[-1]
    assert texts == ["abba", "cd"] and max_tokens == MAX_TOKENS
    assert model_dir.endswith("static_model/model")
    # queries are embedded as documents (symmetric), trimmed alike
    assert np.array_equal(e.embed_query(" abba"), v[0])
    assert np.array_equal(e.embed_queries(["cd "]), v[[2]])
    assert e.count_truncated(["abba"]) == 0


def test_wrapper_all_blank_does_not_call_the_model(fake: list) -> None:
    e = StaticModelEmbedder()
    _ = e.dimensions
    before = len(fake)
    assert not e.embed_documents(["", " \n"]).any()
    assert len(fake) == before
    with pytest.raises(TypeError):
        e.embed_documents("not a list")


def test_identity_names_provider_model_and_version(fake: list) -> None:
    from memlab.embed.hashing import HashingEmbedder

    a, b = StaticModelEmbedder(), StaticModelEmbedder()
    assert a.identity_key == b.identity_key != HashingEmbedder(DIM).identity_key
    assert len(a.identity_key) == 64 and int(a.identity_key, 16) >= 0


def test_missing_package_is_an_embedding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "static_model", None)  # import raises ImportError
    with pytest.raises(EmbeddingError, match="tokenlearn-static-model"):
        StaticModelEmbedder()
