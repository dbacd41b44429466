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
# What `memlab export --target` writes: an OpenClaw 2026-04 config (agents.defaults.
# memorySearch), a 2026.9.6 one (memory.search), or a preset file `memlab mcp` serves.
EXPORT_TARGETS: tuple[str, ...] = ("openclaw-2026.4", "openclaw-2026.9", "mcp")
# The FTS tokenizers OpenClaw 2026-04 offers (memorySearch.store.fts.tokenizer; memlab's
# `porter` is its own): what `memlab export --target openclaw-2026.4` may write.
OPENCLAW_TOKENIZERS: tuple[str, ...] = ("unicode61", "trigram")
# The FTS tokenizers OpenClaw 2026.9.6 offers (store.fts.tokenizer; memlab.openclaw_current).
OPENCLAW_CURRENT_TOKENIZERS: tuple[str, ...] = OPENCLAW_TOKENIZERS
# memory.search.multimodal.modalities of release 2026.9.6 (memlab.config.release).
MULTIMODAL_MODALITIES: tuple[str, ...] = ("image", "audio", "all")
# Vector-leg engines (memlab.retrieval.vectors): "numpy" the exact scan at memory speed; "faiss"
# exact too; "fp16"/"sq8" quantised scans re-scored exactly; "ivf"/"hnsw" approximate.
VECTOR_BACKENDS: tuple[str, ...] = ("numpy", "faiss", "fp16", "sq8", "ivf", "hnsw")
# Chunkers (memlab.chunking.ChunkerConfig.kind).
CHUNKERS: tuple[str, ...] = ("openclaw", "openclaw-exact", "heading", "line")
# Memory-file rules (memlab.store.filerules): which files are memory and how they are chunked,
# a property of the system being run: OpenClaw as pinned 2026-04-13, or release 2026.9.6.
MEMORY_FILE_RULES: tuple[str, ...] = ("openclaw-2026.4", "openclaw-2026.9")
DEFAULT_MEMORY_FILES = MEMORY_FILE_RULES[0]  # the rule of an index, pipeline or lab by default
# Memory-file rules under which a workspace can be indexed one line per row (a line view,
# MemoryIndex.line_view): the 2026-04 rule; release 2026.9.6 chunks with its own chunker.
LINE_VIEW_MEMORY_FILES: tuple[str, ...] = (DEFAULT_MEMORY_FILES,)
# Line systems a chunk-level system may rank its chunks by (``best_line``,
# memlab.stages.best_line): presets scored on the line index of the same files.
BEST_LINE_SYSTEMS: tuple[str, ...] = ("memlab-best", "bm25")
# How a best-line system orders its chunks (``best_line_order``, memlab.stages.best_line):
# each by its best line ("max"), or greedily by the best line no chunk above holds ("novel").
BEST_LINE_ORDERS: tuple[str, ...] = ("max", "novel")
# Lab units: OpenClaw chunks, or one line (a dialog turn) per unit.
UNITS: tuple[str, ...] = ("chunk", "turn")
# What the lab scores (memlab.eval.lab.Lab(level=...)): the units as ranked, or the files
# they lie in (a file's rank = its best unit's; a file = a session, as in RealMem).
EVAL_LEVELS: tuple[str, ...] = ("unit", "file")
# Index sources (OpenClaw's memorySearch.sources).
SOURCES: tuple[str, ...] = ("memory", "sessions")
# memory_search's `corpus` argument through `memlab mcp` (memlab.server).
MCP_CORPORA: tuple[str, ...] = ("memory", "sessions", "all")
# OpenClaw 2026.9.6's `corpus` arguments (memlab.tools_current): memory_search, memory_get.
OPENCLAW_CURRENT_CORPORA: tuple[str, ...] = ("memory", "wiki", "all", "sessions")
OPENCLAW_CURRENT_GET_CORPORA: tuple[str, ...] = ("memory", "wiki", "all")

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
LOCAL_BACKENDS: tuple[str, ...] = ("torch", "onnx", "onnx-int8")
# The default: onnx gives the torch path's vectors (cosine >= 0.9999, the same index
# identity, identical LoCoMo top-10) without importing torch on a query (
# docs/benchmarks.md). torch stays one flag away (--local-backend torch).
DEFAULT_LOCAL_BACKEND = "onnx"
# Numeric precisions of the onnxruntime graph (memlab.embed.onnx): the fp32 export, or its
# dynamically quantised int8 copy (backend onnx-int8).
ONNX_PRECISIONS: tuple[str, ...] = ("fp32", "int8")

