"""Deprecated, kept for one release: the category builders moved to
``memlab.datasets.synthetic.phenomena`` (their shared state to ``...synthetic.base``)."""

from memlab.datasets.synthetic.phenomena import *  # noqa: F403
