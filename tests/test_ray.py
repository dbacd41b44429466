"""memlab eval on a real Ray cluster (memlab.eval.raylab): a head and one worker node started
by this module on 127.0.0.1 and torn down after; results equal the local run's."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab.datasets.base import Dataset
from tests.conftest import REPO, cli, write

# Ray binds a node to the machine's routable address unless it is told the machine is
# alone; the cluster below (and `--ray local`) then stays on 127.0.0.1. Set before Ray is
# imported (its constants are read at import).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

pytestmark = pytest.mark.slow


def chats(root: Path) -> Dataset:
    """Two small conversations (two workspaces, so two tasks per step), one-line turns."""
    words = "coffee roast billing gateway dentist tuesday plumber invoice garden bike".split()
    queries, evidence = [], []
    for g, off in (("chat-a", 0), ("chat-b", 3)):
        lines = [
            f"User: note {i} about the {words[(i + off) % 10]} and the {words[(3 * i) % 10]}"
            for i in range(30)
        ]
        write(root / g, "memory/2026-01-01.md", "\n".join(lines[:15]) + "\n")
        write(root / g, "memory/2026-01-02.md", "\n".join(lines[15:]) + "\n")
        for j in range(6):
            qid = f"{g}-{j}"
            queries.append({"qid": qid, "query": f"the {words[(j + off) % 10]}?", "group": g})
            evidence.append(
                {"qid": qid, "path": "memory/2026-01-01.md", "start_line": j + 1, "end_line": j + 1}
            )
    ds = Dataset(
        "chats",
        root,
        {"chat-a": root / "chat-a", "chat-b": root / "chat-b"},
        pd.DataFrame(queries),
        pd.DataFrame(evidence),
    )
    ds.save()
    return ds


@pytest.fixture(scope="module")
def cluster():
    """A Ray cluster of a head and one worker node (1 CPU each) on 127.0.0.1: its address.
    The processes are this fixture's own (``ray.cluster_utils.Cluster``) and are stopped
    after the module, whatever happened."""
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # A token of this cluster's own: nothing is read from or written to ~/.ray.
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False},
    )
    try:
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        c.wait_for_nodes()
        yield c.address
    finally:
        import ray

        ray.shutdown()
        c.shutdown()


def test_eval_on_the_cluster_prints_what_the_local_run_prints(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    ds = chats(tmp_path / "data")
    args = ["eval", "folder", "--path", str(ds.root), "--unit", "turn"]
    args += ["--preset", "bm25,memlab-best", "--embedder", "hashing", "--json"]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-local"))
    code, local, err = cli(*args, "--save", str(tmp_path / "local-exp"))
    assert code == 0, err
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-ray"))
    code, on_ray, err = cli(*args, "--save", str(tmp_path / "ray-exp"), "--ray", cluster)
    assert code == 0, err
    assert on_ray == local
    assert json.loads(on_ray)[1]["name"] == "memlab-best"
    assert "ray (127.0.0.1:" in err and "8 tasks" in err  # 2 groups x 2 steps x 2 tokenizers
    assert not ray.is_initialized()  # memlab disconnected; the cluster still runs
    # every ranking too: the saved TREC files are the same bytes
    for name in ("runs.trec", "qrels.trec", "docs.tsv", "per_query.csv"):
        assert (tmp_path / "ray-exp" / name).read_bytes() == (
            tmp_path / "local-exp" / name
        ).read_bytes()


def test_onnx_embedding_on_an_actor_pool_fills_the_cache(cluster: str, tmp_path: Path) -> None:
    """The packaged model on Ray Data actors: the vectors (hence every ranking and metric)
    equal a local run's, the workers embed nothing themselves, and a second run on the
    filled cache embeds nothing."""
    from memlab.eval.experiment import run_experiment
    from memlab.eval.lab import Lab
    from memlab.eval.raylab import RayRunner, embedder_factory
    from memlab.pipeline.presets import preset

    ds = chats(tmp_path / "data")
    systems = [preset("bm25"), preset("memlab-best")]
    metrics = ["recall@6", "ndcg@10", "mrr"]
    local = Lab(ds, cache_vectors=True, embedder="local", unit="turn", index_dir=tmp_path / "local")
    want = run_experiment(systems, local, metrics, keep_runs=True)
    for run in (1, 2):
        with RayRunner(cluster, embedder_factory=embedder_factory("local")) as runner:
            lab = Lab(
                ds,
                cache_vectors=True,
                embedder="local",
                unit="turn",
                index_dir=tmp_path / "ray",
                executor=runner,
            )
            got = run_experiment(systems, lab, metrics, keep_runs=True)
            first = runner.stats[0]
        pd.testing.assert_frame_equal(got.per_query, want.per_query)
        cols = ["system", "qid", "docno", "rank", "score"]
        pd.testing.assert_frame_equal(got.runs[cols], want.runs[cols])
        assert first["embedded_on_tasks"] == 0 and first["candidates"]["tasks"] == 2
        if run == 1:
            questions = len(set(ds.queries["query"].str.strip()))
            assert first["embed"]["docs"] == 60 and first["embed"]["queries"] == questions
            assert first["embed"]["actors"] >= 1
            ray_lc = lab.candidates_for([systems[1]])["memlab-best"]
            local_lc = local.candidates_for([systems[1]])["memlab-best"]
            np.testing.assert_array_equal(ray_lc.cs.table.vectors, local_lc.cs.table.vectors)
        else:
            assert first["embed"]["docs"] == first["embed"]["queries"] == 0


def test_ray_local_prints_what_the_local_run_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--ray local` as a user types it starts a cluster for the run (in a process of its
    own, as a shell would run it) and stops it after; the local run, in this process,
    prints the same. The hashing embedder: the packaged model on Ray's actors is
    `test_onnx_embedding_on_an_actor_pool_fills_the_cache`'s subject."""
    pytest.importorskip("ray")
    ds = chats(tmp_path / "data")
    args = ["eval", "folder", "--path", str(ds.root), "--unit", "turn", "--embedder", "hashing"]
    args += ["--preset", "bm25,memlab-best", "--json"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache-ray")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "memlab.cli", *args, "--ray", "local", "--ray-workers", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    code, out, err = cli(*args)
    assert code == 0, err[-3000:]
    assert proc.stdout == out
    assert "ray (local, 1 worker)" in proc.stderr


def test_without_ray_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_cache: Path
) -> None:
    ds = chats(tmp_path / "data")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    code, out, err = cli(
        "eval", "folder", "--path", str(ds.root), "--embedder", "hashing", "--ray", "local"
    )
    assert code == 2 and out == ""
    assert "--ray needs Ray" in err and "pip install 'memlab[ray]'" in err
    code, _, err = cli("eval", "folder", "--path", str(ds.root), "--ray-workers", "2")
    assert code == 2 and "--ray-workers needs --ray" in err


def test_eval_without_ray_never_imports_it(tmp_path: Path) -> None:
    ds = chats(tmp_path / "data")
    code = (
        "import sys; from memlab.cli import main; "
        f"rc = main(['eval', 'folder', '--path', {str(ds.root)!r}, '--embedder', 'hashing',"
        " '--preset', 'bm25', '--json']); "
        "assert rc == 0; assert 'ray' not in sys.modules, 'ray was imported'"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
