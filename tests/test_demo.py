"""memlab's main job (`memlab demo`): what it prints is what it measured.

The demo runs in-process through the CLI with the hashing embedder on a small
corpus (a few seconds); one model test runs the default size.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from memlab.cli import main
from memlab.eval.significance import bootstrap_ci, paired_ttest, randomization_test, win_tie_loss

REPO = Path(__file__).resolve().parents[1]
# 60 daily logs: more than the 50 files from which the indexer would show a bar.
SMALL = ["--days", "60", "--notes-per-day", "10", "--questions-per-type", "10", "--seed", "7"]
NUM = r"[+−-]?\d+\.\d+"


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One small hashing demo, run as a user would (stdout and stderr piped), with HOME,
    XDG_CACHE_HOME and the working directory pointed at empty folders."""
    root = tmp_path_factory.mktemp("demo")
    dirs = {name: root / name for name in ("home", "xdg", "cwd", "mpl")}
    for d in dirs.values():
        d.mkdir()
    out = root / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(dirs["home"]))
        mp.setenv("XDG_CACHE_HOME", str(dirs["xdg"]))
        # matplotlib's own font cache is not memlab's; keep it out of the checked folders.
        mp.setenv("MPLCONFIGDIR", str(dirs["mpl"]))
        mp.chdir(dirs["cwd"])
        runs = []
        for _ in range(2):
            stdout, stderr = io.StringIO(), io.StringIO()
            t = time.perf_counter()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                rc = main(["demo", "--out", str(out), "--embedder", "hashing", *SMALL])
            runs.append(
                {
                    "rc": rc,
                    "out": stdout.getvalue(),
                    "err": stderr.getvalue(),
                    "s": time.perf_counter() - t,
                    "key": json.loads((out / "key_test.json").read_text()),
                }
            )
    flat = " ".join(runs[0]["out"].split())
    return {"out": out, "dirs": dirs, "runs": runs, "text": runs[0]["out"], "flat": flat}


def _table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("system "))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        rows.append(line)
    return rows


@pytest.mark.slow
def test_demo_runs_and_prints_each_step(demo_run: dict) -> None:
    text = demo_run["flat"]
    assert demo_run["runs"][0]["rc"] == 0
    for step in range(1, 9):
        assert f"[{step}/8]" in text
    assert "openclaw-shipped" in text and "AND keyword query, minScore 0.35" in text
    # The baseline is the 0.7/0.3 weighted sum on the OR leg, and the screen says why.
    assert "Δ = paired difference in recall@6 to wsum-0.7/0.3" in text
    assert "degenerate reference" in text


def test_the_synthetic_half_is_fitted_to_the_persona_and_the_lesson_places_it(
    demo_run: dict,
) -> None:
    """Step 1 fits the corpus to the shipped persona (each statistic beside its target; the
    sizes given on the command line kept), and the conclusion places the persona on the
    overlap curve by its own statistics."""
    from memlab.datasets.realmem import load_realmem
    from memlab.eval.stats import corpus_stats

    text = demo_run["flat"]
    head = text.split("[2/8]")[0]
    assert "synthetic corpus like the shipped RealMem persona" in head
    for stat in ("term_overlap", "distractor_overlap", "span_lines", "forms", "style"):
        assert stat in head
    (corpus,) = demo_run["out"].glob("corpus-*")
    cfg = json.loads((corpus / "dataset.json").read_text())["info"]["config"]
    assert cfg["style"] == "conversation" and cfg["level"] == "file"
    assert cfg["days"] == 60 and cfg["notes_per_day"] == 10 and 0 <= cfg["paraphrase"] <= 1
    persona = corpus_stats(
        load_realmem(REPO / "datasets" / "realmem", demo_run["out"] / "realmem" / "data")
    )
    m = re.search(r"The persona asks with overlap (\d\.\d\d)", text)
    assert m and float(m[1]) == round(persona["term_overlap"], 2)
    assert re.search(
        r"its own plateau, on all its queries, is \d\.\d\d–\d\.\d\d — (inside|outside)", text
    )
    assert "a tuned weight is a function of the corpus" in text


