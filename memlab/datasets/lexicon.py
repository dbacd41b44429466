"""Deprecated, kept for one release: the wording moved to
``memlab.datasets.synthetic.lexicon`` (background) and ``...synthetic.facts`` (facts asked)."""

from memlab.datasets.synthetic.facts import *  # noqa: F403
from memlab.datasets.synthetic.lexicon import *  # noqa: F403
