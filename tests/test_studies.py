"""The quality studies (``studies/``): each starts, each states the one command
that reproduces its docs tables, that command is on the docs page its docstring names
(docs/studies/*.md, or docs/results.md for the headline figures), and they share code
through ``studies/shared.py`` (and ``benchmarks/_common.py``), never through
each other."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STUDIES = REPO / "studies"
SCRIPTS = sorted(p for p in STUDIES.glob("*.py") if p.stem != "shared")


def reproduce(path: Path) -> tuple[Path, str]:
    """The page and command of a study's ``Reproduce (docs/PAGE.md…):`` paragraph: the page
    it names first, and the indented line after the paragraph."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    m = re.search(
        r"^Reproduce \((docs/[\w/.-]+\.md)[^\n]*?(?:\n[^\n]+?)*?:\n\n    (\S[^\n]*)$", doc, re.M
    )
    assert m, f"{path.name}: no 'Reproduce (docs/PAGE.md…):' paragraph followed by its command"
    return REPO / m.group(1), m.group(2).strip()


def test_there_are_studies() -> None:
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_each_study_states_its_one_command_and_its_page_gives_it(path: Path) -> None:
    page, cmd = reproduce(path)
    assert f"studies/{path.name}" in cmd, cmd
    assert page.is_file(), f"{path.name} names {page}, which does not exist"
    text = page.read_text(encoding="utf-8")
    assert cmd in text, f"{page.relative_to(REPO)} does not give {path.name}'s command: {cmd}"


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_studies_share_code_through_shared_only(path: Path) -> None:
    """A study imports ``benchmarks._common`` and ``studies.shared``, no other
    study and no other benchmark script: what two need is in one place."""
    allowed = {"benchmarks._common", "studies.shared"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith("benchmarks"):
                assert name in allowed, f"{path.name}:{node.lineno} imports {name}"


def test_every_study_starts() -> None:
    """``--help`` of every study, in one interpreter (the imports of a moved script resolve)."""
    code = textwrap.dedent(
        """
        import contextlib, io, runpy, sys
        for path in sys.argv[1:]:
            sys.argv = [path, "--help"]
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out):
                    runpy.run_path(path, run_name="__main__")
            except SystemExit as exc:
                assert exc.code == 0, (path, exc.code)
            assert out.getvalue().startswith("usage: "), path
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *map(str, SCRIPTS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-3000:]
