"""Length-sorted batching, sessions, threads and the int8 variant of memlab.embed.onnx."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from memlab.config.vocab import LOCAL_BACKENDS
from memlab.embed import SentenceTransformerEmbedder, resolve_embedder
from memlab.embed.onnx import OnnxEmbedder, onnx_model_file
from memlab.embed.onnxint8 import QUANT_RECIPE, quantized_model_file

# Lengths from 1 to ~400 word pieces, in no order: several batches of 3 mix them.
MIXED = [
    "short",
    "The quick brown fox jumps over the lazy dog. " * 30,  # truncated at 256
    "What did we decide about the Postgres migration last week?",
    "",
    "deploy key rotated on apollo; backups moved to hermes " * 6,
    "東京は日本の首都です。",
    "x y",
    "   ",
    "ticket ENG-4821 fixed in commit 9f3c2ab " * 3,
    "a much longer note about the gateway, its port 8443 and the TLS certificate " * 2,
]


class FakeSession:
    """Stands in for an onnxruntime session: the hidden state of token t is a fixed
    function of its id, so a text's pooled vector depends on its own word pieces only.
    Records the shape of every batch."""

    def __init__(self, delay: float = 0.0) -> None:
        self.shapes: list[tuple[int, int]] = []
        self.lengths: list[list[int]] = []
        self.threads: set[int] = set()
        self.delay = delay

    def run(self, _outputs: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        ids, mask = feeds["input_ids"], feeds["attention_mask"]
        self.shapes.append(ids.shape)
        self.lengths.append(mask.sum(axis=1).tolist())
        self.threads.add(threading.get_ident())
        time.sleep(self.delay)
        k = np.arange(1, 385, dtype=np.float64)
        return [np.sin(ids[:, :, None] * k / 97.0).astype(np.float32)]


def fake(emb: OnnxEmbedder, sessions: list[FakeSession]) -> OnnxEmbedder:
    emb._pool = list(sessions)
    emb.auto_sessions = False  # run on exactly these sessions, open no real one
    emb._tokenizer = emb._load_tokenizer(truncate=True)
    emb._input_names = ("input_ids", "attention_mask", "token_type_ids")
    return emb


def test_length_sorted_batches_come_back_in_input_order() -> None:
    s = FakeSession()
    emb = fake(OnnxEmbedder(batch_size=3), [s])
    batched = emb.embed_documents(MIXED)
    assert len(s.shapes) == 3  # 8 non-blank texts in batches of 3
    # each batch is padded to its own longest text, and batches go longest first
    assert [w for _, w in s.shapes] == [max(n) for n in s.lengths]
    flat = [n for b in s.lengths for n in b]
    assert flat == sorted(flat, reverse=True)
    assert max(flat) == 256  # truncated at max_seq_length
    one = np.stack([emb.embed_query(t) for t in MIXED])
    blank = np.array([not t.strip() for t in MIXED])
    assert not batched[blank].any() and not one[blank].any()
    cos = (batched * one).sum(axis=1)[~blank]
    assert cos.min() >= 0.9999, cos
    # and the rows are not all the same vector (the check above could not fail then)
    assert float(batched[0] @ batched[1]) < 0.99


def test_two_sessions_share_the_batches_and_agree() -> None:
    one = fake(OnnxEmbedder(batch_size=2), [FakeSession()]).embed_documents(MIXED)
    a, b = FakeSession(delay=0.02), FakeSession(delay=0.02)
    emb = fake(OnnxEmbedder(batch_size=2, threads=2, sessions=2), [a, b])
    two = emb.embed_documents(MIXED)
    np.testing.assert_array_equal(one, two)
    assert a.shapes and b.shapes  # both sessions ran batches
    assert len(a.shapes) + len(b.shapes) == 4
    assert len(a.threads | b.threads) == 2  # from two threads


def test_int8_has_its_own_identity_and_model_name() -> None:
    fp32, int8 = OnnxEmbedder(), OnnxEmbedder(precision="int8")
    torch_path = SentenceTransformerEmbedder()
    assert fp32.identity_key == torch_path.identity_key
    assert int8.identity_key != fp32.identity_key
    assert int8.identity_key == OnnxEmbedder(precision="int8", sessions=2).identity_key
    assert (int8.model, int8.backend, fp32.backend) == (
        "all-MiniLM-L6-v2-int8",
        "onnx-int8",
        "onnx",
    )
    assert "onnx-int8" in LOCAL_BACKENDS
    emb = resolve_embedder("local", backend="onnx-int8")
    assert isinstance(emb, OnnxEmbedder) and emb.precision == "int8" and not emb.loaded


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sessions": 3, "threads": 2}, "cannot exceed threads"),
        ({"sessions": 0}, "sessions must be a positive integer"),
        ({"precision": "fp16"}, "precision must be one of fp32, int8"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OnnxEmbedder(**kwargs)


def test_lab_cli_takes_the_backend() -> None:
    from memlab.cli import build_parser

    args = build_parser().parse_args(["eval", "locomo", "--local-backend", "onnx-int8"])
    assert args.local_backend == "onnx-int8"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "locomo", "--local-backend", "tensorrt"])


# ------------------------------------------------------------ the model


@pytest.mark.model
@pytest.mark.parametrize(("threads", "sessions"), [(2, 1), (2, 2), (1, 1)])
def test_threads_setting_is_honoured(threads: int, sessions: int) -> None:
    emb = OnnxEmbedder(threads=threads, sessions=sessions)
    emb.embed_query("warm up")
    assert len(emb._pool) == sessions
    for s in emb._pool:
        opts = s.get_session_options()
        assert opts.intra_op_num_threads == threads // sessions
        assert opts.inter_op_num_threads == 1


@pytest.mark.model
def test_real_model_batched_equals_one_at_a_time() -> None:
    emb = OnnxEmbedder(batch_size=3, sessions=2)
    batched = emb.embed_documents(MIXED)
    for i, t in enumerate(MIXED):
        if t.strip():
            assert float(emb.embed_query(t) @ batched[i]) >= 0.9999, t


@pytest.mark.model
def test_int8_is_quantised_once_and_stays_close_to_fp32() -> None:
    fp32 = OnnxEmbedder()
    a = fp32.embed_documents(MIXED)
    graph = quantized_model_file(onnx_model_file(fp32.model_path))
    assert graph.parent == onnx_model_file(fp32.model_path).parent
    assert QUANT_RECIPE in graph.name
    stamp = graph.stat().st_mtime_ns
    int8 = OnnxEmbedder(precision="int8")
    b = int8.embed_documents(MIXED)
    assert int8.graph_file() == graph and graph.stat().st_mtime_ns == stamp  # reused
    # MatMul weights shrink to a quarter, the 47 MB of embeddings stay fp32: 90 → ~59 MB
    assert graph.stat().st_size < 0.7 * Path(onnx_model_file(fp32.model_path)).stat().st_size
    keep = np.array([bool(t.strip()) for t in MIXED])
    cos = (a * b).sum(axis=1)[keep]
    assert cos.min() >= 0.95, cos
    assert cos.max() < 0.99999  # other vectors: hence the other identity