def test_real_persona_rows_match_the_saved_experiment(demo_run: dict) -> None:
    """The real persona's table (RealMem's recall_any@10, held-out queries): each row's mean
    and Δ vs 0.7/0.3 with its bootstrap CI, recomputed from the saved per-query values; and
    the conclusion answers each of its three questions."""
    out: Path = demo_run["out"]
    pq = pd.read_csv(out / "realmem" / "experiment" / "per_query.csv")
    wide = pq[pq["metric"] == "recall_any@10"].pivot(index="qid", columns="system", values="value")
    base = wide["wsum-0.7/0.3"].to_numpy(float)
    block = demo_run["text"].split("[7/8]")[1].split("[8/8]")[0]
    assert (
        "RealMem persona Kenta_Tanaka" in block and f"held-out comparison on {len(base)}" in block
    )
    rows = [ln.split() for ln in block.splitlines() if ln.strip().split(" ")[0] in wide.columns]
    assert {r[0] for r in rows} == set(wide.columns) >= {"recency", "bm25", "memlab-best"}
    for r in rows:
        x = wide[r[0]].to_numpy(float)
        assert float(r[1]) == pytest.approx(x.mean(), abs=5e-4)
        if r[0] != "wsum-0.7/0.3":
            d = x - base
            low, high = bootstrap_ci(d, 0.95, 10_000, 7)
            assert float(r[2].replace("−", "-")) == pytest.approx(d.mean(), abs=5e-4)
            shown = " ".join(r[3:5]).strip("[]").replace("−", "-").split(", ")
            assert [float(v) for v in shown] == pytest.approx([low, high], abs=5e-4)
    end = " ".join(demo_run["text"].split("[8/8]")[1].split("\nwrote ")[0].split())
    for topic in ("tuned weight", "memlab-best", "leg"):
        assert re.search(rf"(Both support|They disagree)[^.]*{topic}", end), topic


def test_conclusion_says_what_both_support_and_why_they_disagree() -> None:
    from memlab.demo.real import conclusion

    def part(tuned_ci, best_ci, vector, bm25, w):
        return {
            "n": 50,
            "tuned": "t",
            "tuned_weight": w,
            "systems": {
                "t": {"mean": 0.5, "delta": 0.1, "ci": tuned_ci, "p": 0.01},
                "memlab-best": {"mean": 0.6, "delta": 0.1, "ci": best_ci, "p": 0.01},
                "vector": {"mean": vector, "delta": 0.0, "ci": (-0.1, 0.1), "p": 1.0},
                "bm25": {"mean": bm25, "delta": 0.0, "ci": (-0.1, 0.1), "p": 1.0},
            },
        }

    same = conclusion(
        part((0.1, 0.3), (0.05, 0.2), 0.3, 0.7, 0.0), part((0.01, 0.2), (0.02, 0.1), 0.4, 0.6, 0.1)
    )
    assert all(line.startswith("Both support") for line in same)
    assert "is better than 0.7/0.3" in same[0] and "bm25 is the stronger leg" in same[2]
    split = conclusion(
        part((0.1, 0.3), (0.05, 0.2), 0.3, 0.7, 0.0), part((-0.1, 0.1), (-0.02, 0.1), 0.7, 0.6, 0.9)
    )
    assert all(line.startswith("They disagree") for line in split)
    assert (
        "Why:" in split[0] and "resolve differences of about ±" in split[1] and "Why:" in split[2]
    )
    assert conclusion(part((0.1, 0.3), (0.05, 0.2), 0.3, 0.7, 0.0), None) == [
        "Only the synthetic corpus ran: its findings are not checked on real data."
    ]


