"""The light local embedder: a sentence-transformers model run by onnxruntime.

Answering a query with :class:`OnnxEmbedder` imports ``onnxruntime``, ``tokenizers`` and
numpy only, never sentence-transformers, transformers, torch or scikit-learn (their import
alone costs seconds). The ONNX graph is exported once from the model folder's weights (that
one step imports torch and sentence-transformers) and cached under
``memlab.paths.cache_dir("onnx", <sha256 of the weights file>)``, so a new release of the
weights gets a new export and two folders with the same weights share one.

What sentence-transformers computes for a Transformer → mean Pooling (→ Normalize) model is
redone here: word pieces from ``tokenizer.json`` truncated at ``max_seq_length`` (read from
``sentence_bert_config.json``), padded to the batch's longest text; the graph gives the last
hidden states; mean pooling over the attention mask; L2 normalisation in numpy.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlab.paths import cache_dir

from .base import EmbeddingError, check_texts, is_blank, normalize_vectors
from .local import SentenceTransformerEmbedder

__all__ = ["OnnxEmbedder", "export_onnx", "onnx_model_file", "weights_sha256"]

ONNX_FILE = "model.onnx"
# Opset 17 is read by every onnxruntime of the last years and by torch's legacy exporter.
ONNX_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_MEMO_FILE = "weights-sha256.json"


def _weights_file(folder: Path) -> Path:
    for name in _WEIGHT_FILES:
        if (folder / name).is_file():
            return folder / name
    raise EmbeddingError(
        f"local-onnx: no weights file ({' or '.join(_WEIGHT_FILES)}) in {folder} after 1 attempt"
    )


def weights_sha256(folder: str | Path) -> str:
    """sha256 hex of the model folder's weights file (``model.safetensors``, else
    ``pytorch_model.bin``).

    Hashing 90 MB costs ~0.15 s, too much for every cold query, so the digest is memoised in
    ``cache_dir("onnx", "weights-sha256.json")`` keyed by the file's resolved path, size and
    mtime (any rewrite of the file changes the mtime and forces a new hash). A memo that
    cannot be read or written is ignored. Raises :class:`EmbeddingError` when the folder
    holds no weights file.
    """
    path = _weights_file(Path(folder)).resolve()
    st = path.stat()
    stamp = f"{st.st_size}:{st.st_mtime_ns}"
    memo_path = cache_dir("onnx", _MEMO_FILE)
    memo: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    entry = memo.get(str(path)) if isinstance(memo, dict) else None
    if isinstance(entry, dict) and entry.get("stamp") == stamp:
        return str(entry["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    sha = digest.hexdigest()
    memo = memo if isinstance(memo, dict) else {}
    memo[str(path)] = {"stamp": stamp, "sha256": sha}
    with contextlib.suppress(OSError):
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_name(f"{_MEMO_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo, indent=1), encoding="utf-8")
        os.replace(tmp, memo_path)
    return sha


def onnx_model_file(folder: str | Path) -> Path:
    """Where the ONNX export of ``folder``'s weights lives (it may not exist yet):
    ``cache_dir("onnx", weights_sha256(folder), "model.onnx")``."""
    return cache_dir("onnx", weights_sha256(folder), ONNX_FILE)


def export_onnx(folder: str | Path, dest: str | Path | None = None) -> Path:
    """Export the transformer of a sentence-transformers folder to ONNX; returns the file.

    The graph maps ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, [batch, seq],
    both axes dynamic) to ``last_hidden_state`` (float32, [batch, seq, width]); pooling is
    left to the caller. ``dest`` defaults to :func:`onnx_model_file`. The file is written
    next to its destination and renamed into place, so a concurrent reader never sees half
    a graph. This imports torch and sentence-transformers (once per weights release), and
    needs the ``onnx`` package (torch's exporter writes through it). Failures raise
    :class:`EmbeddingError`.
    """
    folder = Path(folder)
    target = Path(dest) if dest is not None else onnx_model_file(folder)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        from sentence_transformers import SentenceTransformer

        from .local import quiet_model_load

        with quiet_model_load():
            st = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        bert = st[0].auto_model.eval()

        class _Hidden(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                out = self.inner(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                )
                return out.last_hidden_state

        # A padded example: traced with an all-ones mask, transformers may drop the mask
        # from the graph altogether, and padded batches would then attend to padding.
        ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.int64)
        mask = (ids != 0).to(torch.int64)
        types = torch.zeros_like(ids)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        axes = {name: {0: "batch", 1: "seq"} for name in (*_INPUTS, "last_hidden_state")}
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer warnings about constant shapes
            torch.onnx.export(
                _Hidden(bert),
                (ids, mask, types),
                str(tmp),
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
        os.replace(tmp, target)
    except Exception as exc:
        raise EmbeddingError(
            f"local-onnx: exporting {folder} to ONNX ({target}) failed after 1 attempt: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return target


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def _check_mean_pooling(folder: Path) -> int:
    """Output width of ``folder`` when its modules are Transformer → mean Pooling (→ Normalize).

    Raises :class:`EmbeddingError` naming the file and the module otherwise: another
    pooling or a Dense layer is not what this embedder computes. A Normalize module or
    none gives the same ranking here: every memlab embedder's output is normalised.
    """
    modules_file = folder / "modules.json"
    try:
        modules = _read_json(modules_file)
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
            raise EmbeddingError(
                f"local-onnx: {modules_file} lists modules {kinds}; only Transformer, Pooling"
                " (mean) and an optional Normalize can run on onnxruntime"
            )
        pooling = _read_json(folder / modules[1]["path"] / "config.json")
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise EmbeddingError(f"local-onnx: cannot read {modules_file}: {exc}") from exc
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True)
    if modes != ["pooling_mode_mean_tokens"]:
        raise EmbeddingError(
            f"local-onnx: pooling of {folder} is {modes}; only pooling_mode_mean_tokens is"
            " implemented on onnxruntime"
        )
    try:
        return int(pooling["word_embedding_dimension"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingError(
            f"local-onnx: no word_embedding_dimension in {folder / modules[1]['path']}"
        ) from exc


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Masked mean over the sequence axis: ``Σ_t h[b,t]·m[b,t] / max(Σ_t m[b,t], 1e-9)``.

    ``hidden`` is [batch, seq, width], ``mask`` [batch, seq] of 0/1; a row whose mask is
    all zero comes out all-zero (the 1e-9 floor is sentence-transformers'). Float32 out.
    """
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * m).sum(axis=1)
    return summed / np.maximum(m.sum(axis=1), 1e-9)


