"""The demo's fixed choices: the metric it reports, the weight grid it sweeps, the
baseline it compares against, its statistics and its default corpus and chunk sizes.
Imports nothing: ``memlab demo``'s parser reads the defaults from here."""

from __future__ import annotations

__all__ = [
    "ALPHA",
    "BASELINE",
    "CHUNK_OVERLAP",
    "CHUNK_TOKENS",
    "CONFIDENCE",
    "DEFAULT_DAYS",
    "DEFAULT_NOTES_PER_DAY",
    "DEFAULT_QUERIES_PER_TYPE",
    "GRID",
    "METRIC",
    "METRICS",
    "N_RESAMPLES",
    "SHIPPED",
    "WIDTH",
]

METRIC = "recall@6"
# OpenClaw's memory_search returns at most 6 results; every metric reads those 6,
# so no system is asked for more than OpenClaw would return.
METRICS = ("recall@6", "ndcg@6", "mrr@6")
GRID = [round(i * 0.05, 2) for i in range(21)]
BASELINE = "wsum-0.7/0.3"
SHIPPED = "openclaw-shipped"
CONFIDENCE = 0.95
N_RESAMPLES = 10_000
ALPHA = 0.05
WIDTH = 100  # prose is wrapped at this many columns; tables are printed as they are

# Measured on 2 cores with the packaged model (see the README): 548 chunks,
# 356 questions; first run ≈ 1 min, cached run seconds.
# OpenClaw's chunker at a size all-MiniLM-L6-v2 reads whole (256 word pieces): measured on
# the default corpus, 1 of 1,102 chunks is longer than the window at 200 tokens, 539 of 548
# at OpenClaw's default 400.
CHUNK_TOKENS = 200
CHUNK_OVERLAP = 40
DEFAULT_DAYS = 180
DEFAULT_NOTES_PER_DAY = 60
DEFAULT_QUERIES_PER_TYPE = 60
