"""``memlab doctor WORKSPACE [--fix]``: OpenClaw's root-memory check and repair.

The engine lives in :mod:`memlab.files.doctor` (imported inside the command, so ``memlab
--help`` stays light). Exit codes (docs/cli.md): 0 nothing to do, a dry run, or a
repair done; 1 the repair could not be done (a file over the limit or changed during
the repair, an I/O error; nothing lost); 2 a bad workspace path.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memlab.errors import EXIT_OK, EXIT_RUNTIME, CliError


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``doctor`` on the ``memlab`` subparsers."""
    p = sub.add_parser(
        "doctor",
        help="check root memory files as OpenClaw's doctor does (--fix merges memory.md"
        " into MEMORY.md, archived under .openclaw-repair/)",
    )
    p.add_argument("workspace")
    p.add_argument(
        "--fix", action="store_true", help="do the repair (default: print what it would do)"
    )
    p.add_argument("--json", action="store_true", help="the diagnosis (and repair) as JSON")
    p.add_argument(
        "--config",
        default=None,
        help="an openclaw.json: also show what OpenClaw 2026.9.6's doctor would make of its"
        " QMD settings (collections → memory.search.extraPaths); the file is never written",
    )
    p.set_defaults(func=cmd_doctor)


def config_migration(path: str) -> dict[str, object]:
    """What release 2026.9.6's ``openclaw doctor --fix`` would make of the QMD settings of
    ``path`` (``memlab.config.qmd.doctor_migration``): ``{file, changes, memory.search}``;
    a file that cannot be read or parsed is a ``CliError``."""
    import json5

    from memlab.config.qmd import doctor_migration

    p = Path(path).expanduser()
    try:
        data = json5.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CliError(f"--config {p}: {exc}") from None
    search, changes = doctor_migration(data)
    return {"file": str(p), "changes": changes, "memory.search": search}


def config_lines(mig: dict[str, object]) -> list[str]:
    """The plain-text report of `config_migration`."""
    changes = list(mig["changes"])  # type: ignore[call-overload]
    head = f"config {mig['file']}: OpenClaw 2026.9.6's doctor --fix would"
    if not changes:
        return [f"{head} change no QMD setting (there is none)"]
    out = [f"{head}:", *(f"  {c}" for c in changes)]
    search = mig["memory.search"]
    out.append("  memory.search would then be: " + json.dumps(search, ensure_ascii=False))
    out.append(
        "  (memlab never rewrites the file; memlab search --config FILE reads it as QMD did)"
    )
    return out


def size_text(path: Path, size: int | None) -> str:
    """What a root memory entry is, for the report: ``N bytes`` for a regular file (size
    known), ``a symlink`` or ``not a regular file`` otherwise (never "None bytes")."""
    if size is not None:
        return f"{size} bytes"
    return "a symlink" if path.is_symlink() else "not a regular file"


def cmd_doctor(args: argparse.Namespace) -> int:
    """``memlab doctor``: diagnose the workspace root; with ``--fix`` repair a split
    ``MEMORY.md`` / ``memory.md`` (see :mod:`memlab.files.doctor` for the order of steps)."""
    from memlab.files import doctor

    try:
        diag = doctor.diagnose(args.workspace)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise CliError(str(exc)) from exc
    ws = diag.workspace
    lines = [f"workspace: {ws}"]
    report: dict[str, object] = {
        "workspace": str(ws),
        "state": diag.state,
        "MEMORY.md": diag.canonical_bytes,
        "memory.md": diag.legacy_bytes,
        "fix": bool(args.fix),
    }
    rc = EXIT_OK
    if diag.state == "split":
        canon = size_text(ws / doctor.ROOT_MEMORY, diag.canonical_bytes)
        legacy = size_text(ws / doctor.LEGACY_ROOT_MEMORY, diag.legacy_bytes)
        lines.append(
            f"split root memory: MEMORY.md ({canon}) and memory.md ({legacy}); OpenClaw"
            " 2026.9.6 indexes MEMORY.md only, so memory.md is shadowed"
        )
        if diag.refusal:
            lines.append(f"not repairable: {diag.refusal}")
            rc = EXIT_RUNTIME if args.fix else EXIT_OK
        elif not args.fix:
            same = (ws / doctor.ROOT_MEMORY).read_bytes() == (
                ws / doctor.LEGACY_ROOT_MEMORY
            ).read_bytes()
            lines.append(
                f"would archive memory.md to {'/'.join(doctor.REPAIR_DIR)}/<timestamp>/memory.md"
            )
            lines.append(
                "would append nothing (the texts are identical)"
                if same
                else f"would append memory.md's text to MEMORY.md under {doctor.MERGE_HEADING!r}"
                " (unless an interrupted run already did)"
            )
            lines.append("would remove memory.md")
            lines.append("run with --fix to do it")
        else:
            try:
                result = doctor.repair(ws)
            except OSError as exc:
                lines.append(f"repair failed: {exc}")
                report["error"] = str(exc)
                rc = EXIT_RUNTIME
            else:
                lines.extend(result.steps)
                report.update(
                    archive=str(result.archive) if result.archive else None,
                    appended=result.appended,
                    reused_archive=result.reused_archive,
                    already_appended=result.already_appended,
                )
    elif diag.state == "legacy-only":
        lines.append(
            "memory.md without MEMORY.md: OpenClaw 2026.9.6 does not index it, and its doctor"
            " neither warns nor repairs it; memlab leaves it too (to use it: mv memory.md"
            " MEMORY.md)"
        )
    elif diag.state == "ok":
        lines.append("MEMORY.md only: nothing to do")
    else:
        lines.append("no root memory file (MEMORY.md): nothing to do")
    if diag.archives:
        lines.append(f"archives: {len(diag.archives)} under {'/'.join(doctor.REPAIR_DIR)}")
    report["archives"] = [str(a) for a in diag.archives]
    if getattr(args, "config", None):
        mig = config_migration(args.config)
        report["config"] = mig
        lines.extend(config_lines(mig))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(lines))
    return rc