def test_no_two_rows_are_one_system(demo_run: dict) -> None:
    """Every system shown ranks at least one held-out question differently from every
    other (checked on the saved TREC run), and no name appears twice."""
    out: Path = demo_run["out"]
    exp = json.loads((out / "experiment" / "experiment.json").read_text())
    names = [s["name"] for s in exp["systems"]]
    assert len(names) == len(set(names)) >= 5
    runs = pd.read_csv(
        out / "experiment" / "runs.trec",
        sep=" ",
        header=None,
        names=["qid", "q0", "docno", "rank", "score", "system"],
    )
    test_q = sorted(pd.read_csv(out / "experiment" / "per_query.csv")["qid"].unique())
    sig = {}
    for name in names:
        r = runs[runs["system"] == name].sort_values(["qid", "rank"])
        per_q = r.groupby("qid")["docno"].apply(tuple).to_dict()
        sig[name] = tuple(per_q.get(q, ()) for q in test_q)
    assert len(set(sig.values())) == len(names), "two rows rank every question the same"
    rows = _table_rows(demo_run["text"])
    assert len(rows) == len(names)
    # The tuned row is either its own system or announced as OpenClaw's setting.
    key = demo_run["runs"][0]["key"]
    if key["tuned"] == "wsum-0.7/0.3":
        assert "the tuned setting is OpenClaw's own 0.7/0.3" in demo_run["flat"]
    else:
        assert any(r.startswith(key["tuned"]) or key["tuned"] in r for r in rows)


def test_key_test_numbers_match_a_recomputation(demo_run: dict) -> None:
    """The key-test sentence: means, difference, bootstrap CI, t-test and randomization p
    and better/same/worse, recomputed from the saved per-query values."""
    out: Path = demo_run["out"]
    key = demo_run["runs"][0]["key"]
    pq = pd.read_csv(out / "experiment" / "per_query.csv")
    wide = pq[pq["metric"] == "recall@6"].pivot(index="qid", columns="system", values="value")
    a = wide["wsum-0.7/0.3"].to_numpy(float)
    b = wide[key["tuned"]].to_numpy(float)
    d = b - a
    low, high = bootstrap_ci(d, 0.95, 10_000, 7)
    p_t = paired_ttest(b, a)[1] if d.any() else 1.0
    p_r = randomization_test(b, a, n_resamples=10_000, seed=7)
    w, t, lo = win_tie_loss(b, a)
    line = demo_run["flat"].split("Key test —")[1].split("Scope:")[0]
    m = re.search(
        rf"on (\d+) held-out questions: recall@6 ({NUM}) vs ({NUM}), mean difference ({NUM})"
        rf" \(95% CI \[({NUM}), ({NUM})\]\); paired t-test p ([=<] \d\.\d+),"
        rf" randomization test p ([=<] \d\.\d+); better on (\d+), same on (\d+), worse on (\d+)",
        line,
    )
    assert m, line

    def num(s: str) -> float:
        return float(s.replace("−", "-"))

    assert int(m[1]) == len(d)
    assert num(m[2]) == pytest.approx(b.mean(), abs=5e-4)
    assert num(m[3]) == pytest.approx(a.mean(), abs=5e-4)
    assert num(m[4]) == pytest.approx(d.mean(), abs=5e-4)
    assert num(m[5]) == pytest.approx(low, abs=5e-4)
    assert num(m[6]) == pytest.approx(high, abs=5e-4)
    for shown, p in ((m[7], p_t), (m[8], p_r)):
        if shown.startswith("<"):
            assert p < 0.001
        else:
            assert float(shown[2:]) == pytest.approx(p, abs=5e-4)
    assert (int(m[9]), int(m[10]), int(m[11])) == (w, t, lo)
    assert key["mean_difference"] == pytest.approx(d.mean(), abs=1e-12)
    verdict = "excludes 0" if (low > 0 or high < 0) else "includes 0"
    assert verdict in line