# What kind of query an agent sent (memlab.retrieval.textquery.query_kind: the rule): one naming an
# identifier it looks up verbatim, a question, or bare keywords.
QUERY_KINDS: tuple[str, ...] = ("identifier", "question", "keywords")

# ------------------------------------------------------------------ pipeline
KEYWORD_MODES: tuple[str, ...] = ("and", "or", "openclaw-current", "qmd")
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
# What a candidate the keyword query did not match scores on the keyword leg
# (memlab.stages.legs): the fusion's ``missing`` value after normalisation (OpenClaw: 0),
# the image of the leg's floor (a BM25 of 0) under the leg's normalisation, or the
# normalisation pooled over every candidate, the unmatched ones at the floor.
TEXT_UNMATCHED: tuple[str, ...] = ("missing", "floor", "pooled")
DECAY_RULES: tuple[str, ...] = ("off", "exact", "latest", "openclaw-current")
DECAY_KINDS: tuple[str, ...] = ("exponential", "qmd")
MMR_KINDS: tuple[str, ...] = ("off", "jaccard", "embedding", "openclaw-current")
# Neighbour rules by conversation shape (memlab.stages.context, memlab.stages.shape).
NEIGHBOR_SHAPES: tuple[str, ...] = ("off", "roles")
# How the neighbour stage combines its terms (memlab.stages.context: the largest, or all).
NEIGHBOR_AGGS: tuple[str, ...] = ("max", "sum")
# What orders the candidates (the prior stage, memlab.stages.prior): the pipeline's score,
# or a query-blind baseline: the file's time, newest first, or a seeded random per file.
RANK_BY: tuple[str, ...] = ("score", "recency", "random")
# Ordering + selection rules of the selection stage (memlab.stages.current).
SELECTION_RULES: tuple[str, ...] = ("openclaw", "openclaw-current")
CITATION_MODES: tuple[str, ...] = ("auto", "on", "off")
# Steps after which MEMLAB_DOCTOR_CRASH_AFTER kills `memlab doctor --fix` (memlab.files.doctor, tests).
DOCTOR_CRASH_STEPS: tuple[str, ...] = (
    *("repair-dir", "archive-dir", "archive-partial", "archive-tmp", "archive"),
    *("append-partial", "append-tmp", "append", "remove"),
)
# Features of the learned stage's linear model (memlab.stages.learned: meanings there);
# a model row may also name "a*b" (a product of two of them) or "bias".
LEARNED_FEATURES: tuple[str, ...] = (
    *("vz", "tz", "vmm", "tmax", "has_v", "has_t", "vrr", "trr", "pvz", "nvz", "ptz", "ntz"),
    *("loglen", "prior", "pvz+", "nvz+", "ptz+", "ntz+"),
    *("qlen", "vtop", "vgap", "tgap", "nt", "agree"),
)

