"""Seeded generator of OpenClaw workspaces with questions and evidence spans.

``generate(SynthConfig(...), out_dir)`` writes ``out_dir/workspace`` (``MEMORY.md``
plus ``memory/YYYY-MM-DD.md`` daily logs) and the folder format of
``memlab.datasets.base`` (``dataset.json``, ``queries.jsonl``,
``evidence.jsonl``), plus ``negatives.jsonl``: lines that look like evidence
but are not (stale versions of an updated fact, sibling-attribute distractors).

Each question category isolates one retrieval phenomenon whose strength is a
config parameter:

- ``paraphrase``: the query words are swapped for synonyms
  (``paraphrase_strength`` = share of paraphrase units swapped; 1 → no content
  word or stem shared with the note). Hard for BM25, fine for embeddings.
- ``exact``: an opaque token (commit hash, ticket ID, env var, config key,
  code symbol, error string) in a line that has dozens of near-identical
  neighbours with other tokens. Easy for BM25, hard for embeddings. Every query
  word occurs in the evidence line (so an AND keyword query matches it) and the
  token occurs nowhere else in the workspace.
- ``update``: ``update_versions`` statements of one fact on increasing days
  with the same wording; only the latest is evidence. Decay's case.
- ``redundancy``: three distinct facts on one topic, the first repeated
  near-verbatim on ``redundancy_copies`` days; copies share a ``subtopic``.
  MMR's case.
- ``distractor``: ``distractors_per_fact`` lines about the same person's
  sibling attributes in the same wording (not evidence).
- ``multi``: two facts in two files (MEMORY.md + a daily log, or two logs).
- ``identifier``: what agents send besides questions: a bare identifier (commit, ticket,
  host:port, IP, error code, file path, version, host name; two queries in three are
  the identifier alone, the third a question about it) whose line is the evidence, with
  ``near_misses`` distractors one edit away elsewhere (``INC-3318`` for ``INC-3317``).
- ``keyword``: a short keyword query (``printer warranty``) for a plain fact, against
  lines holding only some of its keywords.
- ``dated``: "what happened on March 3?" (or ``2026-03-03``): the evidence is that day's
  log (one span, title to last line), the answer its notable event, whose line does not
  repeat the date (only the log's name and title carry it).
- ``cjk``: Chinese notes and questions (FTS5 ``unicode61`` cannot segment them).

The default mix is every category above but ``cjk`` (``memlab.config.vocab.SYNTH_DEFAULT_MIX``);
``querymix`` has the rules of ``identifier``, ``keyword`` and ``dated``.

Five more categories exercise OpenClaw 2026.9.6's new stages and are never in the default
mix (``ALL_PHENOMENA`` lists all; ``release`` has the details): ``importance``
(``<!-- importance: N -->`` entries against low-importance near-copies), ``project``
(settings tagged ``<!-- project: key -->``, one active project in ``info``), ``filename``
(notes found by their file's name), ``trigger`` (``<!-- trigger: … -->`` entries and the
messages that should recall them) and ``longlived`` (a fact in a log over a year old
against a recent transient note). They may add files beyond the daily logs: named notes
under ``memory/`` and old dated logs.

Parts (the builders and the writer import from ``base``; no part imports another's
private names):

- ``base``: ``SynthConfig``, the build state ``Build``, the builder registry
  ``GENERATORS`` / ``register``, the seeded streams ``random_stream``.
- ``phenomena``: one builder per classic category, and ``capacity``.
- ``querymix`` + ``querymix_wording``: the builders and wording of ``identifier``,
  ``keyword`` and ``dated``.
- ``release`` + ``release_wording``: the release phenomena's builders and wording.
- ``lexicon``: wording of the background (entities, opaque tokens, filler,
  file layout); ``facts``: wording of the facts questions ask about.
- ``slots``: filling template slots; ``writer``: placing notes into files,
  the folder format, ``generate`` and ``load_negatives``.

Determinism: every random choice comes from ``random.Random`` streams seeded by
a string of (seed, stream name), never from global state or ``hash()``, so the
same config writes byte-identical files. Streams are per phenomenon, so e.g.
changing ``paraphrase_strength`` changes only the paraphrase queries.
"""

from __future__ import annotations

from memlab.datasets.synthetic.base import (
    ALL_PHENOMENA,
    FORMAT_VERSION,
    GENERATOR,
    MAX_NEAR_MISSES,
    MEMORY_PATH,
    PHENOMENA,
    SynthConfig,
)
from memlab.datasets.synthetic.phenomena import capacity
from memlab.datasets.synthetic.writer import generate, generated_with, load_negatives

__all__ = [
    "ALL_PHENOMENA",
    "FORMAT_VERSION",
    "GENERATOR",
    "MAX_NEAR_MISSES",
    "MEMORY_PATH",
    "PHENOMENA",
    "SynthConfig",
    "capacity",
    "generate",
    "generated_with",
    "load_negatives",
]
