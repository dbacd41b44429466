"""``memlab export``: a setting (a preset, ``--set`` items, a preset file or a saved result)
written out for the agent: an OpenClaw 2026-04 config, a 2026.9.6 config, or a preset file
``memlab mcp --preset-file`` serves.

The config writers are their readers' modules (``memlab.config.load.export_config``; the
preset file: ``memlab.config.preset_file``), so what is written reads back to the same
system. A target that cannot express the setting is refused (exit 2) naming each stage and
parameter, with the route that can (``--target mcp``). Module-level imports stay light.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memlab.config.vocab import EXPORT_TARGETS
from memlab.errors import CliError

__all__ = ["add_parser", "cmd_export"]

# The first line of every file memlab export writes (JSON5 comments for the OpenClaw
# targets): what --overwrite recognises as its own.
HEADER = "// memlab export"


def add_parser(sub: Any) -> None:
    """Register ``export`` on the ``memlab`` subparsers."""
    p = sub.add_parser(
        "export",
        help="write a tuned setting for the agent: an OpenClaw config (2026-04, 2026.9.6) or a"
        " preset file memlab mcp serves",
    )
    src = p.add_argument_group("the setting (one of; --set applies over it)")
    src.add_argument("--preset", default=None, help="a preset (default openclaw)")
    src.add_argument("--preset-file", default=None, metavar="FILE", help="a preset file")
    src.add_argument(
        "--result",
        default=None,
        metavar="FILE",
        help="a saved experiment (memlab eval --save DIR: DIR or DIR/experiment.json; --system"
        " picks one of its systems) or a sweep's --json output (its best setting)",
    )
    src.add_argument("--system", default=None, help="with --result: the experiment's system")
    src.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any pipeline parameter"
    )
    out = p.add_argument_group("what to write")
    out.add_argument("--target", required=True, choices=EXPORT_TARGETS)
    out.add_argument(
        "--agent",
        default=None,
        metavar="ID",
        help="OpenClaw targets: the settings of this agent (agents.list / agents.entries)"
        " instead of the defaults",
    )
    out.add_argument(
        "--provider",
        default=None,
        help="OpenClaw targets: the embedding provider the config names (default: the one the"
        " setting was tuned with); another one is warned about",
    )
    out.add_argument("--model", default=None, help="with --provider: its model")
    out.add_argument(
        "--extra", action="append", default=[], metavar="PATH", help="extraPaths to write"
    )
    out.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="with --out: replace a file an earlier memlab export wrote (never another file)",
    )
    p.set_defaults(func=cmd_export)


def source_setting(args: argparse.Namespace) -> dict[str, Any]:
    """The setting to export: ``{pipeline, base, embedder, chunker, source}`` from
    ``--result`` (``memlab.eval.settings.read_setting``), ``--preset-file`` or ``--preset``
    (default ``openclaw``; tuned with the packaged model at OpenClaw's 400/80 chunks), with
    the ``--set`` items over it. More than one source, or a bad one, is a ``CliError``."""
    from memlab.cli.search import set_overrides

    given = [f for f in ("preset", "preset_file", "result") if getattr(args, f)]
    if len(given) > 1:
        flags = " and ".join("--" + g.replace("_", "-") for g in given)
        raise CliError(f"{flags}: give one setting to export")
    if args.system and not args.result:
        raise CliError("--system picks a system of --result FILE (a saved experiment)")
    overrides = set_overrides(args)
    try:
        if args.result:
            from memlab.eval.settings import read_setting

            s = read_setting(args.result, args.system)
            got = dict(pipeline=s.pipeline, base=s.base, embedder=s.embedder, chunker=s.chunker)
            got["source"] = s.source
        elif args.preset_file:
            from memlab.config.preset_file import read_preset_file

            pf = read_preset_file(args.preset_file)
            got = dict(pipeline=pf.pipeline, base=pf.base, embedder=pf.embedder)
            got.update(chunker=pf.chunker, source=pf.source or str(pf.path))
        else:
            from memlab.embed.local import PACKAGED_MODEL_NAME
            from memlab.pipeline.presets import preset

            name = args.preset or "openclaw"
            got = dict(pipeline=preset(name), base=name, source=f"preset {name}")
            got["embedder"] = {"provider": "local", "model": PACKAGED_MODEL_NAME}
            got["chunker"] = {"kind": "openclaw", "tokens": 400, "overlap": 80}
        if overrides:
            got["pipeline"] = got["pipeline"].replace(**overrides)
            got["source"] += " with " + ", ".join(f"{k}={v}" for k, v in overrides.items())
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise CliError(str(exc)) from None
    return got


def embedder_text(e: dict[str, Any] | None) -> str:
    """``provider model`` of an embedder dict, ``keyword only`` for None."""
    return "keyword only" if not e else f"{e.get('provider')} {e.get('model') or ''}".strip()


def cmd_export(args: argparse.Namespace) -> int:
    """Write the setting for ``--target``: a preset file (``mcp``), or an OpenClaw config
    (``export_config``: refused with every problem, exit 2). Says on stderr what the
    setting was tuned with, and warns when the config would embed with another model."""
    got = source_setting(args)
    p, tuned = got["pipeline"], got["embedder"]
    if args.out:
        check_out(Path(args.out).expanduser(), args.overwrite)
    if args.target == "mcp":
        if args.agent or args.provider or args.model or args.extra:
            raise CliError(
                "--agent, --provider, --model and --extra are OpenClaw config keys; a preset"
                " file names the index it needs (memlab mcp takes --config for the rest)"
            )
        from memlab.config.preset_file import preset_file_data

        data = preset_file_data(
            p, base=got["base"], chunker=got["chunker"], embedder=tuned, source=got["source"]
        )
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        from memlab.config.load import ExportRefused, export_config

        emb = tuned
        if args.provider:
            emb = {"provider": args.provider, "model": args.model}
            if tuned and (args.provider, args.model) != (tuned.get("provider"), tuned.get("model")):
                print(
                    f"memlab: warning: tuned with {embedder_text(tuned)}; the config names"
                    f" {embedder_text(emb)}: weights tuned with one embedder do not carry over"
                    " to another (measure again with that embedder)",
                    file=sys.stderr,
                )
        elif args.model:
            raise CliError("--model goes with --provider")
        try:
            data, _ = export_config(
                p,
                args.target,
                agent=args.agent,
                embedder=emb,
                chunker=got["chunker"],
                extra=args.extra,
            )
        except ExportRefused as exc:
            raise CliError(f"--target {args.target}: {exc}") from None
        except ValueError as exc:
            raise CliError(str(exc)) from None
        if emb and emb.get("provider") in ("local", "hashing"):
            print(
                f"memlab: warning: provider {emb['provider']} ({emb.get('model')}) is memlab's"
                f" embedder; OpenClaw embeds with its own {emb['provider']!r} client, so in"
                " OpenClaw the tuned weights hold only for the same model (memlab search"
                " --config FILE runs this very setting)",
                file=sys.stderr,
            )
        head = [
            f"{HEADER} --target {args.target}: {got['source']}",
            f"// tuned with {embedder_text(tuned)}; memlab {_version()}",
        ]
        text = "\n".join(head) + "\n" + json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    print(f"memlab: note: {p.name}: tuned with {embedder_text(tuned)}", file=sys.stderr)
    if args.out:
        out = Path(args.out).expanduser()
        out.write_text(text, encoding="utf-8")
        print(f"memlab: wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _version() -> str:
    from memlab import __version__

    return __version__


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse to write over a file unless ``--overwrite`` and it is a file memlab export
    wrote (it starts with `HEADER`, or is a preset file)."""
    if out.is_dir():
        raise CliError(f"--out {out} is a folder; name the file to write")
    if not out.exists():
        return
    if not overwrite:
        raise CliError(f"--out {out} exists; add --overwrite to replace an earlier export")
    try:
        head = out.read_text(encoding="utf-8")[:4096]
    except (OSError, UnicodeDecodeError):
        head = ""
    if not (head.startswith(HEADER) or '"format": "memlab-preset/' in head):
        raise CliError(
            f"--out {out} --overwrite: the file is not one memlab export wrote, so it is not"
            " replaced (merge the printed settings into it yourself)"
        )