class OnnxEmbedder:
    """Embedder running a sentence-transformers model folder on onnxruntime.

    ``model_path=None`` is the packaged all-MiniLM-L6-v2. ``provider``, ``model`` and
    ``identity_key`` equal those of :class:`SentenceTransformerEmbedder` for the same
    folder: the vectors agree with the torch path to cosine ≥ 0.999 (tests/test_embed_onnx.py
    checks it on short, long, CJK and punctuation texts and top-10 lists on a corpus), so an
    index built by either backend is searched by the other without a reindex. Texts are
    trimmed (as sentence-transformers does), sorted by decreasing length and batched; a
    blank text yields the all-zero vector. The graph is exported on first use when the cache
    has none (:func:`export_onnx`); nothing is loaded at construction.
    """

    provider = "local"
    backend = "onnx"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        threads: int = 2,
        model_name: str | None = None,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        # The torch embedder validates the folder and owns the identity; it loads nothing.
        self._twin = SentenceTransformerEmbedder(model_path, model_name=model_name)
        self.model_path = self._twin.model_path
        self.model = self._twin.model
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._input_names: tuple[str, ...] = ()
        # Concurrent first calls (a server answering several searches) load one session.
        self._lock = threading.Lock()

    @functools.cached_property
    def dimensions(self) -> int:
        """Output width: ``word_embedding_dimension`` of the pooling config (never a model
        load); :class:`EmbeddingError` for a folder this embedder cannot run."""
        return _check_mean_pooling(self.model_path)

    @property
    def identity_key(self) -> str:
        """The torch embedder's identity for the same folder (see the class docstring)."""
        return self._twin.identity_key

    @functools.cached_property
    def max_seq_length(self) -> int:
        """``max_seq_length`` of ``sentence_bert_config.json`` (word pieces, specials included)."""
        cfg_file = self.model_path / "sentence_bert_config.json"
        try:
            return int(_read_json(cfg_file)["max_seq_length"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"local-onnx: no max_seq_length in {cfg_file}: {exc}") from exc

    @property
    def loaded(self) -> bool:
        """Whether the onnxruntime session exists."""
        return self._session is not None

    def _load_tokenizer(self, *, truncate: bool) -> Any:
        try:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: loading {self.model_path / 'tokenizer.json'} failed after 1"
                f" attempt: {type(exc).__name__}: {exc}"
            ) from exc
        # tokenizer.json ships its own settings (here: truncate at 128, pad to 128); the
        # model's max_seq_length and batch-longest padding are what sentence-transformers uses.
        tok.no_padding()
        tok.no_truncation()
        if truncate:
            tok.enable_truncation(max_length=self.max_seq_length)
            pad_id = tok.token_to_id("[PAD]")
            tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        return tok

    def _load(self) -> Any:
        if self._session is not None:
            return self._session
        with self._lock:
            if self._session is None:
                self._open()
        return self._session

    def _open(self) -> None:
        _ = self.dimensions  # refuses a folder this embedder cannot run, before any export
        graph = onnx_model_file(self.model_path)
        if not graph.is_file():
            export_onnx(self.model_path, graph)
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbeddingError(
                "local-onnx: onnxruntime is not installed (pip install onnxruntime)"
            ) from exc
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        try:
            session = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: opening {graph} failed after 1 attempt: {type(exc).__name__}: {exc}"
            ) from exc
        self._tokenizer = self._load_tokenizer(truncate=True)
        self._input_names = tuple(i.name for i in session.get_inputs())
        self._session = session

    def _run(self, texts: list[str]) -> np.ndarray:
        session = self._load()
        encs = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        ids = np.asarray([e.ids for e in encs], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        feeds["token_type_ids"] = np.asarray([e.type_ids for e in encs], dtype=np.int64)
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in self._input_names})
        return mean_pool(hidden[0], mask)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 (len(texts), dimensions); rows unit-norm, blank → 0.

        Each text is trimmed; batches of ``batch_size`` are formed over the texts sorted by
        decreasing length (stable for ties), each padded to its longest text, and rows are
        put back in input order. Raises :class:`EmbeddingError` when the model cannot run.
        """
        items = [t.strip() for t in check_texts(texts, self.provider)]
        keep = [i for i, t in enumerate(items) if not is_blank(t)]
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        if not keep:
            return out
        order = sorted(keep, key=lambda i: -len(items[i]))
        try:
            for s in range(0, len(order), self.batch_size):
                batch = order[s : s + self.batch_size]
                out[batch] = self._run([items[i] for i in batch])
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: encoding with {self.model!r} failed after 1 attempt: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return normalize_vectors(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed several trimmed queries in batches → float32 (len(texts), dimensions)."""
        return self.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed the trimmed query → float32 (dimensions,); all-zero for a blank query."""
        if not isinstance(text, str):
            raise TypeError(f"local: query must be str, got {type(text).__name__}")
        return self.embed_documents([text])[0]

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word-piece count of each text, special tokens ([CLS], [SEP]) included, untruncated."""
        items = check_texts(texts, self.provider)
        if not items:
            return []
        if self._counter is None:
            self._counter = self._load_tokenizer(truncate=False)
        return [len(e.ids) for e in self._counter.encode_batch(items, add_special_tokens=True)]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many texts have more word pieces (with special tokens) than max_seq_length."""
        limit = self.max_seq_length
        return sum(1 for n in self.token_counts(texts) if n > limit)

    def __repr__(self) -> str:
        return (
            f"OnnxEmbedder(model={self.model!r}, path={str(self.model_path)!r}, "
            f"threads={self.threads}, batch_size={self.batch_size}, loaded={self.loaded})"
        )
