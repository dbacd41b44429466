"""Every allowed-value list of memlab, in one place (one owner per list).

A parameter, a command-line choice or a config key that takes one of a fixed
set of values reads its set from here; nothing else spells a list out. This
module imports nothing, so ``memlab --help`` can use it without loading the
engine.
"""

from __future__ import annotations

# --------------------------------------------------------------------- index
# FTS5 tokenizers: the name a user gives → the FTS5 ``tokenize=`` argument.
FTS_TOKENIZE: dict[str, str] = {
    "unicode61": "unicode61",
    "trigram": "trigram case_sensitive 0",
    "porter": "porter unicode61",
}
FTS_TOKENIZERS: tuple[str, ...] = tuple(FTS_TOKENIZE)
# The FTS tokenizers OpenClaw 2026.9.6 offers (store.fts.tokenizer; memlab.openclaw_current).
OPENCLAW_CURRENT_TOKENIZERS: tuple[str, ...] = ("unicode61", "trigram")
# Vector-leg engines (memlab.vectors): "numpy" the exact scan at memory speed; "faiss"
# exact too; "fp16"/"sq8" quantised scans re-scored exactly; "ivf"/"hnsw" approximate.
VECTOR_BACKENDS: tuple[str, ...] = ("numpy", "faiss", "fp16", "sq8", "ivf", "hnsw")
# Chunkers (memlab.chunking.ChunkerConfig.kind).
CHUNKERS: tuple[str, ...] = ("openclaw", "openclaw-exact", "heading", "line")
# Lab units: OpenClaw chunks, or one line (a dialog turn) per unit.
UNITS: tuple[str, ...] = ("chunk", "turn")
# Index sources (OpenClaw's memorySearch.sources).
SOURCES: tuple[str, ...] = ("memory", "sessions")
# memory_search's `corpus` argument through `memlab mcp` (memlab.server).
MCP_CORPORA: tuple[str, ...] = ("memory", "sessions", "all")

# ----------------------------------------------------------------- embedders
# Providers memlab can run (memlab.embed.resolve_embedder).
EMBED_PROVIDERS: tuple[str, ...] = ("auto", "local", "hashing", "openai", "none")
# Providers OpenClaw's config accepts (memorySearch.provider); the last three are
# OpenClaw's own remote providers, which memlab does not implement.
CONFIG_PROVIDERS: tuple[str, ...] = (*EMBED_PROVIDERS, "gemini", "voyage", "mistral")
# --embedder choices of the engine commands (openai comes from --config).
CLI_EMBEDDERS: tuple[str, ...] = ("auto", "local", "hashing", "none")
# --embedder choices of the lab commands.
LAB_EMBEDDERS: tuple[str, ...] = ("local", "hashing", "none")
# How the local model runs (memlab.embed.resolve_embedder backend=): torch through
# sentence-transformers, or onnxruntime (memlab.embed.onnx: no torch on the query path).
LOCAL_BACKENDS: tuple[str, ...] = ("torch", "onnx")

# ------------------------------------------------------------------ pipeline
KEYWORD_MODES: tuple[str, ...] = ("and", "or")
FUSION_METHODS: tuple[str, ...] = (
    "wsum",
    "rrf",
    "combsum",
    "combmnz",
    "combmax",
    "vector",
    "keyword",
)
# Fusions that rank by one leg alone (they read no weight); the others weight both legs.
SINGLE_LEG_FUSIONS: tuple[str, ...] = ("vector", "keyword")
WEIGHTED_FUSIONS: tuple[str, ...] = tuple(m for m in FUSION_METHODS if m not in SINGLE_LEG_FUSIONS)
TEXT_SOURCES: tuple[str, ...] = ("bm25map", "bm25")
NORMALIZATIONS: tuple[str, ...] = (
    "none",
    "minmax",
    "theoretical",
    "zscore",
    "rank",
    "sigmoid",
    "max",
    "sum",
)
DECAY_RULES: tuple[str, ...] = ("off", "exact", "latest")
DECAY_KINDS: tuple[str, ...] = ("exponential", "qmd")
MMR_KINDS: tuple[str, ...] = ("off", "jaccard", "embedding")
CITATION_MODES: tuple[str, ...] = ("auto", "on", "off")
# Steps after which MEMLAB_DOCTOR_CRASH_AFTER kills `memlab doctor --fix` (memlab.doctor, tests).
DOCTOR_CRASH_STEPS: tuple[str, ...] = (
    *("repair-dir", "archive-dir", "archive-partial", "archive-tmp", "archive"),
    *("append-partial", "append-tmp", "append", "remove"),
)

# ----------------------------------------------------------------------- lab
DATASETS: tuple[str, ...] = ("synthetic", "locomo", "beam", "longmemeval", "folder")
