"""Deprecated, kept for one release: the lab commands moved to :mod:`memlab.cli.lab`."""

from memlab.cli.lab import *  # noqa: F403
