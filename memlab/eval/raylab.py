"""A lab's work on a Ray cluster: ``memlab eval … --ray ADDRESS`` (``--ray local`` starts a
cluster on this machine for the run).

`RayRunner` is a `memlab.eval.lab.GroupExecutor`: given to a `Lab` (``Lab(…, executor=
runner)``), it runs every retrieval of the lab and of the labs it spawns (other FTS5
tokenizers, the line lab of best-line systems) in three steps:

1. **texts** — one Ray task per workspace group (`group_texts`) lists the chunk texts its
   index will hold (the index's own discovery and chunking, nothing embedded);
2. **embedding** — the texts and questions the lab's vector cache (`CachedEmbedder` under
   the lab's ``index_dir/vectors``, on the driver) lacks go through Ray Data:
   ``map_batches`` over an actor pool (`EmbedBatches`, one CPU each) that builds the
   embedder once per actor, so the model is loaded once per worker; the vectors fill the
   cache, and a second run embeds nothing;
3. **candidates** — one Ray task per group (`group_candidates`) builds the group's index
   from the vectors it is sent (the embedder is never called) and retrieves the group's
   questions with ``Lab.group_candidates``; the candidate sets and chunk texts come back
   and ``Lab.merge_groups`` merges them as a local run does.

Ranking, metrics, paired tests and saved files are then computed on the driver as
always, so a run is the local run: the indexes are built by the same code from the
same vectors (the ONNX embedder's vectors do not depend on how texts are batched), and
the candidates are retrieved by the same function.

Workers need memlab (and its model package) installed and the dataset at the same path
as the driver (a shared volume); each keeps its indexes under its own
``$XDG_CACHE_HOME/memlab/lab`` (docs/ray.md). Ray is optional: ``pip install
'memlab[ray]'``; it is imported only when a runner starts.

Size: one module because driver and workers speak one protocol: `RayRunner.retrieve`
sends `LabSpec`, the vectors and `embedder_factory`'s recipe to `group_texts`,
`EmbedBatches` and `group_candidates` and merges what comes back, so both sides change
with the payload; Ray is imported here alone (`import_ray`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memlab.embed.cached import CachedEmbedder
from memlab.eval.lab import Lab, default_lab_index_dir
from memlab.eval.merge import TextList

if TYPE_CHECKING:
    from memlab.chunking import ChunkerConfig
    from memlab.datasets.base import Dataset
    from memlab.embed import Embedder
    from memlab.eval.lab import LabCandidates
    from memlab.retrieval.candidates import CandidateSet

__all__ = [
    "RAY_INSTALL",
    "EmbedBatches",
    "LabSpec",
    "RayRunner",
    "RayUnavailable",
    "embedder_factory",
    "group_candidates",
    "group_texts",
    "import_ray",
]

RAY_INSTALL = "pip install 'memlab[ray]'"
# Ray picks the machine's routable address for a node unless told it is alone: a cluster
# started for one run (`--ray local`) then listens on 127.0.0.1 only.
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


class RayUnavailable(RuntimeError):
    """Ray is not installed (or a cluster cannot be reached); the message says what to do."""


def import_ray() -> Any:
    """The ``ray`` module with Ray Data, or `RayUnavailable` naming the extra to install."""
    try:
        import ray
        import ray.data  # the embedding step runs on Ray Data
    except ImportError as exc:
        raise RayUnavailable(
            f"--ray needs Ray with Ray Data, which is not installed: {RAY_INSTALL}"
            f" ({type(exc).__name__}: {exc})"
        ) from exc
    return ray


def embedder_factory(
    provider: str, *, model: str | None = None, backend: str | None = None
) -> Callable[[], Embedder | None]:
    """A picklable recipe for the embedder a worker builds: ``resolve_embedder(provider,
    model=, backend=)`` called on the worker (an embedder object itself may hold an
    unpicklable lock or a loaded model); ``provider="none"`` builds None."""
    from memlab.embed import resolve_embedder

    kwargs: dict[str, Any] = {"model": model}
    if backend is not None:
        kwargs["backend"] = backend
    return functools.partial(resolve_embedder, provider, **kwargs)


def _peak_rss_mib() -> float:
    """This process's peak resident memory so far (ru_maxrss: KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@dataclass(frozen=True)
