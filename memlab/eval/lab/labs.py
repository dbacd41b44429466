"""`Lab`: a dataset bound to its indexes (one per workspace group), the family of labs by
FTS5 tokenizer and memory-file rule, the line lab of best-line systems, and candidates
retrieved once per depth and cached (`memlab.eval.lab.candidates.LabCandidates`).

A retrieval is one `Lab.group_candidates` per workspace group, merged by
`Lab.merge_groups`; an ``executor`` (`GroupExecutor`, e.g.
`memlab.eval.raylab.RayRunner`) runs the groups elsewhere and hands the parts back to the
same merge.

Size: one class: `Lab`'s caches (indexes by group, the family of labs `for_tokenizer`
shares, the line lab, candidates by depth and cut-off) are read by `candidates`,
`with_best_line` and `retrieve` → `group_candidates` → `merge_groups` alike; the
candidate arrays are already `memlab.eval.lab.candidates`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from memlab.chunking import ChunkerConfig
from memlab.config.vocab import EVAL_LEVELS
from memlab.embed.cached import CachedEmbedder
from memlab.eval.lab.candidates import GROUP_SEP, LabCandidates, keyed_evidence
from memlab.eval.merge import TextSource, merge_candidate_sets
from memlab.eval.relevance import candidate_coverage, span_table
from memlab.retrieval.candidates import CandidateSet, retrieve
from memlab.stages.best_line import line_arrays, line_keys
from memlab.store import MemoryIndex
from memlab.store.filerules import DEFAULT_MEMORY_FILES, check_memory_files, chunker_fingerprint

if TYPE_CHECKING:
    from memlab.datasets.base import Dataset
    from memlab.embed import Embedder
    from memlab.pipeline import Pipeline

__all__ = ["UNITS", "GroupExecutor", "Lab", "default_lab_index_dir", "unit_chunker"]

UNITS = {"chunk": ChunkerConfig("openclaw"), "turn": ChunkerConfig("line")}


class GroupExecutor(Protocol):
    """Runs a lab's retrieval somewhere else (`memlab.eval.raylab.RayRunner`): returns what
    `Lab.retrieve` returns, computed by `Lab.group_candidates` per group and merged by
    `Lab.merge_groups`."""

    def retrieve(
        self, lab: Lab, depth: int, *, keyword_mode: str, keyword_fallback: bool, vector: bool
    ) -> LabCandidates: ...


def unit_chunker(unit: str | ChunkerConfig) -> ChunkerConfig:
    """``"chunk"`` → OpenClaw's bounded chunker; ``"turn"`` → one line per chunk."""
    if isinstance(unit, ChunkerConfig):
        return unit
    if unit not in UNITS:
        raise ValueError(
            f"unit must be one of {', '.join(UNITS)} (or a ChunkerConfig), got {unit!r}"
        )
    return UNITS[unit]


def default_lab_index_dir(dataset: Dataset) -> Path:
    """``cache_dir("lab", f"{name}-{h}")`` with ``h`` = sha256(real path of the dataset
    root)[:16]: one folder per dataset folder (two copies of a corpus do not share
    indexes; the workspace's own name keeps the folder recognisable)."""
    from memlab.paths import cache_dir

    real = str(Path(dataset.root).expanduser().resolve())
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(dataset.name))
    return cache_dir("lab", f"{safe}-{hashlib.sha256(real.encode()).hexdigest()[:16]}")