def test_table_delta_and_ci_match_per_query_values(demo_run: dict) -> None:
    """Each row's recall@6, Δ and CI of Δ are the per-query values' mean and bootstrap."""
    out: Path = demo_run["out"]
    pq = pd.read_csv(out / "experiment" / "per_query.csv")
    wide = pq[pq["metric"] == "recall@6"].pivot(index="qid", columns="system", values="value")
    base = wide["wsum-0.7/0.3"].to_numpy(float)
    lines = demo_run["text"].splitlines()
    header = re.split(r"\s{2,}", next(x for x in lines if x.startswith("system ")).strip())
    for row in _table_rows(demo_run["text"]):
        cells = dict(zip(header, re.split(r"\s{2,}", row.strip()), strict=True))
        x = wide[cells["system"]].to_numpy(float)
        assert float(cells["recall@6"]) == pytest.approx(x.mean(), abs=5e-4), row
        low, high = bootstrap_ci(x, 0.95, 10_000, 7)
        assert cells["95% CI"] == f"[{low:.3f}, {high:.3f}]"
        if cells["system"] != "wsum-0.7/0.3":
            d = x - base
            dl, dh = (v.replace("−", "-") for v in cells["95% CI of Δ*"].strip("[]").split(", "))
            assert float(cells["Δ vs 0.7/0.3"].replace("−", "-")) == pytest.approx(
                d.mean(), abs=5e-4
            )
            assert [float(dl), float(dh)] == pytest.approx(
                list(bootstrap_ci(d, 0.95, 10_000, 7)), abs=5e-4
            )


def test_tuned_weight_is_printed_with_its_ties(demo_run: dict) -> None:
    block = demo_run["flat"].split("[4/8]")[1].split("[5/8]")[0]
    m = re.search(r"chosen: vector (\d\.\d\d) / text (\d\.\d\d)", block)
    assert m and float(m[1]) + float(m[2]) == pytest.approx(1.0)
    assert "tied on train:" in block or "no other weight ties it on train" in block
    assert "curve over the grid" in block
    # The chosen weight is what the saved key test calls tuned.
    assert demo_run["runs"][0]["key"]["tuned_vector_weight"] == pytest.approx(float(m[1]), abs=5e-3)


