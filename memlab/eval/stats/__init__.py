"""How a dataset's questions relate to their memory: the statistics of ``memlab stats``.

A *unit* is a non-blank line of a memory file (``units``); a question's *evidence* is the
set of units inside its evidence spans; at ``level="file"`` (RealMem; a synthetic corpus
made with ``level="file"``) a *distractor unit* is a whole file holding no evidence line,
else a line outside the spans. A question asked as of a time (``cutoff``) sees only the
units older than it (``memlab.store.asof.visible_rows``); the rest is never a distractor.

Per question, with T its content terms (``lexicon.content_words(query, stems=True)``, the
one rule: lower-cased ``[a-z0-9]+`` runs without stop words, crudely stemmed) and
terms(u) those of a unit (a file: the union of its lines'):

- ``term_overlap`` = |T ∩ ⋃_{e ∈ evidence} terms(e)| / |T|;
- ``distractor_overlap`` = max over distractor units u of |T ∩ terms(u)| / |T| (how
  confusable: the best other unit's share);
- ``sim_evidence`` / ``sim_distractor`` = the largest cosine between the question's vector
  and an evidence line's / a distractor's line's (always per line: a model reads a line
  whole, not a session), under the embedder given (the packaged model, the hashing
  embedder, or none);
- ``span_lines`` / ``span_tokens`` = the mean over its spans of end − start + 1 and of the
  word tokens (``\\w+`` runs) of the span's lines; ``spans`` its number of spans;
- ``form`` (``measure.query_form``): cjk, identifier, dated, multi, keyword or question.

A question is left out of the term statistics (its overlaps NaN, the reason in
``excluded``, counted) when it is in Chinese, Japanese or Korean (``cjk``: the term rule
sees none of its words), has no content term (``no_terms``) or no evidence unit
(``no_evidence``). Every mean is over the questions that have the value.

A set's figures (``summary.summarise``) are these means plus ``distractor_wins`` and the
form shares; the dataset's (``corpus_stats``) add the category mix (shares, like the forms,
of the questions that have evidence: the ones a lab scores), the units per
workspace (mean over groups), the style (``conversation`` when at least half of the units
are transcript lines, ``memlab.stages.shape.transcript_line``; else ``notes``) and the same
figures per category and per group (conversation, chat, persona, workspace).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memlab.eval.stats.measure import measure_queries, query_form, query_terms, term_overlap
from memlab.eval.stats.summary import format_stats, shares, summarise
from memlab.eval.stats.units import dataset_units

__all__ = [
    "corpus_stats",
    "format_stats",
    "query_form",
    "query_terms",
    "stats_embedder",
    "summarise",
    "term_overlap",
]


def stats_embedder(ds: Any, embedder: Any) -> Any:
    """The embedder ``corpus_stats`` reads with: None for ``None`` / ``"none"``; a provider
    name (``"local"``, ``"hashing"``) resolved and kept behind the vector cache the lab uses
    for this dataset (``Lab(cache_vectors=True)``: ``default_lab_index_dir(ds)/vectors``), so
    the lines ``memlab eval`` embedded are not embedded again; an ``Embedder`` as given."""
    if embedder is None or embedder == "none":
        return None
    if not isinstance(embedder, str):
        return embedder
    from memlab.embed import CachedEmbedder, resolve_embedder
    from memlab.eval.lab import default_lab_index_dir

    return CachedEmbedder(resolve_embedder(embedder), default_lab_index_dir(ds) / "vectors")


def corpus_stats(ds: Any, embedder: Any = None) -> dict[str, Any]:
    """The statistics of dataset ``ds`` (module docstring), as ``memlab stats --json``
    prints them: ``summarise`` of every question, plus ``dataset``, ``level``, ``embedder``
    (its model name, or None), ``groups``, ``category_mix``, ``units_per_workspace``,
    ``files_per_workspace`` (means over groups), ``style``, ``transcript_share``, ``by_category`` and ``by_group`` (each a ``summarise``;
    a group's also ``units`` and ``transcript_share``) and ``per_query`` (the rows of
    ``measure.measure_queries``, a DataFrame: drop it before ``json.dumps``).
    ``embedder``: see ``stats_embedder``."""
    level = ds.info.get("level", "unit")
    units = dataset_units(ds)
    emb = stats_embedder(ds, embedder)
    vectors = None
    if emb is not None:

        def vectors(group: str, texts: list[str], queries: list[str]) -> tuple[Any, Any]:
            uv = np.asarray(emb.embed_documents(texts)) if texts else np.zeros((0, 1))
            if hasattr(emb, "prefetch"):
                emb.prefetch(queries)
            qv = np.asarray([emb.embed_query(q) for q in queries])
            if hasattr(emb, "save"):
                emb.save()
            return uv, qv

    rows = measure_queries(ds, units, vectors, level)
    talk = {g: float(u.transcript.mean()) if len(u) else 0.0 for g, u in units.items()}
    n_units = {g: len(u) for g, u in units.items()}
    total = sum(n_units.values())
    share = sum(talk[g] * n for g, n in n_units.items()) / total if total else 0.0
    out: dict[str, Any] = {
        "dataset": ds.name,
        "level": level,
        "embedder": None if emb is None else str(getattr(emb, "model", emb)),
        "groups": len(units),
        **summarise(rows),
        "category_mix": shares(rows.loc[rows["spans"] > 0, "category"]),
        "units_per_workspace": float(np.mean(list(n_units.values()))) if n_units else 0.0,
        "files_per_workspace": float(np.mean([len(u.files) for u in units.values()]))
        if units
        else 0.0,
        "style": "conversation" if share >= 0.5 else "notes",
        "transcript_share": share,
    }
    out["by_category"] = {str(c): summarise(r) for c, r in rows.groupby("category", sort=True)}
    out["by_group"] = {
        str(g): {**summarise(r), "units": n_units[g], "transcript_share": talk[g]}
        for g, r in rows.groupby("group", sort=True)
    }
    out["per_query"] = rows
    return out