class Lab:
    """A dataset with one index per workspace group and cached candidates.

    ``embedder``: an ``Embedder`` or a provider name (``"local"`` default,
    ``"hashing"``, ``"none"``); ``unit``: ``"chunk"`` (OpenClaw chunks) or
    ``"turn"`` (one line per chunk), or a ``ChunkerConfig``. Index files go
    to ``index_dir`` (default ``default_lab_index_dir(dataset)``, in the user
    cache: never inside the dataset's folder, which may be a user's own
    workspace), named by group and configuration, so a second run re-embeds nothing.

    Each system runs on the index its ``Pipeline.retrieval_spec().fts_tokenizer``
    asks for (``memlab-best``: porter), any system that names none on this lab's
    ``fts_tokenizer`` index (``for_tokenizer``, ``lab_for``): one ``run_experiment``
    compares, on the same questions, ``memlab-best`` on its porter index with
    ``openclaw`` on OpenClaw's unicode61 one. Likewise its ``memory_files`` rule
    (``openclaw-current``: the 2026.9 release's files and chunker): one lab, hence one set
    of indexes, per (tokenizer, memory-file rule).

    ``cache_vectors`` (default False: the embedder is used as given) wraps the
    embedder in a `CachedEmbedder` under ``index_dir/vectors`` and keeps it filled:
    chunk vectors are saved after each index sync, indexes with another tokenizer
    reuse the vectors already in this lab's indexes, and the questions are embedded
    once, in one batch, before a retrieval.

    ``as_of`` (default True): when the dataset's questions have a ``cutoff`` column (Unix
    seconds, NaN = none; ``memlab.datasets.base``), each question is answered from the
    memory as of its cut-off — only older units are candidates (``memlab.store.asof``),
    in this lab, its line lab and every tokenizer's lab; the candidate cache is keyed by
    the cut-offs. False: every question sees the whole workspace. ``level``
    (``memlab.config.vocab.EVAL_LEVELS``): ``"unit"`` (default) scores the ranked units,
    ``"file"`` their files (a file = a session; `LabCandidates.rank`).
    ``executor`` (default None: here, group after group) runs each retrieval's groups
    elsewhere — `memlab.eval.raylab.RayRunner`: one Ray task per workspace group, the
    embedding on a Ray Data actor pool — and is shared by every lab of the family.
    """

    def __init__(
        self,
        dataset: Dataset,
        *,
        embedder: Embedder | str | None = "local",
        unit: str | ChunkerConfig = "chunk",
        index_dir: str | Path | None = None,
        fts_tokenizer: str = "unicode61",
        fts_path_prefix: bool = False,
        progress: bool | None = None,
        cache_vectors: bool = False,
        memory_files: str = DEFAULT_MEMORY_FILES,
        as_of: bool = True,
        level: str = "unit",
        executor: GroupExecutor | None = None,
    ) -> None:
        if level not in EVAL_LEVELS:
            raise ValueError(f"level must be one of {', '.join(EVAL_LEVELS)}; got {level!r}")
        if isinstance(embedder, str):
            from memlab.embed import resolve_embedder

            embedder = resolve_embedder(embedder)
        self.dataset = dataset
        self.index_dir = Path(index_dir) if index_dir else default_lab_index_dir(dataset)
        self.cache_vectors = bool(cache_vectors) and embedder is not None
        if self.cache_vectors and not isinstance(embedder, CachedEmbedder):
            embedder = CachedEmbedder(embedder, self.index_dir / "vectors")
        self.embedder = embedder
        self.chunker = unit_chunker(unit)
        self.fts_tokenizer = fts_tokenizer
        self.fts_path_prefix = fts_path_prefix
        self.memory_files = check_memory_files(memory_files)
        self.progress = progress
        self.as_of = bool(as_of)
        self.level = level
        self.executor = executor
        self._indexes: dict[str, MemoryIndex] = {}
        self._cache: dict[tuple[Any, ...], LabCandidates] = {}
        # The labs of this dataset by (FTS5 tokenizer, memory-file rule), shared by all of
        # them (self included).
        self._labs: dict[tuple[str, str], Lab] = {(fts_tokenizer, self.memory_files): self}
        # The line-unit lab of best_line systems, and their candidate sets with line scores.
        self._line_lab: Lab | None = None
        self._line_scores: dict[tuple[Any, ...], tuple[LabCandidates, LabCandidates]] = {}

    def __repr__(self) -> str:
        model = self.embedder.model if self.embedder is not None else "fts-only"
        return (
            f"Lab({self.dataset.name!r}, queries={len(self.dataset.queries)}, groups="
            f"{len(self.dataset.workspaces)}, model={model!r}, chunker={self.chunker.fingerprint()!r}"
            + (", as of each question's cut-off" if self.cutoffs() is not None else "")
            + (f", level={self.level!r}" if self.level != "unit" else "")
            + ")"
        )

    def cutoffs(self) -> np.ndarray | None:
        """The questions' time cut-offs [Q] (the dataset's ``cutoff`` column, dataset
        order) when ``as_of`` and some are set; None when every question sees all."""
        q = self.dataset.queries
        if not self.as_of or "cutoff" not in q.columns:
            return None
        cut = q["cutoff"].to_numpy(dtype=np.float64)
        return cut if np.isfinite(cut).any() else None

    def cutoff_key(self) -> str | None:
        """What the candidate cache is keyed by besides the candidate generation: a digest
        of `cutoffs` (None without)."""
        cut = self.cutoffs()
        return None if cut is None else hashlib.sha256(cut.tobytes()).hexdigest()[:16]

    def index(self, group: str) -> MemoryIndex:
        """The (synced) index of one workspace group (with ``cache_vectors``, the
        vectors the sync computed are then saved to the cache)."""
        if group not in self._indexes:
            ws = self.dataset.workspaces[group]
            model = self.embedder.model if self.embedder is not None else "fts-only"
            key = (
                f"{model}|{self.chunker.fingerprint()}|{self.fts_tokenizer}|{self.fts_path_prefix}"
            )
            if self.memory_files != DEFAULT_MEMORY_FILES:  # 2026.4 file names unchanged
                key += f"|{chunker_fingerprint(self.memory_files, self.chunker)}"
            tag = hashlib.sha256(key.encode()).hexdigest()[:10]
            safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in group)
            idx = MemoryIndex(
                ws,
                db_path=self.index_dir / f"{safe}-{tag}.sqlite",
                embedder=self.embedder,
                chunker=self.chunker,
                fts_tokenizer=self.fts_tokenizer,
                fts_path_prefix=self.fts_path_prefix,
                memory_files=self.memory_files,
                progress=self.progress,
            )
            idx.ensure_synced()
            self._indexes[group] = idx
        if self.cache_vectors:
            self.embedder.save()  # type: ignore[union-attr]
        return self._indexes[group]

    # ------------------------------------------------------------------ index per system
    def for_tokenizer(self, fts_tokenizer: str | None, memory_files: str | None = None) -> Lab:
        """This lab over indexes with another FTS5 tokenizer (same dataset, embedder, unit,
        folder, path-prefix setting and vector cache); ``None`` or this lab's own tokenizer
        → this lab. Built once and shared by every lab of the family. With
        ``cache_vectors``, the chunk vectors of this lab's indexes are put in the cache
        first, so the new indexes embed nothing already embedded. ``memory_files`` (None =
        this lab's) picks the memory-file rule of the indexes the same way."""
        tok = fts_tokenizer or self.fts_tokenizer
        rule = check_memory_files(memory_files or self.memory_files)
        lab = self._labs.get((tok, rule))
        if lab is None:
            # (An executor fills the vector cache itself before any index is built: the
            # indexes are on its workers, not here.)
            if self.cache_vectors and self.executor is None:
                cache: CachedEmbedder = self.embedder  # type: ignore[assignment]
                for group in self.dataset.workspaces:
                    idx = self.index(group)
                    if idx.table.vectors is not None and len(idx.table):
                        every = np.arange(len(idx.table))
                        cache.remember(idx.texts(every), idx.table.vectors[every])
                cache.save()
            lab = Lab(
                self.dataset,
                embedder=self.embedder,
                unit=self.chunker,
                index_dir=self.index_dir,
                fts_tokenizer=tok,
                fts_path_prefix=self.fts_path_prefix,
                progress=self.progress,
                cache_vectors=self.cache_vectors,
                memory_files=rule,
                as_of=self.as_of,
                level=self.level,
                executor=self.executor,
            )
            lab._labs = self._labs
            self._labs[(tok, rule)] = lab
        return lab

    def lab_for(self, p: Pipeline) -> Lab:
        """The lab whose indexes system ``p`` runs on: ``for_tokenizer`` of the tokenizer
        its ``retrieval_spec`` names (this lab's when it names none) and of its memory-file
        rule."""
        spec = p.retrieval_spec(self.embedder is not None)
        return self.for_tokenizer(spec.fts_tokenizer, spec.memory_files)

    def candidate_key(self, p: Pipeline) -> tuple[str, bool]:
        """What tells ``p``'s candidate sets apart on one index: its ``RetrievalSpec``'s
        ``candidate_key`` (keyword mode, keyword fallback) given this lab's embedder."""
        return p.retrieval_spec(self.embedder is not None).candidate_key

    # ------------------------------------------------------------------ candidates
    def candidates(
        self,
        depth: int = 24,
        *,
        keyword_mode: str = "and",
        keyword_fallback: bool = False,
        vector: bool = True,
    ) -> LabCandidates:
        """Candidates of all questions at ``depth`` per leg on this lab's indexes (cached;
        deeper sets serve shallower systems, since a pipeline cuts candidates at its own
        depth)."""
        key = (keyword_mode, keyword_fallback, vector, self.cutoff_key(), self.level)
        for (*k, d), lc in self._cache.items():
            if tuple(k) == key and d >= depth:
                return lc
        lc = self.retrieve(
            depth, keyword_mode=keyword_mode, keyword_fallback=keyword_fallback, vector=vector
        )
        self._cache[(*key, depth)] = lc
        return lc

    def candidates_for_system(self, p: Pipeline, depth: int | None = None) -> LabCandidates:
        """The candidates system ``p`` ranks: on ``lab_for(p)``, with its candidate key, at
        ``depth`` per leg (default ``p.depth``; cached as `candidates`); with the line
        scores of ``p.best_line`` attached (`with_best_line`) when it has one."""
        km, kf = self.candidate_key(p)
        lc = self.lab_for(p).candidates(
            p.depth if depth is None else depth, keyword_mode=km, keyword_fallback=kf
        )
        return self.with_best_line(lc, p)

    def line_lab(self) -> Lab:
        """This lab one line per unit (``unit="turn"``; same dataset, embedder, folder,
        tokenizer and vector cache); this lab itself when its unit is the line. Built once."""
        if self.chunker.kind == "line":
            return self
        if self._line_lab is None:
            self._line_lab = Lab(
                self.dataset,
                embedder=self.embedder,
                unit="turn",
                index_dir=self.index_dir,
                fts_tokenizer=self.fts_tokenizer,
                fts_path_prefix=self.fts_path_prefix,
                progress=self.progress,
                cache_vectors=self.cache_vectors,
                memory_files=self.memory_files,
                as_of=self.as_of,
                executor=self.executor,
            )
        return self._line_lab

    def line_index(self, p: Pipeline, group: str) -> MemoryIndex:
        """The line-per-row index of workspace ``group`` that system ``p``'s line system
        (``Pipeline.line_system``) runs on in this lab — the index `with_best_line` scores
        lines on — for ``Pipeline.retrieve(..., line_index=)``, so one query's line scores
        come from the lab's own line index, not from a second copy (the chunk index's line
        view). ValueError when ``p.best_line`` is off."""
        return self.line_lab_for(p).index(group)

    def line_lab_for(self, p: Pipeline) -> Lab:
        """The line lab whose indexes system ``p``'s line system runs on: `line_lab` with
        the tokenizer ``Pipeline.line_tokenizer`` gives beside ``p``'s chunk indexes
        (`lab_for`) and their memory-file rule, as ``Pipeline.line_index`` picks a line view
        beside one index."""
        chunk_lab = self.lab_for(p)
        return self.line_lab().for_tokenizer(
            p.line_tokenizer(chunk_lab.fts_tokenizer), chunk_lab.memory_files
        )

    def with_best_line(self, lc: LabCandidates, p: Pipeline) -> LabCandidates:
        """``lc`` with the ``cs.extra`` arrays system ``p`` reads from its line system
        (``memlab.stages.best_line.line_keys``): the line system (``Pipeline.line_system``)
        run on `line_lab` for every question, mapped onto the candidate chunks
        (``memlab.stages.best_line.line_arrays``) — what ``Pipeline.retrieve`` does on one
        index, on `line_lab_for` ``p``. ``lc`` itself when ``p.best_line`` is off or ``lc``
        carries them already; cached per (candidate set, keys)."""
        keys = line_keys(p)
        if all(k in lc.cs.extra for k in keys):  # off, or attached already
            return lc
        key = (id(lc), keys)
        hit = self._line_scores.get(key)
        if hit is not None and hit[0] is lc:
            return hit[1]
        line_p = p.line_system()
        km, kf = self.candidate_key(line_p)
        llc = self.line_lab_for(p).candidates(line_p.depth, keyword_mode=km, keyword_fallback=kf)
        if llc.qids != lc.qids:  # one dataset, so one question order; checked all the same
            raise ValueError("line lab and chunk lab disagree on the question order")
        extra = {**lc.cs.extra, **line_arrays(p, lc.cs, line_p, llc.cs)}
        out = dataclasses.replace(lc, cs=dataclasses.replace(lc.cs, extra=extra))
        self._line_scores[key] = (lc, out)
        return out

    def candidates_for(self, systems: Sequence[Pipeline]) -> dict[str, LabCandidates]:
        """One shared candidate set per (tokenizer, keyword mode, fallback) of the systems,
        at the deepest depth any of them needs; keyed by system name, in system order."""
        by_tok: dict[tuple[str, str], list[Pipeline]] = {}
        for p in systems:
            spec = p.retrieval_spec(self.embedder is not None)
            key = (spec.fts_tokenizer or self.fts_tokenizer, spec.memory_files)
            by_tok.setdefault(key, []).append(p)
        found: dict[str, LabCandidates] = {}
        # Tokenizer by tokenizer, in order of first appearance: indexes, vector-cache
        # fills and retrievals run in a fixed order (one system's index at a time).
        for (tok, rule), group in by_tok.items():
            lab = self.for_tokenizer(tok, rule)
            depths: dict[tuple[str, bool], int] = {}
            for p in group:
                k = lab.candidate_key(p)
                depths[k] = max(depths.get(k, 0), p.depth)
            for p in group:
                km, kf = lab.candidate_key(p)
                found[p.name] = self.with_best_line(
                    lab.candidates(depths[(km, kf)], keyword_mode=km, keyword_fallback=kf), p
                )
        return {p.name: found[p.name] for p in systems}

    def retrieve(
        self,
        depth: int,
        *,
        keyword_mode: str = "and",
        keyword_fallback: bool = False,
        vector: bool = True,
    ) -> LabCandidates:
        """A fresh retrieval of every question on this lab's indexes (no cache: what
        `candidates` runs on a miss; benchmarks time it). Each group's questions are
        retrieved on that group's index (`group_candidates`), then merged
        (`merge_groups`: evidence coverage included). With an ``executor`` the groups run
        there (`GroupExecutor.retrieve`), with the same two functions."""
        if self.executor is not None:
            return self.executor.retrieve(
                self,
                depth,
                keyword_mode=keyword_mode,
                keyword_fallback=keyword_fallback,
                vector=vector,
            )
        if self.cache_vectors:
            self.embedder.prefetch(self.dataset.queries["query"].tolist())  # type: ignore[union-attr]
        parts = []
        for group in self.dataset.workspaces:
            got = self.group_candidates(group, depth, keyword_mode, keyword_fallback, vector)
            if got is not None:
                parts.append((group, *got))
        lc = self.merge_groups(parts, [self.index(g) for g, _, _ in parts])
        if self.cache_vectors:
            self.embedder.save()  # type: ignore[union-attr]
        return lc

    def group_candidates(
        self, group: str, depth: int, keyword_mode: str, keyword_fallback: bool, vector: bool
    ) -> tuple[CandidateSet, np.ndarray] | None:
        """The candidates of the questions asked against workspace ``group``, on its index
        (synced first): ``(candidate set, the questions' rows in dataset.queries)``; None
        when no question is asked against it."""
        q = self.dataset.queries
        rows = np.nonzero((q["group"] == group).to_numpy())[0]
        if rows.size == 0:
            return None
        idx = self.index(group)
        cut = self.cutoffs()
        cs = retrieve(
            idx,
            q["query"].iloc[rows].tolist(),
            qids=q["qid"].iloc[rows].tolist(),
            depth=depth,
            vector=vector,
            keyword_mode=keyword_mode,
            keyword_fallback=keyword_fallback,
            times=q["time"].iloc[rows].to_numpy(),
            cutoffs=None if cut is None else cut[rows],
        )
        return cs, rows

    def merge_groups(
        self,
        parts: Sequence[tuple[str, CandidateSet, np.ndarray]],
        sources: Sequence[TextSource],
    ) -> LabCandidates:
        """One `LabCandidates` over the dataset's questions from per-group parts
        ``(group, candidate set, dataset rows)`` (`group_candidates`): the candidate sets
        merged (`merge_candidate_sets`; ``sources[i]`` serves part i's chunk texts) and the
        evidence coverage of every candidate computed (`candidate_coverage`, paths keyed by
        group)."""
        q = self.dataset.queries
        merged = merge_candidate_sets(parts, sources, len(q))
        sizes = [len(cs.table) for _, cs, _ in parts]
        chunk_group = np.repeat(np.array([g for g, _, _ in parts], dtype=object), sizes)
        keys = chunk_group + GROUP_SEP + merged.table.paths if len(chunk_group) else chunk_group
        qids = q["qid"].tolist()
        vocab = list(dict.fromkeys(keys.tolist()))
        spans = span_table(keyed_evidence(self.dataset), qids, vocab)
        path_idx = {p: i for i, p in enumerate(vocab)}
        cand_path = np.where(
            merged.pos >= 0,
            np.vectorize(path_idx.get, otypes=[np.int64])(keys[np.maximum(merged.pos, 0)])
            if merged.pos.size
            else merged.pos,
            -1,
        )
        safe = np.maximum(merged.pos, 0)
        covers = candidate_coverage(
            cand_path, merged.table.start_lines[safe], merged.table.end_lines[safe], spans
        )
        return LabCandidates(
            cs=merged,
            qids=qids,
            spans=spans,
            covers=covers,
            categories=q["category"].to_numpy(dtype=object),
            cand_path=cand_path,
            level=self.level,
            groups=tuple(g for g, _, _ in parts),
        )
