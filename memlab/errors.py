"""Errors shared by memlab's command-line modules.

Kept in its own module so that ``python -m memlab.cli`` (where ``memlab.cli``
runs as ``__main__``) and ``memlab.labcli`` raise and catch the same class.
"""

from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed as ``memlab: error: ...`` with exit code 2."""