class LabSpec:
    """What a worker needs to rebuild a lab: the dataset and the index settings, the
    embedder as a recipe (None: a keyword-only lab), and the index folder when the driver's
    lab was given one (None: the worker's own ``default_lab_index_dir``, under its cache)."""

    dataset: Dataset
    chunker: ChunkerConfig
    fts_tokenizer: str
    fts_path_prefix: bool
    memory_files: str
    factory: Callable[[], Embedder | None] | None
    index_dir: str | None
    as_of: bool = True

    @classmethod
    def of(cls, lab: Lab, factory: Callable[[], Embedder | None] | None) -> LabSpec:
        """The spec of ``lab`` (``factory`` builds its embedder on a worker)."""
        own = lab.index_dir != default_lab_index_dir(lab.dataset)
        return cls(
            dataset=lab.dataset,
            chunker=lab.chunker,
            fts_tokenizer=lab.fts_tokenizer,
            fts_path_prefix=lab.fts_path_prefix,
            memory_files=lab.memory_files,
            factory=factory if lab.embedder is not None else None,
            index_dir=str(lab.index_dir) if own else None,
            as_of=lab.as_of,
        )

    def lab(self, embedder: Embedder | None) -> Lab:
        """The lab on this worker, with ``embedder`` as given (no vector cache of its own)."""
        return Lab(
            self.dataset,
            embedder=embedder,
            unit=self.chunker,
            index_dir=self.index_dir,
            fts_tokenizer=self.fts_tokenizer,
            fts_path_prefix=self.fts_path_prefix,
            progress=False,
            cache_vectors=False,
            memory_files=self.memory_files,
            as_of=self.as_of,
        )


