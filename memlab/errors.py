"""Errors and exit codes shared by memlab's command-line modules.

Kept in its own module so that ``python -m memlab.cli`` (where ``memlab.cli``
runs as ``__main__``) and ``memlab.labcli`` raise and catch the same class.
The exit codes are documented in docs/cli.md.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1  # memlab could not do the work: provider failed, index locked/unusable, I/O
EXIT_USAGE = 2  # the input is wrong: argument, config file, path (argparse exits 2 too)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_CODES = (EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_INTERRUPTED)


class CliError(Exception):
    """A user-facing error: printed as ``memlab: error: ...`` with exit code 2 (EXIT_USAGE)."""
