"""The tools' arguments as an MCP client sends them: their schemas and the one rule that
reads them (`read_tool_arguments`), with memlab's own message for every bad one.

The rule is OpenClaw 2026.9.6's (its tool schemas, ``memory-tool-contract``, and its
argument coercion, ``validateToolArguments`` in ``llm-core/src/validation.ts``): a string
holding a JSON number is read as that number where a number is expected (``"3"`` → 3,
``" 3 "`` → 3, ``"3.0"`` → 3 for an integer; ``"abc"`` and ``"2.5"`` are refused for an
integer), ``true``/``false`` as 1/0, a number or boolean where a text is expected as its
JSON text (``5`` → ``"5"``); an integer argument must be a whole number within its minimum;
an argument the tool does not take is refused (``additionalProperties: false``). One
difference: ``null`` for an optional argument means "not given" here (OpenClaw would read
0 or ``""``), as MCP clients send ``null`` for an argument they leave out.

Ranges the engine owns are checked where they always were: ``maxResults``, ``minScore``
and the query by ``memlab.tools.check_search_arguments``, ``corpus`` by each tool.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from memlab.errors import nearest_name
from memlab.tools import SearchArgumentError

__all__ = ["read_tool_arguments", "tool_schema"]

# What each argument is, for the schema a client reads and for the messages.
DESCRIPTIONS = {
    "query": "what to search for: a non-empty text",
    "maxResults": "how many results at most: an integer >= 1",
    "minScore": "the lowest score returned: a finite number",
    "corpus": "which corpus to search",
    "path": "a memory file's path (MEMORY.md, memory/*.md or an extra path)",
    "from": "the first line to read, 1-based: an integer >= 1",
    "lines": "how many lines to read: an integer >= 1",
}
# Each tool's arguments: (name, JSON type, minimum or None, required).
ARGUMENTS: dict[str, tuple[tuple[str, str, int | None, bool], ...]] = {
    "memory_search": (
        ("query", "string", None, True),
        ("maxResults", "integer", 1, False),
        ("minScore", "number", None, False),
        ("corpus", "string", None, False),
    ),
    "memory_get": (
        ("path", "string", None, True),
        ("from", "integer", 1, False),
        ("lines", "integer", 1, False),
        ("corpus", "string", None, False),
    ),
    "memory_status": (),
}
KINDS = {"integer": "an integer", "number": "a number", "string": "a text"}
# OpenClaw's JSON_NUMBER_TOKEN_RE: what a string must look like to be read as a number.
NUMBER_TOKEN = re.compile(r"^[+-]?(?:(?:\d+\.?\d*)|(?:\.\d+))(?:e[+-]?\d+)?$", re.IGNORECASE)
MAX_SAFE_INTEGER = 2**53 - 1


def tool_schema(tool: str, corpora: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON schema of ``tool``'s arguments a client reads: each argument's type,
    minimum and description, ``corpus`` limited to ``corpora`` (left out when empty: the
    tool takes no corpus), the required ones, and no other argument."""
    props: dict[str, Any] = {}
    required = []
    for name, kind, minimum, needed in ARGUMENTS[tool]:
        if name == "corpus" and not corpora:
            continue
        prop: dict[str, Any] = {"type": kind, "description": DESCRIPTIONS[name]}
        if minimum is not None:
            prop["minimum"] = minimum
        if name == "corpus":
            prop["enum"] = list(corpora)
            prop["description"] += f": {', '.join(corpora)}"
        props[name] = prop
        if needed:
            required.append(name)
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _number(value: Any) -> float | None:
    """``value`` as OpenClaw reads a number: a number as it is, a boolean as 1/0, a string
    holding a JSON number token (trimmed) as that number; None when it is none of these."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and NUMBER_TOKEN.match(value.strip()):
        return float(value.strip())
    return None


def _text(value: Any) -> str | None:
    """``value`` as OpenClaw reads a text: a string as it is, a number or boolean as its
    JSON text (``5`` → ``"5"``, ``2.5`` → ``"2.5"``, ``true`` → ``"true"``); None otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return None


def read_tool_arguments(
    tool: str, arguments: Mapping[str, Any], corpora: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``arguments`` of a call to ``tool`` read by the module's rule: each value converted to
    its type (int, float or str); a ``null`` optional argument left out. Raises
    ``SearchArgumentError`` naming the first problem: an argument the tool does not take
    (with the nearest one it does), a missing required one, a value that is not of its type
    (``maxResults must be an integer >= 1, got 'abc'``), an integer below its minimum.
    ``corpora``: the corpus values the tool takes (() = it takes no ``corpus``)."""
    spec = {a[0]: a for a in ARGUMENTS[tool] if a[0] != "corpus" or corpora}
    for key in arguments:
        if key not in spec:
            close = nearest_name(key, list(spec))
            takes = ", ".join(spec) or "no arguments"
            raise SearchArgumentError(
                str(key),
                f"{tool} takes {takes}; {key!r} is not one of them"
                + (f" (did you mean {close}?)" if close else ""),
            )
    out: dict[str, Any] = {}
    for name, kind, minimum, needed in spec.values():
        value = arguments.get(name)
        if value is None:
            if needed:
                raise SearchArgumentError(name, f"{tool} needs {name}: {DESCRIPTIONS[name]}")
            continue
        rule = KINDS[kind] + (f" >= {minimum}" if minimum is not None else "")
        if kind == "string":
            text = _text(value)
            if text is None:
                raise SearchArgumentError(name, f"{name} must be {rule}, got {value!r}")
            out[name] = text
            continue
        num = _number(value)
        whole = num is not None and math.isfinite(num) and num.is_integer()
        if num is None or (kind == "integer" and not (whole and abs(num) <= MAX_SAFE_INTEGER)):
            raise SearchArgumentError(name, f"{name} must be {rule}, got {value!r}")
        if minimum is not None and num < minimum:
            raise SearchArgumentError(name, f"{name} must be {rule}, got {value!r}")
        out[name] = int(num) if kind == "integer" else num
    return out