class _Counted:
    """An embedder that counts the texts it is asked to embed (a worker's index should
    need none: every vector is sent with the task)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.embedded = 0

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.embedded += 1
        return self.inner.embed_query(text)


def group_texts(spec: LabSpec, group: str) -> dict[str, Any]:
    """The chunk texts of workspace ``group`` under ``spec``'s memory-file rule and
    chunker, each once, in file order (what its index embeds), read on this worker:
    ``{"group", "texts", "seconds", "pid", "rss_mib"}``. Unreadable files are left out, as
    a sync leaves them out."""
    from memlab.files.workspace import resolve_workspace
    from memlab.store.filerules import chunk_file, discover_files
    from memlab.store.sync import read_source

    t0 = time.perf_counter()
    ws = resolve_workspace(spec.dataset.workspaces[group])
    texts: dict[str, str] = {}
    for f in discover_files(spec.memory_files, ws, ()):
        try:
            text = read_source(f, ws)[0]
        except OSError:  # MemoryFileError included
            continue
        for c in chunk_file(spec.memory_files, spec.chunker, f, text):
            texts.setdefault(c.hash, c.text)
    return {
        "group": group,
        "texts": list(texts.values()),
        "seconds": time.perf_counter() - t0,
        "pid": os.getpid(),
        "rss_mib": _peak_rss_mib(),
    }


def group_candidates(
    spec: LabSpec,
    group: str,
    vectors: dict[str, Any] | None,
    depth: int,
    keyword_mode: str,
    keyword_fallback: bool,
    vector: bool,
) -> dict[str, Any]:
    """Workspace ``group``'s index, built on this worker from the vectors sent
    (``{"docs": texts, "doc_vectors", "queries": stripped texts, "query_vectors"}``, or
    None for a keyword-only lab), and the candidates of its questions
    (``Lab.group_candidates``). Returns ``{"group", "cs"`` (the candidate set, without its
    index handle), ``"rows", "texts"`` (every chunk's text, by table position),
    ``"embedded"`` (texts the worker had to embed itself: 0 when the vectors sent were
    complete), ``"seconds", "pid", "rss_mib"}``; None for ``cs`` when no question is asked
    against the group."""
    t0 = time.perf_counter()
    counted = None
    embedder: Any = None
    if spec.factory is not None:
        counted = _Counted(spec.factory())
        # A folder that never exists: the cache is only the vectors sent, in memory.
        embedder = CachedEmbedder(counted, Path(tempfile.gettempdir()) / "memlab-ray-unused")
        if vectors is not None:
            embedder.remember(vectors["docs"], vectors["doc_vectors"])
            embedder.remember(vectors["queries"], vectors["query_vectors"], kind="query")
    lab = spec.lab(embedder)
    got = lab.group_candidates(group, depth, keyword_mode, keyword_fallback, vector)
    cs: CandidateSet | None = None
    rows = None
    texts: list[str] = []
    if got is not None:
        cs, rows = got
        idx = lab.index(group)
        texts = idx.texts(np.arange(len(cs.table)))
        # The index handle (an SQLite connection) stays here; the texts travel instead.
        cs = dataclasses.replace(
            cs, index=None, table=dataclasses.replace(cs.table, derived_cache={})
        )
        idx.close()
    return {
        "group": group,
        "cs": cs,
        "rows": rows,
        "texts": texts,
        "embedded": counted.embedded if counted is not None else 0,
        "seconds": time.perf_counter() - t0,
        "pid": os.getpid(),
        "rss_mib": _peak_rss_mib(),
    }


class EmbedBatches:
    """A Ray Data ``map_batches`` actor: builds the embedder once (``factory()``; the model
    loads on the first batch) and embeds each batch of ``{"kind", "text"}`` rows — ``doc``
    rows as the lab's vector cache embeds documents (``embed_documents``), ``query`` rows
    as it embeds questions (``CachedEmbedder.prefetch``), so every vector is the one a
    local run stores."""

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self.embedder = factory()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        t0 = time.perf_counter()
        kinds = np.asarray(batch["kind"]).astype(str)
        texts = [str(t) for t in batch["text"]]
        dim = int(self.embedder.dimensions)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        docs = np.flatnonzero(kinds == "doc")
        if docs.size:
            out[docs] = self.embedder.embed_documents([texts[i] for i in docs])
        queries = np.flatnonzero(kinds == "query")
        if queries.size:
            qs = [texts[i] for i in queries]
            with tempfile.TemporaryDirectory(prefix="memlab-ray-q-") as tmp:
                cache = CachedEmbedder(self.embedder, tmp)
                cache.prefetch(qs)
                out[queries] = np.stack([cache.embed_query(q) for q in qs])
        n = len(texts)
        return {
            "kind": kinds,
            "text": np.asarray(texts, dtype=object),
            "vector": out,
            "pid": np.full(n, os.getpid(), dtype=np.int64),
            "rss_mib": np.full(n, _peak_rss_mib()),
            # the batch's embedding seconds spread over its rows: a worker's sum is its busy time
            "seconds": np.full(n, (time.perf_counter() - t0) / max(n, 1)),
        }


@dataclass
class RayRunner:
    """Runs labs' retrievals on a Ray cluster (see the module docstring).

    ``address``: ``"local"`` starts a cluster on this machine for the runner's lifetime
    (listening on 127.0.0.1; ``workers`` CPUs, default all), anything else is handed to
    ``ray.init(address=…)`` (``"auto"``, ``"HOST:PORT"`` of a head node, ``"ray://HOST:
    10001"`` for Ray Client) and left running when the runner closes. ``workers``: tasks
    and embedding actors at once (default: the cluster's CPUs). ``embedder_factory``
    builds the embedder on a worker (`embedder_factory`); None: the lab's embedder is
    sent as it is, which works for picklable ones (the hashing embedder) only.
    ``batch_size``: texts per embedding call (default the embedder's own ``batch_size``,
    32 for the packaged model, so each call runs on one thread; else 64).

    Use as a context manager (``with RayRunner("local") as r: …``), or ``start()`` /
    ``close()``. ``stats`` lists, per retrieval, what ran where: groups, texts listed and
    embedded, actors, each step's wall seconds and each task's own seconds, worker pids
    and peak memory.
    """

    address: str = "local"
    workers: int | None = None
    embedder_factory: Callable[[], Embedder | None] | None = None
    batch_size: int | None = None
    stats: list[dict[str, Any]] = field(default_factory=list)
    _ray: Any = field(default=None, repr=False)
    _owned: bool = field(default=False, repr=False)
    _caches: dict[int, CachedEmbedder] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.workers is not None and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1
        ):
            raise ValueError(f"workers must be an integer >= 1, got {self.workers!r}")
        if not isinstance(self.address, str) or not self.address.strip():
            raise ValueError(f"address must be 'local' or a Ray address, got {self.address!r}")

    def __enter__(self) -> RayRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> RayRunner:
        """Connect to the cluster (or start the local one); idempotent. A Ray already
        initialised in this process is used as it is and left running."""
        if self._ray is not None:
            return self
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if self.address == "local" and "ray" not in sys.modules:
            os.environ.setdefault(_LOOPBACK_ENV, "0")
        ray = import_ray()
        if not ray.is_initialized():
            try:
                if self.address == "local":
                    ray.init(
                        address="local",  # a new cluster, never one a file or RAY_ADDRESS names
                        num_cpus=self.workers,
                        include_dashboard=False,
                        log_to_driver=False,
                    )
                else:
                    ray.init(address=self.address, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise RayUnavailable(
                    f"cannot reach a Ray cluster at {self.address!r}: {exc}"
                ) from exc
            self._owned = True
        ray.data.DataContext.get_current().enable_progress_bars = False
        self._ray = ray
        return self

    def close(self) -> None:
        """Disconnect; a local cluster this runner started is shut down with it."""
        if self._ray is not None and self._owned:
            self._ray.shutdown()
        self._ray = None
        self._owned = False

    @property
    def ray(self) -> Any:
        """The ``ray`` module this runner is connected through (connecting first)."""
        return self.start()._ray

    @property
    def cpus(self) -> int:
        """CPUs the cluster offers (``workers`` when given)."""
        if self.workers is not None:
            return self.workers
        return max(1, int(self.start()._ray.cluster_resources().get("CPU", 1)))

    def _cache(self, lab: Lab) -> CachedEmbedder:
        """The driver's vector cache of ``lab``: its own when it keeps one, else one under
        its ``index_dir/vectors`` (kept for the runner's lifetime)."""
        if isinstance(lab.embedder, CachedEmbedder):
            return lab.embedder
        key = id(lab)
        if key not in self._caches:
            self._caches[key] = CachedEmbedder(lab.embedder, lab.index_dir / "vectors")
        return self._caches[key]

    def _factory(self, lab: Lab) -> Callable[[], Embedder | None] | None:
        if lab.embedder is None:
            return None
        if self.embedder_factory is not None:
            return self.embedder_factory
        inner = lab.embedder.inner if isinstance(lab.embedder, CachedEmbedder) else lab.embedder
        try:
            pickle.dumps(inner)
        except Exception as exc:
            raise ValueError(
                f"{type(inner).__name__} cannot be sent to Ray workers ({exc}); pass "
                "embedder_factory=memlab.eval.raylab.embedder_factory('local', …)"
            ) from exc
        return functools.partial(_same, inner)

    def retrieve(
        self, lab: Lab, depth: int, *, keyword_mode: str, keyword_fallback: bool, vector: bool
    ) -> LabCandidates:
        """``lab.retrieve`` on the cluster: texts, embedding, candidates (module
        docstring); the parts merged by ``lab.merge_groups``. Appends to ``stats``."""
        ray = self.start()._ray
        t_all = time.perf_counter()
        factory = self._factory(lab)
        spec_ref = ray.put(LabSpec.of(lab, factory))
        q = lab.dataset.queries
        asked = set(q["group"])
        groups = [g for g in lab.dataset.workspaces if g in asked]
        stat: dict[str, Any] = {
            "unit": lab.chunker.fingerprint(),
            "fts_tokenizer": lab.fts_tokenizer,
            "groups": len(groups),
            "workers": self.cpus,
        }
        vectors: dict[str, dict[str, Any] | None] = {g: None for g in groups}
        if factory is not None:
            texts_task = ray.remote(num_cpus=1)(group_texts)
            t0 = time.perf_counter()
            listed = ray.get([texts_task.remote(spec_ref, g) for g in groups])
            stat["texts"] = _step(listed, time.perf_counter() - t0)
            cache = self._cache(lab)
            stat["embed"] = self._embed(cache, factory, listed, q["query"].tolist())
            t0 = time.perf_counter()
            for part in listed:
                g = part["group"]
                qs = list(dict.fromkeys(t.strip() for t in q.loc[q["group"] == g, "query"]))
                vectors[g] = ray.put(
                    {
                        "docs": part["texts"],
                        "doc_vectors": cache.embed_documents(part["texts"]),
                        "queries": qs,
                        "query_vectors": np.stack([cache.embed_query(t) for t in qs])
                        if qs
                        else np.zeros((0, cache.dimensions), dtype=np.float32),
                    }
                )
            stat["ship_seconds"] = time.perf_counter() - t0
        cand_task = ray.remote(num_cpus=1)(group_candidates)
        t0 = time.perf_counter()
        outs = ray.get(
            [
                cand_task.remote(
                    spec_ref, g, vectors[g], depth, keyword_mode, keyword_fallback, vector
                )
                for g in groups
            ]
        )
        stat["candidates"] = _step(outs, time.perf_counter() - t0)
        stat["embedded_on_tasks"] = int(sum(o["embedded"] for o in outs))
        parts = [(o["group"], o["cs"], o["rows"]) for o in outs if o["cs"] is not None]
        sources = [TextList(o["texts"]) for o in outs if o["cs"] is not None]
        lc = lab.merge_groups(parts, sources)
        stat["seconds"] = time.perf_counter() - t_all
        self.stats.append(stat)
        return lc

    def _embed(
        self,
        cache: CachedEmbedder,
        factory: Callable[[], Embedder | None],
        listed: list[dict[str, Any]],
        queries: list[str],
    ) -> dict[str, Any]:
        """Embed on Ray Data what ``cache`` lacks (texts of ``listed``, then ``queries``),
        fill it and save it; the step's figures."""
        ray = self._ray
        t0 = time.perf_counter()
        docs = cache.missing([t for part in listed for t in part["texts"]])
        qs = cache.missing(queries, kind="query")
        step: dict[str, Any] = {
            "docs": len(docs),
            "queries": len(qs),
            "actors": 0,
            "seconds": 0.0,
            "actor_pids": [],
            "actor_rss_mib": [],
        }
        if not docs and not qs:
            return step
        size = self.batch_size or int(getattr(cache.inner, "batch_size", 64))
        actors = max(1, min(self.cpus, -(-(len(docs) + len(qs)) // size)))
        items = [{"kind": "doc", "text": t} for t in docs]
        items += [{"kind": "query", "text": t} for t in qs]
        out = ray.data.from_items(items).map_batches(
            EmbedBatches,
            fn_constructor_kwargs={"factory": factory},
            compute=ray.data.ActorPoolStrategy(size=actors),
            batch_size=size,
            num_cpus=1,
            batch_format="numpy",
        )
        rss: dict[int, float] = {}
        busy: dict[int, float] = {}
        done: dict[int, int] = {}
        for b in out.iter_batches(batch_format="numpy", batch_size=None):
            kinds = np.asarray(b["kind"]).astype(str)
            texts = [str(t) for t in b["text"]]
            vecs = np.asarray(b["vector"], dtype=np.float32)
            for kind in ("doc", "query"):
                sel = np.flatnonzero(kinds == kind)
                if sel.size:
                    cache.remember([texts[i] for i in sel], vecs[sel], kind=kind)
            for pid, mib, sec in zip(
                b["pid"].tolist(), b["rss_mib"].tolist(), b["seconds"].tolist(), strict=True
            ):
                rss[pid] = max(rss.get(pid, 0.0), mib)
                busy[pid] = busy.get(pid, 0.0) + sec
                done[pid] = done.get(pid, 0) + 1
        cache.save()
        left = len(cache.missing(docs)) + len(cache.missing(qs, kind="query"))
        if left:
            raise RuntimeError(f"Ray Data returned no vector for {left} texts")
        step.update(
            actors=actors,
            batch_size=size,
            seconds=time.perf_counter() - t0,
            actor_pids=sorted(rss),
            actor_rss_mib=[rss[p] for p in sorted(rss)],
            actor_texts=[done[p] for p in sorted(rss)],
            actor_busy_seconds=[busy[p] for p in sorted(rss)],
        )
        return step


def _same(x: Any) -> Any:
    """``x`` itself (a picklable factory of an object sent as it is)."""
    return x


def _step(results: list[dict[str, Any]], wall: float) -> dict[str, Any]:
    """One step's figures: wall seconds, each task's own seconds, peak MiB per worker."""
    rss: dict[int, float] = {}
    for r in results:
        rss[r["pid"]] = max(rss.get(r["pid"], 0.0), r["rss_mib"])
    return {
        "tasks": len(results),
        "seconds": wall,
        "task_seconds": [r["seconds"] for r in results],
        "worker_pids": sorted(rss),
        "worker_rss_mib": [rss[p] for p in sorted(rss)],
    }
