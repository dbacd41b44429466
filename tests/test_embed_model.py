"""The packaged all-MiniLM-L6-v2 model through SentenceTransformerEmbedder (loads the model)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memlab.embed import EmbeddingError, SentenceTransformerEmbedder, resolve_embedder

pytestmark = pytest.mark.model
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    emb = SentenceTransformerEmbedder(batch_size=4, show_progress=False)
    emb.embed_query("warm up")
    return emb


def test_loads_offline_in_clean_environment() -> None:
    """Without any HF_* variable set by the caller (conftest sets them for this process), the
    embedder forces offline mode itself; a hub endpoint that refuses connections proves that
    nothing is fetched."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HF_ENDPOINT"] = "http://127.0.0.1:9"
    code = textwrap.dedent(
        """
        import os
        from memlab.embed import SentenceTransformerEmbedder
        v = SentenceTransformerEmbedder(show_progress=False).embed_query("offline check")
        print(v.shape[0], os.environ["HF_HUB_OFFLINE"], os.environ["TRANSFORMERS_OFFLINE"])
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["384", "1", "1"]


def test_expected_shape(model: SentenceTransformerEmbedder) -> None:
    assert model.loaded
    assert (model.provider, model.model, model.dimensions) == ("local", "all-MiniLM-L6-v2", 384)
    assert model.max_seq_length == 256


def test_semantic_similarity(model: SentenceTransformerEmbedder) -> None:
    cat, kitten, tax = model.embed_documents(
        [
            "the cat sat on the mat",
            "a kitten was sitting on the rug",
            "quarterly tax filing deadline",
        ]
    )
    assert cat @ kitten > cat @ tax + 0.2
    np.testing.assert_allclose(np.linalg.norm([cat, kitten, tax], axis=1), 1.0, atol=1e-5)


def test_query_matches_document_embedding(model: SentenceTransformerEmbedder) -> None:
    q = model.embed_query("  where did the cat sit?\n")
    assert q.shape == (384,) and q.dtype == np.float32
    np.testing.assert_allclose(q, model.embed_documents(["where did the cat sit?"])[0], atol=1e-5)
    assert not model.embed_query(" \t ").any(), "a blank query embeds to the zero vector"


def test_order_preserved_under_length_sorted_batches(model: SentenceTransformerEmbedder) -> None:
    texts = [
        "short",
        "a considerably longer sentence about the weekly planning meeting with the team " * 3,
        "",
        "medium length note about groceries",
        "x",
        "the longest one " * 20,
        "another medium sentence on travel plans to Lisbon",
    ]
    together = model.embed_documents(texts)
    assert together.shape == (len(texts), 384)
    assert not together[2].any()
    for i, text in enumerate(texts):
        if text:
            alone = model.embed_documents([text])[0]
            # Padding inside a batch changes the last bits only.
            np.testing.assert_allclose(together[i], alone, atol=2e-4)
    # Distinct inputs stay distinct rows (a shuffled restore would fail the loop above too).
    assert together[0] @ together[4] < 0.99


def test_count_truncated(model: SentenceTransformerEmbedder) -> None:
    long_text = "memory " * 430  # 3010 characters, ~430 word pieces > 256
    assert len(long_text) > 3000
    counts = model.token_counts([long_text, "a short note"])
    assert counts[0] > 256 and counts[1] == 5  # [CLS] a short note [SEP]
    assert model.count_truncated([long_text, "a short note"]) == 1
    assert model.count_truncated(["a short note"]) == 0
    assert model.count_truncated([]) == 0
    # Exactly at the limit is not truncated; one word piece more is.
    at_limit = " ".join(["cat"] * 254)
    assert model.token_counts([at_limit]) == [256]
    assert model.count_truncated([at_limit, at_limit + " cat"]) == 1


def test_resolve_auto_gives_packaged_model() -> None:
    emb = resolve_embedder("auto", backend="torch")
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.model == "all-MiniLM-L6-v2"


def test_broken_model_folder_raises_embedding_error(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text("[]", encoding="utf-8")
    emb = SentenceTransformerEmbedder(tmp_path)
    with pytest.raises(EmbeddingError, match=r"^local: .* failed after 1 attempt"):
        emb.embed_documents(["hello"])


def test_packaged_identity_does_not_depend_on_where_it_is_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two checkouts (two virtualenvs) of the same model release share cached vectors."""
    import shutil

    import memlab.embed.local as local

    here = SentenceTransformerEmbedder()
    copy = tmp_path / "elsewhere" / "model"
    shutil.copytree(local.packaged_model_path(), copy)
    monkeypatch.setattr(local, "packaged_model_path", lambda: copy)
    there = SentenceTransformerEmbedder()
    assert there.model_path == copy and there.identity_key == here.identity_key
    # Any other folder is identified by its path.
    other = SentenceTransformerEmbedder(copy, model_name=here.model)
    monkeypatch.setattr(local, "packaged_model_path", lambda: tmp_path / "nothing")
    assert other.identity_key != here.identity_key