def test_tie_summary_names_the_tied_range(tmp_path: Path) -> None:
    """On OpenClaw's AND leg the keyword leg is mostly empty and many weights tie: the
    summary says how many, over which range, and by which rule one was chosen."""
    from memlab.datasets.synthetic import SynthConfig, generate
    from memlab.demo import tuning_summary
    from memlab.eval.lab import Lab
    from memlab.eval.sweep import split_queries, sweep
    from memlab.pipeline.presets import preset

    ds = generate(SynthConfig(days=10, notes_per_day=5, queries_per_type=5, seed=1), tmp_path / "c")
    lab = Lab(ds, embedder="hashing", index_dir=tmp_path / "i", progress=False)
    train, _ = split_queries(ds.queries["qid"].tolist(), 0.5, seed=1)
    base = preset("openclaw").replace(min_score=0.0, keyword_mode="and", name="and")
    grid = [round(i * 0.05, 2) for i in range(21)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sweep warns that the weight has no effect
        sw = sweep(lab, base, {"vector_weight": grid}, ["recall@6"], train=train)
    curve = sw.curve("recall@6")["mean"].to_numpy()
    n_tied = int((curve >= curve.max() - 1e-12).sum())
    assert n_tied > 1, "the AND leg should leave several weights tied"
    text = tuning_summary(sw, sw.best(), base, sw.pipeline())
    assert f"tied on train: {n_tied} weights" in text
    assert "chosen: vector" in text


def test_and_or_fractions_are_measured(demo_run: dict) -> None:
    """The printed share of questions whose AND (OR) keyword leg found anything."""
    from memlab.datasets.base import load_folder
    from memlab.eval.lab import Lab

    text = demo_run["flat"]
    m = re.search(r"found something for (\d+)% of the (\d+) questions; .* for (\d+)%", text)
    assert m
    out: Path = demo_run["out"]
    corpus = next(out.glob("corpus-*"))
    lab = Lab(load_folder(corpus), embedder="hashing", index_dir=out / "index", progress=False)
    shares = []
    for mode in ("and", "or"):
        lc = lab.candidates(24, keyword_mode=mode, keyword_fallback=False)
        shares.append((lc.cs.text_rank >= 0).any(axis=1).mean())
    assert int(m[2]) == len(lab.dataset.queries)
    assert int(m[1]) == round(100 * shares[0])
    assert int(m[3]) == round(100 * shares[1])
    assert shares[0] < shares[1]


def test_plots_and_files_are_written_under_out_only(demo_run: dict) -> None:
    out: Path = demo_run["out"]
    for name in ("sweep_vector_weight.png", "recall_by_category.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    for name in ("sweep.csv", "table.csv", "key_test.json", "experiment/per_query.csv"):
        assert (out / name).is_file()
    dirs = demo_run["dirs"]
    assert _tree(dirs["home"]) == []
    assert _tree(dirs["xdg"]) == []
    assert _tree(dirs["cwd"]) == []


def test_no_progress_bars_when_piped(demo_run: dict) -> None:
    for run in demo_run["runs"]:
        assert "it/s" not in run["err"] and "\r" not in run["err"], run["err"][:300]
        assert "%|" not in run["out"]


def test_second_run_reuses_corpus_and_index(demo_run: dict) -> None:
    first, second = demo_run["runs"]
    assert re.search(r"\[1/8\] synthetic corpus [^:\n]*: reusing", second["out"])
    # Corpus, index and question vectors come from --out: nothing is embedded again.
    assert "and 0 new question embeddings" in " ".join(second["out"].split())
    assert re.search(r"and [1-9]\d* new question embeddings", " ".join(first["out"].split()))
    assert second["key"] == first["key"]

    # Same measurements: everything from the keyword-leg step to the file list is identical.
    def section(text: str) -> str:  # timings aside
        return re.sub(r"\(\d+\.\d+\xa0s\)", "", text.split("[3/8]")[1].split("\nwrote ")[0])

    assert section(second["out"]) == section(first["out"])


@pytest.mark.slow
def test_tuned_equal_to_openclaw_weights_is_said_not_duplicated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """When the sweep's choice is 0.7/0.3 itself there is no second row for it and the
    key test says so instead of testing a system against itself."""
    import memlab.demo as demo

    monkeypatch.setattr(demo, "GRID", [0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        demo.run_demo(
            tmp_path / "out", embedder="hashing", days=10, notes_per_day=5, queries_per_type=5
        )
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert "the tuned setting is OpenClaw's own 0.7/0.3: no separate tuned row" in text
    assert "the tuned weight is OpenClaw's 0.70/0.30 itself" in text
    rows = _table_rows(out)
    assert not any("tuned" in r for r in rows)
    assert sum(r.startswith("wsum-0.7/0.3") for r in rows) == 1
    key = json.loads((tmp_path / "out" / "key_test.json").read_text())
    assert key["mean_difference"] == 0.0 and key["better"] == key["worse"] == 0


@pytest.mark.model
def test_default_demo_with_the_packaged_model(tmp_path: Path) -> None:
    """`memlab demo` at its default size, as `make demo` runs it (subprocess, piped)."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
    }
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "demo", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    seconds = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout
    # the synthetic half is fitted to the persona: sessions, one line per unit
    assert "synthetic corpus like the shipped RealMem persona" in text
    assert "MISSED" not in text.split("[2/8]")[0]
    m = re.search(r"index: (\d+) lines from (\d+) files", text)
    assert m and 1000 <= int(m[1]) <= 10_000 and int(m[2]) >= 150
    m = re.search(r"on (\d+) held-out questions", text)
    assert m and int(m[1]) >= 100
    assert "Key test" in text
    assert "RealMem persona Kenta_Tanaka" in text and "[8/8] conclusion" in text
    assert "it/s" not in proc.stderr
    # The demo keeps its indexes and results under --out; the user cache holds only the
    # packaged model's one-time ONNX export (memlab/onnx/<weights sha256>/, shared by every
    # run on the machine) — nothing of onnxruntime's own (ORT_DISABLE_TELEMETRY).
    outside = [p for p in _tree(tmp_path / "xdg") if not p.startswith("memlab/onnx")]
    assert outside in ([], ["memlab"]), outside
    print(f"default demo: {seconds:.0f} s")
    assert seconds < 600
