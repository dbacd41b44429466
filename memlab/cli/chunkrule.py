"""``memlab chunk --memory-files RULE``: the chunks an index of a memory-file rule stores.

A workspace folder is read as the index reads it (``memlab.store.filerules``:
``discover_files`` then ``chunk_file``), so ``memlab chunk WS --memory-files
openclaw-2026.9`` prints the release's chunks — per-entry blocks for ``MEMORY.md`` and
``USER.md``, annotation comments stripped — with the annotations stored for each chunk.
One file is chunked under its own name (a ``MEMORY.md`` given alone is the curated root).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memlab.cli.common import chunk_row, format_table, print_json
from memlab.errors import CliError

__all__ = ["chunk_by_rule"]


def chunk_by_rule(args: argparse.Namespace) -> int:
    """Print the chunks rule ``args.memory_files`` stores for ``args.file`` (a workspace
    folder: every memory file ``discover_files`` finds, with ``--extra`` paths; a file: that
    file). Rows: path, chunk (index within its file), lines, chars, weight (the rule's
    ``estimate_chars``), hash, and for the 2026.9 rule importance / triggers / project
    (empty when the chunk has none). ``--json`` prints full rows with texts, ``--show`` the
    texts after the table. A missing path or an unreadable file is a ``CliError``."""
    from memlab.chunking import ChunkerConfig
    from memlab.files.workspace import (
        MemoryFile,
        MemoryFileError,
        read_memory_file,
        resolve_workspace,
    )
    from memlab.store.filerules import (
        chunk_annotations,
        chunk_file,
        discover_files,
        estimate_chars_for,
        stores_annotations,
    )

    rule = args.memory_files
    path = Path(args.file)
    if not path.exists():
        raise CliError(f"file not found: {path}")
    if path.is_dir():
        files = discover_files(rule, resolve_workspace(path), getattr(args, "extra", []))
    else:
        files = [MemoryFile(path.name, path, "memory")]
    chunker = ChunkerConfig(args.chunker, args.tokens, args.overlap)  # 2026.4 only
    annotated = stores_annotations(rule)
    estimate_chars = estimate_chars_for(rule)
    rows: list[dict[str, Any]] = []
    texts: list[tuple[str, int, int, str]] = []
    for f in files:
        try:
            text = read_memory_file(f.abspath, f.path).text
        except MemoryFileError as exc:
            raise CliError(f"cannot chunk {f.abspath}: {exc.reason}") from exc
        for i, c in enumerate(chunk_file(rule, chunker, f, text)):
            row = {"path": f.path, **chunk_row(i, c, estimate_chars(c.text), args.json)}
            if annotated:
                importance, project, triggers = chunk_annotations(c)
                row.update(importance=importance, triggers=triggers, project=project)
                if not args.json:  # the table shows a missing annotation as blank
                    row.update({k: "" if v is None else v for k, v in row.items()})
            if args.json:
                row["text"] = c.text
            rows.append(row)
            texts.append((f.path, c.start_line, c.end_line, c.text))
    if args.json:
        print_json(rows)
        return 0
    cols = ["path", "chunk", "lines", "chars", "weight", "hash"]
    print(format_table(rows, cols + (["importance", "triggers", "project"] if annotated else [])))
    print(f"\n{len(rows)} chunk(s) from {len(files)} file(s) under {rule}")
    if args.show:
        for name, start, end, text in texts:
            print(f"\n--- {name} lines {start}-{end} ---\n{text}")
    return 0
