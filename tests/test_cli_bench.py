"""``memlab bench`` as a user runs it: from a checkout, from a checkout named by
``$MEMLAB_CHECKOUT``, and from an installed package with no checkout anywhere (the package
copied alone into a temporary site folder, the command run from another folder), where it
names the benchmarks and the commands that run them, exit 2 (memlab.cli.bench)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.cli import bench
from memlab.cli import main as cli_main

REPO = Path(__file__).resolve().parents[1]

# A benchmark script of a fake checkout: writes the arguments it was given to its --json path.
FAKE_SCRIPT = """import json, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1] if "--json" in args else None
if out:
    open(out, "w").write(json.dumps(args))
sys.exit(int(open(__file__ + ".rc").read()) if __import__("os").path.exists(__file__ + ".rc") else 0)
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The memlab package alone in a site folder, as ``pip install`` leaves it: no
    ``benchmarks/`` beside it."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(REPO / "memlab", site / "memlab", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def run_installed(
    site: Path, cwd: Path, *argv: str, checkout: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``memlab ARGV`` with only the installed package importable, run in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != bench.CHECKOUT_ENV}
    env["PYTHONPATH"] = str(site)
    if checkout is not None:
        env[bench.CHECKOUT_ENV] = str(checkout)
    return subprocess.run(
        [sys.executable, "-m", "memlab.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def fake_checkout(root: Path, names: list[str], studies: tuple[str, ...] = ()) -> Path:
    """A folder that is a checkout to ``memlab bench``: ``benchmarks/_common.py`` and a
    ``FAKE_SCRIPT`` per name (``studies``: under ``studies/``)."""
    (root / "benchmarks").mkdir(parents=True)
    (root / "studies").mkdir(parents=True)
    (root / "benchmarks" / "_common.py").write_text("")
    for n in names:
        (root / "benchmarks" / f"{n}.py").write_text(FAKE_SCRIPT)
    for n in studies:
        (root / "studies" / f"{n}.py").write_text(FAKE_SCRIPT)
    return root


def test_without_a_checkout_it_names_the_benchmarks_and_the_commands(
    installed: Path, tmp_path: Path
) -> None:
    r = run_installed(installed, tmp_path, "bench", "--quick")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    err = r.stderr
    assert err.startswith("memlab: error: memlab bench runs the benchmark scripts")
    assert "found no checkout" in err
    # every place looked at, in order
    assert f"${bench.CHECKOUT_ENV} (not set); {installed} (above the memlab package);" in err
    assert f"{tmp_path} (here)" in err
    for name, what in {**bench.BENCHMARKS, **bench.OTHER_SCRIPTS}.items():
        assert f"{name}  " in err and what in err, name
    assert f"{bench.CHECKOUT_ENV}=/path/to/checkout memlab bench --quick" in err
    assert "cd /path/to/checkout && python benchmarks/NAME.py --quick" in err


def test_without_a_checkout_one_benchmark_gets_its_own_commands(
    installed: Path, tmp_path: Path
) -> None:
    r = run_installed(installed, tmp_path, "bench", "sweep_speed")
    assert r.returncode == 2
    assert f"{bench.CHECKOUT_ENV}=/path/to/checkout memlab bench sweep_speed\n" in r.stderr
    assert "python benchmarks/sweep_speed.py\n" in r.stderr
    # a study's script is under studies/
    r = run_installed(installed, tmp_path, "bench", "chunk_lines")
    assert r.returncode == 2
    assert "python studies/chunk_lines.py" in r.stderr


def test_help_needs_no_checkout(installed: Path, tmp_path: Path) -> None:
    r = run_installed(installed, tmp_path, "bench", "--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert f"${bench.CHECKOUT_ENV}" in text and "(exit 2)" in text
    assert f"~{bench.QUICK_SECONDS_FIRST} s the first time" in text


@pytest.mark.slow
def test_memlab_checkout_runs_its_scripts(installed: Path, tmp_path: Path) -> None:
    """``MEMLAB_CHECKOUT``: the installed package runs that checkout's scripts with its own
    interpreter, ``--quick`` and ``--json DIR/NAME.json`` passed on; a study by name."""
    checkout = fake_checkout(tmp_path / "co", list(bench.BENCHMARKS), ("some_study",))
    out = tmp_path / "json"
    out.mkdir()
    r = run_installed(
        installed, tmp_path, "bench", "--quick", "--json-dir", str(out), checkout=checkout
    )
    assert r.returncode == 0, r.stderr
    for n in bench.BENCHMARKS:
        assert f"== {n}\n" in r.stdout
        assert json.loads((out / f"{n}.json").read_text()) == [
            "--quick",
            "--json",
            str(out / f"{n}.json"),
        ]
    assert "== all: " in r.stdout
    r = run_installed(
        installed, tmp_path, "bench", "some_study", "--json-dir", str(out), checkout=checkout
    )
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "some_study.json").read_text()) == [
        "--json",
        str(out / "some_study.json"),
    ]
    # a script that fails makes the run a runtime failure (exit 1)
    (checkout / "benchmarks" / "quality.py.rc").write_text("3")
    r = run_installed(installed, tmp_path, "bench", "quality", checkout=checkout)
    assert r.returncode == 1


def test_the_current_directory_is_a_checkout_too(installed: Path, tmp_path: Path) -> None:
    checkout = fake_checkout(tmp_path / "co", ["sweep_speed"])
    r = run_installed(installed, checkout, "bench", "sweep_speed")
    assert r.returncode == 0, r.stderr
    assert "== sweep_speed" in r.stdout


def test_a_memlab_checkout_that_is_not_one_is_an_error(installed: Path, tmp_path: Path) -> None:
    """A wrong ``$MEMLAB_CHECKOUT`` is said, never replaced by another place (here the
    current directory, which is a checkout)."""
    here = fake_checkout(tmp_path / "co", ["sweep_speed"])
    r = run_installed(installed, here, "bench", "sweep_speed", checkout=tmp_path / "nope")
    assert r.returncode == 2
    assert f"{bench.CHECKOUT_ENV}={tmp_path / 'nope'} is not a checkout" in r.stderr


def test_in_the_repository_the_checkout_is_found_above_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(bench.CHECKOUT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    checkout, looked = bench.find_checkout()
    assert checkout == REPO
    assert looked[-1] == f"{REPO} (above the memlab package)"
    assert bench.script_path(REPO, "sweep_speed") == REPO / "benchmarks" / "sweep_speed.py"
    assert bench.script_path(REPO, "chunk_lines") == (REPO / "studies" / "chunk_lines.py")
    assert bench.script_path(REPO, "nope") is None


def test_no_checkout_in_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same lookup, monkeypatched: the package's parent and the current directory are
    not checkouts."""
    monkeypatch.delenv(bench.CHECKOUT_ENV, raising=False)
    monkeypatch.setattr(bench, "PACKAGE_PARENT", tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["bench", "quality"]) == 2
    err = capsys.readouterr().err
    assert "found no checkout" in err and "python benchmarks/quality.py" in err


def test_the_package_lists_every_script_of_the_checkout() -> None:
    """``BENCHMARKS`` and ``OTHER_SCRIPTS`` (what the installed package can name without a
    checkout) are the scripts of ``benchmarks/``: the shared module and the docs' table and
    results-page renderers aside."""
    renderers = {"_common", "tables", "results_page"}
    scripts = {p.stem for p in (REPO / "benchmarks").glob("*.py")} - renderers
    assert scripts == set(bench.BENCHMARKS) | set(bench.OTHER_SCRIPTS)
    assert not set(bench.BENCHMARKS) & set(bench.OTHER_SCRIPTS)
