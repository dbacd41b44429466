"""The documentation: every page is reached from the site's nav, no page carries issue
numbers, and every code block marked runnable runs.

A fenced block whose line before it is ``<!-- run -->`` in docs/**/*.md, README.md or
notebooks/README.md is an example the reader can paste: ``test_runnable_blocks`` runs the
blocks of one page in order, in a fresh folder with its own user cache
(``$XDG_CACHE_HOME``) and the repository's ``datasets/`` linked in, ``bash`` blocks with
``bash -euo pipefail`` and this interpreter's ``bin/`` first on ``PATH`` (so ``memlab`` is
the checkout's), ``python`` blocks with this interpreter; each must finish within
``BLOCK_SECONDS`` and exit 0, or with N under ``<!-- run exit=N -->``. The examples use the
hashing embedder and small generated data, so a page takes seconds. The site's own build
(``make docs``: ``mkdocs build --strict``, broken links and anchors included) is CI's docs
phase, not a test here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DOCS = REPO / "docs"
BLOCK_SECONDS = 60
MARK = re.compile(r"^<!-- run(?: exit=(\d+))? -->$")
FENCE = re.compile(r"^```(\w*)")
# Issue numbers and round-by-round narratives belong in git, not in what users read.
ISSUE = re.compile(r"\bissues? ?#?\d+|\b(?:first|second|third|fourth|fifth) round\b", re.I)


def pages() -> list[Path]:
    """Every Markdown page a reader sees: the site's (docs/, the notebooks' index) and the
    README."""
    return [
        *sorted(p for p in DOCS.rglob("*.md") if "notebooks" not in p.relative_to(DOCS).parts),
        REPO / "notebooks" / "README.md",
        REPO / "README.md",
    ]


def runnable_blocks(path: Path) -> list[tuple[str, str, int, int]]:
    """(language, code, expected exit code, line) of every block marked ``<!-- run -->``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line.strip())
        if not m:
            continue
        fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        assert fence, f"{path}:{i + 1}: '<!-- run -->' must be followed by a fenced block"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        lang = fence.group(1)
        assert lang in ("bash", "python"), f"{path}:{i + 2}: a runnable block is bash or python"
        out.append((lang, "\n".join(lines[i + 2 : end]) + "\n", int(m.group(1) or 0), i + 2))
    return out


RUNNABLE = [p for p in pages() if runnable_blocks(p)]


def nav_pages(node: object) -> list[str]:
    """Every file the mkdocs nav names, in order."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [f for v in node.values() for f in nav_pages(v)]
    if isinstance(node, list):
        return [f for v in node for f in nav_pages(v)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    """No orphan page in docs/ (mkdocs --strict fails on one too; this says which without
    mkdocs installed) and no nav entry without its file."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    named = nav_pages(config["nav"])
    assert len(named) == len(set(named)), "a page appears twice in the nav"
    for name in named:
        assert (DOCS / name).is_file(), f"mkdocs.yml names {name}, which docs/ does not hold"
    present = {
        str(p.relative_to(DOCS))
        for p in DOCS.rglob("*")
        if p.suffix in (".md", ".ipynb") and ".ipynb_checkpoints" not in p.parts
    }
    assert present - set(named) == set(), "pages no nav entry reaches"


def test_the_notebooks_are_all_rendered() -> None:
    """docs/notebooks is the notebooks folder (the site renders the committed notebooks)."""
    assert (DOCS / "notebooks").resolve() == (REPO / "notebooks").resolve()


def test_no_issue_numbers_in_what_users_read() -> None:
    """docs/, the READMEs, every notebook cell and the studies' and benchmarks' sources name
    no issue and tell no round-by-round history."""
    texts = {p: p.read_text(encoding="utf-8") for p in pages()}
    for p in sorted((REPO / "notebooks").glob("*.ipynb")):
        import json

        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        texts[p] = "\n".join("".join(c["source"]) for c in cells)
    for folder in ("studies", "benchmarks"):
        texts.update({p: p.read_text(encoding="utf-8") for p in (REPO / folder).glob("*.py")})
    found = [
        f"{p.relative_to(REPO)}: {m.group(0)!r}"
        for p, text in texts.items()
        for m in ISSUE.finditer(text)
    ]
    assert not found, "\n".join(found)


def test_the_marker_is_read() -> None:
    """The runnable blocks are found where the pages promise them (a marker typo would
    silently leave an example untested)."""
    names = {p.relative_to(REPO).as_posix() for p in RUNNABLE}
    assert {"README.md", "docs/getting-started.md", "docs/your-memory.md"} <= names
    for p in pages():
        text = p.read_text(encoding="utf-8")
        marks = sum(1 for line in text.splitlines() if line.strip().startswith("<!-- run"))
        assert marks == len(runnable_blocks(p)), f"{p}: a '<!-- run' line that is no marker"


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE, ids=[p.relative_to(REPO).as_posix() for p in RUNNABLE])
def test_runnable_blocks(page: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "datasets").symlink_to(REPO / "datasets")
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    }
    for lang, code, want, line in runnable_blocks(page):
        cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "bash" else [sys.executable]
        if lang == "bash" and want:
            cmd = ["bash", "-uo", "pipefail", "-c", code]  # the last command's code
        r = subprocess.run(
            cmd,
            input=code if lang == "python" else None,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_SECONDS,
        )
        where = f"{page.relative_to(REPO)}:{line} ({lang})"
        assert r.returncode == want, (
            f"{where} exited {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        )
