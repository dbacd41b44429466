"""The notebooks: committed in a clean shape, and executed headless from a fresh kernel.

Execution uses nbclient (one fresh kernel per notebook, cells in order); any
cell that raises — including the asserts a notebook makes about the data its
stated conclusions rest on — fails the test with the cell's traceback.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from memlab.demo.notebooks import SIZE_ENV
from tests.conftest import REPO

NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = [
    "01_quickstart",
    "02_tuning_vector_weight",
    "03_fusion_methods",
    "04_mmr_and_decay",
    "05_locomo",
    "06_chunking",
    "07_openclaw_releases",
    "08_transfer",
    "09_realmem",
    "10_flush",
    "11_your_memory",
    "12_realism",
]
# Committed outputs must stay small (they are diffs in review), and 05's must be empty:
# its outputs would quote LoCoMo, which is licensed CC BY-NC and never copied into the repo.
MAX_NOTEBOOK_BYTES = 1_500_000
NO_OUTPUTS = {"05_locomo"}
# Read LoCoMo (and 08 BEAM too) from ../shared; each prints "… not found" and skips when absent.
NEEDS_LOCOMO = {"05_locomo", "08_transfer"}
# Reads RealMem from ../shared (or MEMLAB_REALMEM); prints "RealMem not found" and skips.
NEEDS_SHARED = NEEDS_LOCOMO | {"09_realmem", "10_flush"}
CELL_TIMEOUT = 900


def _load(name: str) -> dict:
    return json.loads((NOTEBOOK_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def test_every_notebook_is_listed() -> None:
    assert sorted(p.stem for p in NOTEBOOK_DIR.glob("*.ipynb")) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_size_is_read_in_one_place(name: str) -> None:
    """A notebook takes its size and cache folder from memlab.demo.notebooks (`sized`,
    `notebook_cache`), never from the environment itself, so one variable sizes them all."""
    code = "\n".join(_source(c) for c in _load(name)["cells"] if c["cell_type"] == "code")
    assert "from memlab.demo.notebooks import" in code
    assert "os.environ" not in code and "getenv" not in code


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_states_question_and_answer(name: str) -> None:
    nb = _load(name)
    cells = nb["cells"]
    assert cells[0]["cell_type"] == "markdown"
    head = _source(cells[0])
    assert "**Question.**" in head
    assert any(model in head for model in ("all-MiniLM-L6-v2", "hashing")), "say which embedder"
    answer = [
        i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "## Answer" in _source(c)
    ]
    assert answer, "no '## Answer' section"
    tail = cells[answer[-1] + 1 :]
    # The answer is printed by code from measured values, not typed into markdown.
    assert tail and all(c["cell_type"] == "code" for c in tail)
    assert "print(" in _source(tail[-1])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_outputs_are_small_and_clean(name: str) -> None:
    path = NOTEBOOK_DIR / f"{name}.ipynb"
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES
    for cell in _load(name)["cells"]:
        outputs = cell.get("outputs", [])
        assert all(o.get("output_type") != "error" for o in outputs)
        if name in NO_OUTPUTS:
            assert outputs == [] and cell.get("execution_count") is None


def _execute(name: str) -> tuple[object, float]:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    return nb, time.perf_counter() - t0


def _text_outputs(nb: object) -> str:
    out = []
    for cell in nb.cells:  # type: ignore[attr-defined]
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                out.append(o.text)
            elif "data" in o and "text/plain" in o.data:
                out.append(o.data["text/plain"])
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.locomo) if n in NEEDS_SHARED else n for n in NOTEBOOKS],
)
def test_notebook_executes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every cell runs, on the notebook's small configuration (memlab.demo.notebooks).
    monkeypatch.setenv(SIZE_ENV, "small")
    nb, seconds = _execute(name)
    text = _text_outputs(nb)
    assert "notebook run time:" in text or re.search(r" not found(: looked at| \(looked for)", text)
    print(f"{name}: {seconds:.0f} s")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "variable", "absent"),
    [
        ("05_locomo", "MEMLAB_LOCOMO", "absent.json"),
        ("08_transfer", "MEMLAB_LOCOMO", "absent.json"),
        ("08_transfer", "MEMLAB_BEAM", "absent-beam"),
        ("09_realmem", "MEMLAB_REALMEM", "absent-realmem"),
        ("10_flush", "MEMLAB_REALMEM", "absent-realmem"),
    ],
)
def test_data_notebooks_skip_cleanly_without_the_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, variable: str, absent: str
) -> None:
    monkeypatch.setenv(variable, str(tmp_path / absent))
    nb, _ = _execute(name)
    text = _text_outputs(nb)
    # The missing set is named; a machine without ../shared misses the other one too
    # ("LoCoMo and BEAM not found"), and the notebook must skip as cleanly.
    said = {
        "MEMLAB_LOCOMO": r"LoCoMo( and BEAM)? not found",
        "MEMLAB_BEAM": r"BEAM not found",
        "MEMLAB_REALMEM": r"RealMem not found",
    }[variable]
    assert re.search(said, text)
    assert "notebook run time" not in text
