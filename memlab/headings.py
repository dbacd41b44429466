"""Deprecated, kept for one release: the heading-aware chunker moved to
``memlab.chunking.headings`` (import ``chunk_headings`` from ``memlab.chunking``)."""

from memlab.chunking.headings import chunk_headings as chunk_headings
