"""A tuned setting read back from what the lab saved: a saved experiment
(``memlab eval --save DIR``: ``DIR/experiment.json``) or a sweep's ``--json`` output
(``memlab sweep --json``: ``best.setting`` over ``base_settings``).

`read_setting` returns the system, the preset it starts from, the embedder and chunker it
was measured with, and where it came from: what ``memlab export --result`` writes out.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab.errors import nearest_name

if TYPE_CHECKING:
    from memlab.pipeline import Pipeline

__all__ = ["SavedSetting", "read_setting"]


@dataclass(frozen=True)
class SavedSetting:
    """A system read from a saved result: ``pipeline``, its ``base`` preset, the
    ``embedder`` (``{provider, model}``, None when keyword-only) and ``chunker``
    (``{kind, tokens, overlap}``) it was measured with (None when the file does not say),
    and ``source`` (a line naming the file and the system)."""

    pipeline: Pipeline
    base: str
    embedder: dict[str, Any] | None
    chunker: dict[str, Any] | None
    source: str


def _provider_of(model: str, provider: str | None) -> dict[str, Any] | None:
    """``{provider, model}`` of an experiment's embedder (older files record the model
    only: ``hashing-N`` is the hashing embedder, ``fts-only`` none, anything else local)."""
    if model in (None, "fts-only"):
        return None
    if provider is None:
        provider = "hashing" if str(model).startswith("hashing-") else "local"
    return {"provider": provider, "model": model}


def _chunker_of(fingerprint: Any) -> dict[str, Any] | None:
    from memlab.chunking import ChunkerConfig

    if not isinstance(fingerprint, str):
        return None
    try:
        return ChunkerConfig.from_fingerprint(fingerprint).as_dict()
    except ValueError:
        return None


def _system(params: dict[str, Any], base: str | None) -> tuple[Pipeline, str]:
    """The pipeline of a saved parameter dict (every parameter, ``name`` included), built
    over ``base`` (else the preset of its name, else ``openclaw``); an unknown parameter is
    a ValueError (`memlab.config.preset_file.parse_preset_file`'s rule)."""
    from memlab.config.preset_file import FORMAT, parse_preset_file
    from memlab.pipeline.presets import PRESET_ALIASES, PRESETS

    name = str(params.get("name") or base or "openclaw")
    names = [*PRESETS, *PRESET_ALIASES]
    start = base if base in names else name if name in names else "openclaw"
    data = {
        "format": FORMAT,
        "name": name,
        "base": start,
        "parameters": {k: v for k, v in params.items() if k != "name"},
    }
    return parse_preset_file(data).pipeline, start


def read_setting(path: str | os.PathLike[str], system: str | None = None) -> SavedSetting:
    """The tuned setting saved at ``path``: a folder holding ``experiment.json`` or that
    file (the system ``system`` names; the only system when there is one), or a sweep's
    JSON (its ``best.setting`` over its ``base_settings``; ``system`` is refused). Every
    problem is a ``ValueError`` naming the file: not JSON, neither format, an unknown
    system (with the nearest name and every name), a parameter no pipeline has."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "experiment.json"
    if not p.is_file():
        raise FileNotFoundError(
            f"--result {path}: no such file (a saved experiment folder or its experiment.json,"
            " or the output of memlab sweep --json)"
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{p}: not valid JSON ({exc})") from exc
    try:
        if isinstance(data, dict) and "systems" in data:
            return _from_experiment(data, p, system)
        if isinstance(data, dict) and "best" in data:
            if system is not None:
                raise ValueError("--system picks a system of an experiment; a sweep has one")
            return _from_sweep(data, p)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{p}: {exc}") from exc
    raise ValueError(
        f"{p}: neither a saved experiment (experiment.json) nor a sweep's --json output"
    )


def _from_experiment(data: dict[str, Any], p: Path, system: str | None) -> SavedSetting:
    runs = [s for s in data["systems"] if isinstance(s.get("candidates"), dict)]
    names = [s["name"] for s in runs]
    if system is None:
        if len(runs) != 1:
            raise ValueError(
                f"it holds {len(runs)} systems: name one with --system ({', '.join(names)})"
            )
        chosen = runs[0]
    else:
        found = [s for s in runs if s["name"] == system]
        if not found:
            close = nearest_name(system, names)
            raise ValueError(
                f"no system {system!r}"
                + (f" (did you mean {close}?)" if close else "")
                + f"; systems: {', '.join(names)}"
            )
        chosen = found[0]
    params = dict(chosen["settings"])
    own = (data.get("own_max_results") or {}).get(chosen["name"])
    if own is not None:  # the system's own maxResults, not the k it was scored at
        params["max_results"] = own
    pipeline, base = _system(params, None)
    return SavedSetting(
        pipeline=pipeline,
        base=base,
        embedder=_provider_of(data.get("embedder"), data.get("embedder_provider")),
        chunker=_chunker_of(data.get("chunker")),
        source=f"{p}: system {chosen['name']} on {data.get('dataset')}",
    )


def _from_sweep(data: dict[str, Any], p: Path) -> SavedSetting:
    best = data["best"]
    settings = data.get("base_settings")
    if not isinstance(settings, dict):
        raise ValueError(
            "this sweep output names no base_settings (a memlab older than export): run the"
            " sweep again with --json"
        )
    params = {**settings, **best["setting"]}
    params["name"] = f"{settings.get('name') or 'openclaw'}-tuned"  # not its base's name
    pipeline, base = _system(params, data.get("base_preset"))
    where = ", ".join(f"{k}={v}" for k, v in best["setting"].items())
    return SavedSetting(
        pipeline=pipeline,
        base=base,
        embedder=data.get("embedder"),
        chunker=data.get("chunker"),
        source=f"{p}: sweep best {where} ({best.get('metric')}, tuned on {best.get('tuned_on')})",
    )
