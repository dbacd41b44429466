"""A preset file: a tuned setting saved as JSON, read back to the very same system.

The route for any setting OpenClaw's config cannot express (``memlab export --target mcp``
writes one; ``memlab search``, ``eval``, ``sweep`` and ``mcp`` read it with
``--preset-file``). The format, read and written here only::

    {
      "format": "memlab-preset/1",
      "memlab_version": "0.1.0",
      "name": "memlab-best",                 # the system's name in tables and memory_status
      "base": "memlab-best",                 # the preset it starts from (memlab.pipeline.presets)
      "parameters": {...},                   # every Pipeline parameter (get_params), name aside
      "index": {                             # what the index must be for the same ranking
        "fts_tokenizer": "porter",           # the FTS5 tokenizer (null: the index's own)
        "memory_files": "openclaw-2026.4",   # the memory-file rule
        "chunker": {"kind": "openclaw", "tokens": 400, "overlap": 80},
        "embedder": {"provider": "local", "model": "all-MiniLM-L6-v2"}
      },
      "source": "memlab export --preset memlab-best"   # where the setting came from
    }

Reading is as strict as ``--set``: an unknown key anywhere, or a parameter no `Pipeline`
has, is an error naming it with the nearest valid name (``memlab.errors.nearest_name``);
a bad value is the pipeline's own message. Every parameter is stored, so the system read
back equals the one written whatever later versions change in a preset's defaults
(``preset(base, **parameters)``; JSON arrays become the tuples the parameters hold).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.errors import nearest_name

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline

__all__ = [
    "FORMAT",
    "PresetFile",
    "parse_preset_file",
    "preset_file_data",
    "read_preset_file",
    "write_preset_file",
]

FORMAT = "memlab-preset/1"
# The keys of each object of the format, in the order they are written.
TOP_KEYS = ("format", "memlab_version", "name", "base", "parameters", "index", "source")
INDEX_KEYS = ("fts_tokenizer", "memory_files", "chunker", "embedder")
CHUNKER_KEYS = ("kind", "tokens", "overlap")
EMBEDDER_KEYS = ("provider", "model")


@dataclass(frozen=True)
class PresetFile:
    """A preset file read back: the system (``pipeline``), the preset it started from
    (``base``), the index it needs (``chunker`` ``{kind, tokens, overlap}`` and ``embedder``
    ``{provider, model}``, each None when the file does not say), the memlab version that
    wrote it, where the setting came from (``source``) and the file (``path``)."""

    pipeline: Pipeline
    base: str
    chunker: dict[str, Any] | None = None
    embedder: dict[str, Any] | None = None
    memlab_version: str | None = None
    source: str | None = None
    path: Path | None = None

    def status(self) -> dict[str, Any]:
        """What ``memory_status`` says of it: the file, the system's name, its base, the
        parameters that differ from the base preset, and the index it needs."""
        from memlab.pipeline.presets import preset

        base = preset(self.base).get_params()
        params = self.pipeline.get_params()
        return {
            "path": None if self.path is None else str(self.path),
            "name": self.pipeline.name,
            "base": self.base,
            "parameters": {
                k: json_value(v) for k, v in params.items() if k != "name" and base.get(k) != v
            },
            "chunker": self.chunker,
            "embedder": self.embedder,
        }


def json_value(value: Any) -> Any:
    """A parameter value as JSON holds it: tuples become lists (recursively)."""
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    return value


def _from_json(value: Any, default: Any) -> Any:
    # JSON arrays back to the tuples a parameter holds (its default says which).
    if isinstance(default, tuple) and isinstance(value, list):
        return tuple(_from_json(v, ()) if isinstance(v, list) else v for v in value)
    return value


def preset_file_data(
    pipeline: Pipeline,
    *,
    base: str,
    chunker: Mapping[str, Any] | None = None,
    embedder: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    """The JSON object of a preset file for ``pipeline`` (see the module docstring): every
    parameter of ``pipeline.get_params()`` but ``name``, the base preset's name (checked),
    the index it needs (``fts_tokenizer`` and ``memory_files`` from the pipeline, the
    ``chunker`` and ``embedder`` given) and the ``source``. Reading it back
    (`parse_preset_file`) gives a pipeline equal to ``pipeline``."""
    from memlab import __version__
    from memlab.pipeline.presets import preset

    preset(base)  # an unknown base is the caller's error, raised now
    params = pipeline.get_params()
    return {
        "format": FORMAT,
        "memlab_version": __version__,
        "name": pipeline.name,
        "base": base,
        "parameters": {k: json_value(v) for k, v in params.items() if k != "name"},
        "index": {
            "fts_tokenizer": params["fts_tokenizer"],
            "memory_files": params["memory_files"],
            "chunker": None if chunker is None else dict(chunker),
            "embedder": None if embedder is None else dict(embedder),
        },
        "source": source,
    }


def write_preset_file(path: str | os.PathLike[str], data: Mapping[str, Any]) -> Path:
    """Write ``data`` (`preset_file_data`) as indented JSON with a final newline."""
    p = Path(path).expanduser()
    p.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def _unknown(keys: Any, valid: tuple[str, ...], where: str) -> list[str]:
    """One problem per key of ``keys`` not in ``valid``: its full path and the nearest
    valid key (or the valid keys)."""
    out = []
    for key in keys:
        if key not in valid:
            close = nearest_name(str(key), valid)
            hint = f"did you mean {close}?" if close else f"valid keys: {', '.join(valid)}"
            out.append(f"unknown key {where}{key} ({hint})")
    return out


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        from memlab.config.keys import json_kind

        raise ValueError(f"{where} must be an object, got {json_kind(value)}")
    return value


def parse_preset_file(data: Any, path: Path | None = None) -> PresetFile:
    """A `PresetFile` from a parsed preset file; every problem is a ``ValueError`` (the
    caller names the file): an unknown key at any level (with the nearest valid one), a
    ``format`` other than ``memlab-preset/1``, an unknown ``base`` preset, an unknown
    parameter (with the nearest valid one and every valid name), a value the pipeline
    refuses (its own message), an ``index`` that contradicts the parameters
    (``fts_tokenizer``, ``memory_files``), a chunker or embedder that is not an object of
    its keys. Parameters left out keep the base preset's values."""
    from memlab.pipeline.presets import PRESET_ALIASES, PRESETS, preset

    top = _object(data, "the top level")
    problems = _unknown(top, TOP_KEYS, "")
    index = _object(top.get("index") or {}, "index")
    problems += _unknown(index, INDEX_KEYS, "index.")
    chunker = index.get("chunker")
    embedder = index.get("embedder")
    if chunker is not None:
        problems += _unknown(_object(chunker, "index.chunker"), CHUNKER_KEYS, "index.chunker.")
    if embedder is not None:
        problems += _unknown(_object(embedder, "index.embedder"), EMBEDDER_KEYS, "index.embedder.")
    if problems:
        raise ValueError("; ".join(problems) + " (a memlab preset file is strict)")
    if top.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}, got {top.get('format')!r}")
    base = top.get("base")
    names = [*PRESETS, *PRESET_ALIASES]
    if not isinstance(base, str) or base not in names:
        close = nearest_name(str(base), names)
        raise ValueError(
            f"base {base!r} is not a preset"
            + (f" (did you mean {close}?)" if close else "")
            + f"; presets: {', '.join(names)}"
        )
    params = dict(_object(top.get("parameters") or {}, "parameters"))
    defaults = preset(base).get_params()
    valid = sorted(k for k in defaults if k != "name")
    unknown = [k for k in params if k not in valid]
    if unknown:
        hints = []
        for k in unknown:
            close = nearest_name(k, valid)
            hints.append(f"parameters.{k}" + (f" (did you mean {close}?)" if close else ""))
        raise ValueError(
            f"unknown pipeline parameter(s): {', '.join(hints)}; valid: {', '.join(valid)}"
        )
    name = top.get("name", base)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    values = {k: _from_json(v, defaults[k]) for k, v in params.items()}
    pipeline = preset(base).replace(name=name, **values)
    got = pipeline.get_params()
    for key in ("fts_tokenizer", "memory_files"):
        if key in index and index[key] != got[key]:
            raise ValueError(
                f"index.{key} is {index[key]!r} but parameters.{key} makes it {got[key]!r}:"
                " the index a system runs on is its parameter's"
            )
    return PresetFile(
        pipeline=pipeline,
        base=base,
        chunker=None if chunker is None else dict(chunker),
        embedder=None if embedder is None else dict(embedder),
        memlab_version=top.get("memlab_version"),
        source=top.get("source"),
        path=path,
    )


def read_preset_file(path: str | os.PathLike[str]) -> PresetFile:
    """`parse_preset_file` of the JSON file at ``path``; a missing file is
    ``FileNotFoundError``, a folder, invalid JSON or any problem of the content a
    ``ValueError`` naming the file."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"{p} is a directory; --preset-file takes a preset file (JSON)")
    if not p.exists():
        raise FileNotFoundError(f"preset file not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not a UTF-8 text file ({exc.reason})") from exc
    except ValueError as exc:
        raise ValueError(
            f"{p}: not valid JSON ({exc}); memlab export --target mcp writes a preset file"
        ) from exc
    try:
        return parse_preset_file(data, p)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{p}: {exc}") from exc
