"""The ONNX export of a sentence-transformers folder, cached by the sha256 of its weights.

The export runs once per weights release (it imports torch and sentence-transformers) and
lands in ``memlab.paths.cache_dir("onnx", <sha256 of the weights file>, "model.onnx")``:
a new release of the weights gets a new export, two folders with the same weights share
one. :mod:`memlab.embed.onnx` runs it; :mod:`memlab.embed.onnxint8` quantises it;
:func:`optimized_model_file` keeps onnxruntime's optimised copy beside it, so a fresh
process does not optimise the graph again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from memlab.paths import cache_dir

from .base import EmbeddingError

__all__ = [
    "ONNX_FILE",
    "ONNX_OPSET",
    "export_onnx",
    "onnx_model_file",
    "optimized_model_file",
    "quiet_onnxruntime",
    "weights_sha256",
    "write_graph",
]

ONNX_FILE = "model.onnx"
# Opset 17 is read by every onnxruntime of the last years and by torch's legacy exporter.
ONNX_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_MEMO_FILE = "weights-sha256.json"
# One export per destination at a time in this process (memlab mcp opens a reader and a
# writer embedder; on a cold cache both would export). Other processes are kept safe by
# the unique temp file and the atomic rename: the last rename wins with an equal graph.
_EXPORT_LOCKS: dict[str, threading.Lock] = {}
_EXPORT_LOCKS_GUARD = threading.Lock()


def _export_lock(target: Path) -> threading.Lock:
    with _EXPORT_LOCKS_GUARD:
        return _EXPORT_LOCKS.setdefault(str(target.resolve()), threading.Lock())


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def quiet_onnxruntime() -> None:
    """Call before importing ``onnxruntime``: sets ``ORT_DISABLE_TELEMETRY=1`` unless the
    user set it. Without it, ``import onnxruntime`` (1.32) writes a device id and a
    telemetry database to ``$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime`` —
    outside memlab's cache folder, on every machine that runs a query."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


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
    left to the caller. ``dest`` defaults to :func:`onnx_model_file`. The graph is written
    to a temp file of its own (``tempfile`` in the destination folder) and renamed into
    place, so a reader never sees half a graph and two writers never share a temp file.
    In one process, exports to one destination take turns: a call that waited while
    another one wrote the file returns that file without exporting again. This imports
    torch and sentence-transformers (once per weights release), and needs the ``onnx``
    package (torch's exporter writes through it). Failures raise :class:`EmbeddingError`
    and leave no temp file.
    """
    folder = Path(folder)
    target = Path(dest) if dest is not None else onnx_model_file(folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    before = _mtime(target)
    with _export_lock(target):
        now = _mtime(target)
        if now is not None and now != before:
            return target  # exported by another thread while this one waited
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            write_graph(folder, tmp)
            os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the cache is as readable as before
            os.replace(tmp, target)
        except Exception as exc:
            raise EmbeddingError(
                f"local-onnx: exporting {folder} to ONNX ({target}) failed after 1 attempt: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        finally:
            tmp.unlink(missing_ok=True)
    return target


def write_graph(folder: Path, tmp: Path) -> None:
    """Write the ONNX graph of ``folder``'s transformer to ``tmp`` (the torch step of
    :func:`export_onnx`, which owns the file names and the errors)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
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


def optimized_model_file(graph: str | Path) -> Path | None:
    """onnxruntime's optimised copy of ``graph`` (the fp32 export), made on first call: the
    graph after the fusions of level ``ORT_ENABLE_EXTENDED`` (LayerNorm, Gelu, attention,
    MatMul+Add), saved beside it as ``model-opt-ort<version>.onnx``, rebuilt when the graph
    is newer. A session opens it with optimisation off (``ORT_DISABLE_ALL``): the same
    kernels, the same vectors bit for bit (``tests/test_onnx_embedder.py``), ~40 ms less per
    session (0.16 → 0.12 s on two cores; a cold ``memlab search`` opens one). Level
    ``ENABLE_ALL`` would add only layout changes for convolutions, which this graph has none
    of. None when the copy cannot be made (a
    read-only cache, say): the caller optimises as before.
    """
    import onnxruntime as ort

    graph = Path(graph)
    dest = graph.with_name(f"model-opt-ort{ort.__version__}.onnx")
    with contextlib.suppress(OSError):
        if dest.stat().st_mtime >= graph.stat().st_mtime:
            return dest
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=graph.parent)
    os.close(fd)
    try:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        opts.optimized_model_filepath = name
        ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
        os.replace(name, dest)  # atomic: a reader never sees half a graph
    except Exception:  # never fail a search for an optimisation
        with contextlib.suppress(OSError):
            os.unlink(name)
        return None
    return dest
