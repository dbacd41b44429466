"""OpenClaw config files' key trees: one checker of strict schemas and the helpers every
reader of ``openclaw.json`` shares (:mod:`memlab.config` for 2026-04's ``memorySearch``,
:mod:`memlab.config.release` for 2026.9.6's ``memory.search``, :mod:`memlab.config.qmd`
for 2026-04's QMD backend, ``memlab.flush.config``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memlab.errors import nearest_name

__all__ = ["check_key_tree", "deep_merge", "json_kind", "key_tree", "object_or_empty"]


def key_tree(paths: list[tuple[str, ...]]) -> dict[str, Any]:
    """Nested dict of valid keys; a ``None`` value marks a leaf (its value is type-checked)."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node.setdefault(path[-1], None)
    return tree


def check_key_tree(
    node: Any,
    tree: Mapping[str, Any],
    where: str,
    problems: list[str],
    *,
    leaf_problem: Callable[[Any, Any], str | None] | None = None,
    retired: Mapping[str, str] | None = None,
) -> None:
    """Append to ``problems`` what is wrong with ``node`` against a key tree: a dict
    value is a nested object, anything else a leaf. ``node`` must be an object; an
    unknown key is named by its full path with the nearest valid key at its level
    (``difflib.get_close_matches``, cutoff 0.6) or, failing one, the valid keys there,
    plus why it is gone when ``retired`` says so; a leaf other than None is checked by
    ``leaf_problem(leaf, value)`` (a message, or None when the value fits). One
    checker for OpenClaw's 2026-04 ``memorySearch`` and the release's ``memory.search``."""
    if not isinstance(node, Mapping):
        problems.append(f"{where} must be an object, got {json_kind(node)}")
        return
    for key, value in node.items():
        sub = tree.get(key, ...) if isinstance(key, str) else ...
        if sub is ...:
            close = nearest_name(str(key), list(tree))
            hint = f"did you mean {close}?" if close else f"valid keys: {', '.join(tree)}"
            why = f"; {retired[key]}" if retired and key in retired else ""
            problems.append(f"unknown key {where}.{key} ({hint}{why})")
        elif isinstance(sub, Mapping):
            check_key_tree(
                value, sub, f"{where}.{key}", problems, leaf_problem=leaf_problem, retired=retired
            )
        elif sub is not None and leaf_problem is not None:
            problem = leaf_problem(sub, value)
            if problem:
                problems.append(f"{where}.{key} {problem}, got {json_kind(value)}")


def object_or_empty(node: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    """``node[key]`` when it is an object, ``{}`` when absent; anything else is an error."""
    value = node.get(key)
    if value is None and key not in node:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object, got {json_kind(value)}")
    return value


def json_kind(value: Any) -> str:
    """A JSON-flavoured name of a value's type, for messages: ``null``, ``a boolean (true)``,
    ``a number (3)``, ``a string ('x')``, ``an array``, else the Python type's name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def deep_merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """``b`` over ``a`` key by key: nested objects merged, anything else replaced."""
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out
