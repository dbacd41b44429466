"""The light local embedder: a sentence-transformers model run by onnxruntime.

Answering a query with :class:`OnnxEmbedder` imports ``onnxruntime``, ``tokenizers`` and
numpy only, never sentence-transformers, transformers, torch or scikit-learn (their import
alone costs seconds). The ONNX graph is exported once from the model folder's weights (that
one step imports torch and sentence-transformers) and cached under
``memlab.paths.cache_dir("onnx", <sha256 of the weights file>)``, so a new release of the
weights gets a new export and two folders with the same weights share one.

What sentence-transformers computes for a Transformer → mean Pooling (→ Normalize) model is
redone here: word pieces from ``tokenizer.json`` truncated at ``max_seq_length`` (read from
``sentence_bert_config.json``), sorted by word-piece count and padded to each batch's
longest text; the graph gives the last hidden states; mean pooling over the attention mask;
L2 normalisation in numpy. The export is :mod:`memlab.embed.onnxexport`, the int8 variant
:mod:`memlab.embed.onnxint8`.

Size: one class, :class:`OnnxEmbedder`, whose parts together redo one sentence-transformers
forward pass: loading (``_load``, ``_sessions``), batching by word-piece count
(``embed_documents``, ``_run_parallel``), ``mean_pool`` and the check
``_check_mean_pooling``; the export and the int8 graph already live apart.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlab.config.vocab import ONNX_PRECISIONS

from .base import (
    EmbeddingError,
    check_texts,
    identity_digest,
    is_blank,
    load_word_pieces,
    normalize_vectors,
)
from .local import SentenceTransformerEmbedder
from .onnxexport import (
    ONNX_FILE,
    ONNX_OPSET,
    export_onnx,
    onnx_model_file,
    optimized_model_file,
    quiet_onnxruntime,
    weights_sha256,
)

# The export helpers live in memlab.embed.onnxexport; their names stay importable here.
__all__ = [
    "ONNX_FILE",
    "ONNX_OPSET",
    "PRECISIONS",
    "OnnxEmbedder",
    "export_onnx",
    "mean_pool",
    "onnx_model_file",
    "weights_sha256",
]

# The allowed precisions are memlab.config.vocab's; the name PRECISIONS stays importable here.
PRECISIONS = ONNX_PRECISIONS


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

    ``model_path=None`` is the packaged all-MiniLM-L6-v2. With ``precision="fp32"`` (backend
    ``onnx``) ``provider``, ``model`` and ``identity_key`` equal those of
    :class:`SentenceTransformerEmbedder` for the same folder: the vectors agree with the torch
    path to cosine ≥ 0.999 (tests/test_embed_onnx.py checks it on short, long, CJK and
    punctuation texts and top-10 lists on a corpus), so an index built by either backend is
    searched by the other without a reindex. ``precision="int8"`` (backend ``onnx-int8``)
    runs the dynamically quantised graph of :mod:`memlab.embed.onnxint8`: other vectors, so
    another ``model`` name (``…-int8``) and identity key, hence its own index.

    Texts are trimmed (as sentence-transformers does), tokenised once, sorted by decreasing
    word-piece count and cut into batches of ``batch_size``, each padded only to its own
    longest text; rows are put back in input order and a blank text yields the all-zero
    vector. ``threads`` cores are used either by one session with ``threads`` intra-op
    threads (``sessions=1``) or by ``sessions`` sessions of ``threads // sessions`` threads
    each running different batches at once. ``sessions=None`` (the default) is ``threads``
    sessions of one thread, opened as calls need them (``auto_sessions``): a call whose
    texts fit one batch (a query) runs on one session of one thread, the faster setting
    for one text, and only that session is loaded; a call of several batches (indexing)
    opens the rest and spreads its batches over them (2 sessions × 1 thread index
    1,600-char chunks at 1.05× torch, one 2-thread session at 0.92×:
    benchmarks/results/embed_throughput.json). The thread count changes the vectors by
    float rounding at most (same graph; tests/test_server_query_threads.py). An explicit ``sessions`` opens all its sessions on
    first use. The graph is exported on first use when the cache has none
    (:func:`export_onnx`); nothing is loaded at construction.
    """

    provider = "local"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        threads: int = 2,
        sessions: int | None = None,
        precision: str = "fp32",
        model_name: str | None = None,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        # None: one single-thread session per thread, opened as calls need them
        self.auto_sessions = sessions is None
        sessions = threads if sessions is None else sessions
        if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 1:
            raise ValueError(f"sessions must be a positive integer, got {sessions!r}")
        if sessions > threads:
            raise ValueError(f"sessions ({sessions}) cannot exceed threads ({threads})")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
        # The torch embedder validates the folder and owns the identity; it loads nothing.
        self._twin = SentenceTransformerEmbedder(model_path, model_name=model_name)
        self.model_path = self._twin.model_path
        self.precision = precision
        self.backend = "onnx" if precision == "fp32" else f"onnx-{precision}"
        self.model = self._twin.model if precision == "fp32" else f"{self._twin.model}-{precision}"
        self.batch_size = batch_size
        self.threads = threads
        self.sessions = sessions
        self._pool: list[Any] = []
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

    @functools.cached_property
    def identity_key(self) -> str:
        """fp32: the torch embedder's identity for the same folder (see the class docstring);
        int8: sha256 of that identity, the precision and the quantisation recipe, so an int8
        index never mixes with an fp32 one."""
        if self.precision == "fp32":
            return self._twin.identity_key
        from .onnxint8 import QUANT_RECIPE

        return identity_digest(
            {"base": self._twin.identity_key, "precision": self.precision, "recipe": QUANT_RECIPE}
        )

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
        """Whether the onnxruntime session(s) exist."""
        return bool(self._pool)

    def _load_tokenizer(self, *, truncate: bool) -> Any:
        # tokenizer.json ships its own settings (here: truncate at 128, pad to 128); the
        # model's max_seq_length is what sentence-transformers uses, and padding is done per
        # batch in numpy (to the batch's longest text) after sorting by length.
        return load_word_pieces(
            self.model_path, "local-onnx", max_length=self.max_seq_length if truncate else None
        )

    def _load(self, needed: int | None = None) -> list[Any]:
        """The session pool, with at least ``needed`` sessions (None: all ``sessions``);
        sessions open on first need only with ``auto_sessions``, all at once otherwise."""
        want = self.sessions if needed is None or not self.auto_sessions else needed
        want = min(max(want, 1), self.sessions)
        if self._pool and (len(self._pool) >= want or not self.auto_sessions):
            return self._pool
        with self._lock:
            if not self._pool:
                self._open(want)
            elif len(self._pool) < want:
                # more sessions of the same graph and settings; the list is replaced, not
                # appended to, so a concurrent call iterating the old one is not disturbed
                self._pool = [
                    *self._pool,
                    *self._sessions(self.graph_file(), want - len(self._pool)),
                ]
        return self._pool

    def graph_file(self) -> Path:
        """The ONNX file this embedder runs, made on first call when missing: the fp32 export
        (:func:`export_onnx`) or, for int8, its quantised copy (:mod:`memlab.embed.onnxint8`)."""
        graph = onnx_model_file(self.model_path)
        if not graph.is_file():
            export_onnx(self.model_path, graph)
        if self.precision == "int8":
            from .onnxint8 import quantized_model_file

            graph = quantized_model_file(graph)
        return graph

    def _open(self, count: int | None = None) -> None:
        _ = self.dimensions  # refuses a folder this embedder cannot run, before any export
        graph = self.graph_file()
        pool = self._sessions(graph, self.sessions if count is None else count)
        self._tokenizer = self._load_tokenizer(truncate=True)
        self._input_names = tuple(i.name for i in pool[0].get_inputs())
        self._pool = pool

    def _sessions(self, graph: Path, count: int) -> list[Any]:
        """``count`` onnxruntime sessions of ``graph``, ``threads // sessions`` intra-op
        threads each."""
        quiet_onnxruntime()
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbeddingError(
                "local-onnx: onnxruntime is not installed (pip install onnxruntime)"
            ) from exc
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, self.threads // self.sessions)
        opts.inter_op_num_threads = 1
        # Constant folding and the fusions onnxruntime knows for this graph (LayerNorm,
        # Gelu, MatMul+Add); the default level, stated so a changed default cannot slip in.
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        optimized = optimized_model_file(graph) if self.precision == "fp32" else None
        if optimized is not None:  # those fusions already made, saved once
            graph = optimized
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        pool = []
        try:
            for _ in range(count):
                pool.append(
                    ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
                )
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: opening {graph} failed after 1 attempt: {type(exc).__name__}: {exc}"
            ) from exc
        return pool

    def _run(self, session: Any, encs: Sequence[Any]) -> np.ndarray:
        """Mean-pooled rows of one batch of encodings, padded to the batch's longest."""
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)  # [PAD] is id 0 in BERT vocabularies
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = session.run(None, {k: v for k, v in feeds.items() if k in self._input_names})
        return mean_pool(hidden[0], mask)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 (len(texts), dimensions); rows unit-norm, blank → 0.

        Each text is trimmed and tokenised once (truncated at ``max_seq_length``); batches
        of ``batch_size`` are formed over the texts sorted by decreasing word-piece count
        (stable for ties), each padded to its longest text, and rows are put back in input
        order. With ``sessions`` > 1 the batches run on the sessions concurrently
        (onnxruntime releases the GIL); with ``auto_sessions`` a call of one batch opens
        and uses one session only. Raises :class:`EmbeddingError` when the model
        cannot run.
        """
        items = [t.strip() for t in check_texts(texts, self.provider)]
        keep = [i for i, t in enumerate(items) if not is_blank(t)]
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        if not keep:
            return out
        try:
            # one session for a call of one batch (a query), every session for more
            pool = self._load(1 if len(keep) <= self.batch_size else None)
            encs = self._tokenizer.encode_batch([items[i] for i in keep], add_special_tokens=True)
            order = sorted(range(len(keep)), key=lambda j: -len(encs[j].ids))
            batches = [
                order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)
            ]
            rows = np.asarray(keep)
            if len(pool) == 1 or len(batches) == 1:
                for b in batches:
                    out[rows[b]] = self._run(pool[0], [encs[j] for j in b])
            else:
                self._run_parallel(pool, batches, encs, rows, out)
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: encoding with {self.model!r} failed after 1 attempt: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return normalize_vectors(out)

    def _run_parallel(
        self,
        pool: list[Any],
        batches: list[list[int]],
        encs: Sequence[Any],
        rows: np.ndarray,
        out: np.ndarray,
    ) -> None:
        # One worker per session, each taking the next batch: a session runs one batch at a
        # time, and the long batches (sorted first) are spread over both.
        import queue
        from concurrent.futures import ThreadPoolExecutor

        free: queue.Queue[Any] = queue.Queue()
        for s in pool:
            free.put(s)

        def work(b: list[int]) -> None:
            session = free.get()
            try:
                out[rows[b]] = self._run(session, [encs[j] for j in b])
            finally:
                free.put(session)

        with ThreadPoolExecutor(max_workers=len(pool)) as ex:
            for f in [ex.submit(work, b) for b in batches]:
                f.result()

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
            f"precision={self.precision!r}, threads={self.threads}, sessions={self.sessions},"
            f" batch_size={self.batch_size}, loaded={self.loaded})"
        )
