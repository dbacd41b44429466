"""The int8 variant of the ONNX export: dynamic quantisation with onnxruntime.quantization.

The weights of every MatMul are stored as int8 (one scale per output column, symmetric),
and onnxruntime quantises the activations to uint8 per batch at run time (dynamic
quantisation: no calibration data). The token, position and type embeddings, LayerNorm
and the attention softmax stay float32. The quantised file is made once from the fp32
export (:func:`memlab.embed.onnx.export_onnx`) and cached beside it, in the folder named
by the weights' sha256, under a name that carries :data:`QUANT_RECIPE`; a new recipe
gets a new file and, through :attr:`memlab.embed.onnx.OnnxEmbedder.identity_key`, a new
index. Needs the ``onnx`` package (the quantiser reads and writes the graph with it).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .base import EmbeddingError
from .onnxexport import quiet_onnxruntime

__all__ = ["QUANT_RECIPE", "quantize_onnx", "quantized_model_file"]

# Everything that changes the quantised weights; part of the int8 identity key.
QUANT_RECIPE = "dynamic-int8-matmul-per-channel-v1"


def quantized_model_file(fp32_graph: str | Path) -> Path:
    """The int8 copy of ``fp32_graph`` (``model-int8-<recipe>.onnx`` in the same folder),
    quantised by :func:`quantize_onnx` on the first call when it does not exist yet."""
    src = Path(fp32_graph)
    dest = src.with_name(f"model-int8-{QUANT_RECIPE}.onnx")
    if not dest.is_file():
        quantize_onnx(src, dest)
    return dest


def quantize_onnx(src: str | Path, dest: str | Path) -> Path:
    """Write the dynamically quantised copy of ``src`` to ``dest`` and return ``dest``.

    MatMul weights → int8 per output channel (``w ≈ scale_c · q``, ``q ∈ [-127, 127]``);
    activations are quantised to uint8 at run time. The file is written next to ``dest``
    and renamed into place, so a concurrent reader never sees half a graph. Failures
    (no ``onnx`` package, an unreadable graph) raise :class:`EmbeddingError` naming both
    files.
    """
    src, dest = Path(src), Path(dest)
    # a temp file of its own (two embedders of one process may quantise at once); the
    # rename is atomic, the last one wins with an equal graph
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        import logging

        quiet_onnxruntime()
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # The quantiser logs a "consider pre-processing" advice on every call.
        quiet = logging.getLogger()
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            quantize_dynamic(
                str(src),
                str(tmp),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
            )
        finally:
            quiet.setLevel(level)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600
        os.replace(tmp, dest)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise EmbeddingError(
            f"local-onnx-int8: quantising {src} to {dest} failed after 1 attempt: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return dest
