"""Errors and exit codes shared by memlab's command-line modules (``memlab.cli.*``).

Kept outside the ``memlab.cli`` package, with no module-level imports, so that any module
(the engine commands, the lab commands, a future server) raises and catches
the same class without loading the command line. The exit codes are
documented in docs/cli.md.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1  # memlab could not do the work: provider failed, index locked/unusable, I/O
EXIT_USAGE = 2  # the input is wrong: argument, config file, path (argparse exits 2 too)
# memlab eval's CI guard failed: a metric below --fail-below, or a significant drop against
# the saved run of --against with --fail-on-regression (memlab.eval.guard)
EXIT_REGRESSION = 3
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_CODES = (EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_REGRESSION, EXIT_INTERRUPTED)


class CliError(Exception):
    """A user-facing error: printed as ``memlab: error: ...`` with exit code 2 (EXIT_USAGE)."""


def nearest_name(name: str, names: object) -> str | None:
    """The valid name closest to a misspelt ``name`` (``difflib.get_close_matches``, cutoff
    0.6), or None when none is close: the one "did you mean" rule of config keys, ``--set``
    parameters and settings."""
    import difflib  # here, not at module level: this module imports nothing on load

    close = difflib.get_close_matches(str(name), [str(n) for n in names], n=1, cutoff=0.6)  # type: ignore[attr-defined]
    return close[0] if close else None