# ----------------------------------------------------------------------- lab
DATASETS: tuple[str, ...] = ("synthetic", "locomo", "beam", "longmemeval", "realmem", "folder")
# Synthetic question categories (memlab.datasets.synthetic): the classic ones, the query mix
# agents send besides questions (bare identifiers, keywords, dates: synthetic.querymix), cjk;
# and those that exercise OpenClaw 2026.9.6's new stages (never in the default mix;
# synthetic.release).
# The classic questions (whole sentences asked about one fact); a study of questions alone
# (notebook 02's weight curves) picks this mix.
SYNTH_QUESTIONS: tuple[str, ...] = (
    *("paraphrase", "exact", "update", "redundancy", "distractor", "multi"),
)
SYNTH_PHENOMENA: tuple[str, ...] = (*SYNTH_QUESTIONS, "identifier", "keyword", "dated", "cjk")
# The default mix of SynthConfig and `memlab synth`: every classic category but cjk (Chinese
# notes only make sense with cjk_fraction > 0).
SYNTH_DEFAULT_MIX: tuple[str, ...] = tuple(p for p in SYNTH_PHENOMENA if p != "cjk")
SYNTH_RELEASE_PHENOMENA: tuple[str, ...] = (
    *("importance", "project", "filename", "trigger", "longlived"),
)
# How a synthetic workspace is written (SynthConfig.style): "notes" (an agent's daily logs of
# bullets and MEMORY.md) or "conversation" (one user–assistant session per day).
SYNTH_STYLES: tuple[str, ...] = ("notes", "conversation")
# The question categories that ask about a fact in words: the realism knob `paraphrase`
# rewords them, `confusability` adds look-alike lines for them. Not exact, identifier,
# keyword or dated (their point is the shared words), nor cjk.
SYNTH_WORD_CATEGORIES: tuple[str, ...] = (
    "paraphrase",
    "update",
    "redundancy",
    "distractor",
    "multi",
)

# ------------------------------------------------- judgments and reports (lab)
# Which relevance labels a folder's tables use (--qrels; memlab.datasets.judgments): the human
# ones (judgments.jsonl, and evidence rows written by hand), the implicit ones harvest read
# from the agent's reads and citations (judge "implicit"), or both.
QRELS_SOURCES: tuple[str, ...] = ("human", "implicit", "both")
# The system a harvested folder's shown.trec adds to its tables and judging pool: the hits the
# agent saw, as its OpenClaw ranked them.
DEPLOYED = "deployed"
# How memlab eval and memlab sweep print their tables (--format; memlab.eval.tables).
TABLE_FORMATS: tuple[str, ...] = ("text", "markdown", "latex", "csv")
# memlab judge's answers, key -> meaning (memlab.eval.judge.session).
JUDGE_KEYS: dict[str, str] = {
    "y": "relevant",
    "n": "not relevant",
    "s": "skip",
    "u": "undo",
    "q": "quit",
}
# The linear gain the judging order compares presets by (memlab.eval.judge.order): precision
# at the pool depth (every rank weighs 1/K), or DCG (rank r weighs 1/log2(r + 1)).
JUDGE_GAINS: tuple[str, ...] = ("precision", "dcg")
# What a judging session compares unless told (memlab judge, the notebook's Judge): OpenClaw
# as pinned and as released, the OR-query hybrid and memlab's best, with the deployed hits.
DEFAULT_JUDGE_PRESETS: tuple[str, ...] = ("openclaw", "openclaw-current", "wsum", "memlab-best")
# The smallest drop against a saved run that fails memlab eval --fail-on-regression (a mean
# difference, memlab.eval.guard); read by the command line without loading the lab.
DEFAULT_REGRESSION_MARGIN = 0.02

# ------------------------------------------------------------ memory flush (lab)
# memlab.flush: the policies that decide what a pre-compaction flush writes (meanings in
# memlab.flush.policies), when an agent session starts over (memlab.flush.config), how the
# flushed notes are laid out on disk, and which memory a simulated workspace holds.
FLUSH_POLICIES: tuple[str, ...] = ("none", "extracted", "extractive", "oracle")
FLUSH_RESETS: tuple[str, ...] = ("never", "day", "session")
FLUSH_LAYOUTS: tuple[str, ...] = ("daily", "session")
FLUSH_MEMORIES: tuple[str, ...] = ("notes", "transcripts", "both")

# ------------------------------------------------------------ notebooks (lab)
# The sizes a notebook runs at (memlab.demo.notebooks): "full" when a user runs it, "small"
# in the test suite (MEMLAB_NOTEBOOK_SIZE=small): every cell runs, on a small configuration.
NOTEBOOK_SIZES: tuple[str, ...] = ("full", "small")
