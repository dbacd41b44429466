"""The CI helpers: scripts/openclaw_release.py (the differential tests' reference package)
and scripts/ci_report.py (phase times and slowest tests), as .ci/run uses them."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "scripts") not in sys.path:
    sys.path.insert(0, str(REPO / "scripts"))

import ci_report  # noqa: E402
import openclaw_release  # noqa: E402


def test_integrity_is_npms_sha512_in_base64(tmp_path: Path) -> None:
    f = tmp_path / "x.tgz"
    f.write_bytes(b"abc")
    want = "sha512-" + base64.b64encode(hashlib.sha512(b"abc").digest()).decode()
    assert openclaw_release.integrity(f) == want
    assert (
        openclaw_release.INTEGRITY.startswith("sha512-") and len(openclaw_release.INTEGRITY) == 95
    )


def test_an_unpacked_package_is_used_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "package" / openclaw_release.MARKER
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    monkeypatch.setattr(openclaw_release.shutil, "which", lambda name: None)  # no npm needed
    assert openclaw_release.fetch(tmp_path) == tmp_path / "package"


def test_without_npm_the_tests_are_told_how_to_enable_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(openclaw_release.shutil, "which", lambda name: None)
    assert openclaw_release.main(["--dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "node is not installed" in err and "differential tests" in err
    assert "scripts/openclaw_release.py" in err
    assert openclaw_release.main(["--dir", str(tmp_path), "--strict"]) == 1
    with pytest.raises(RuntimeError, match="npm is not installed"):
        openclaw_release.fetch(tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_the_default_place_is_the_user_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert openclaw_release.default_dir() == tmp_path / "memlab" / "openclaw-2026.9.6"


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_fast" time="0.5"/>
<testcase classname="tests.test_notebooks" name="test_notebook_executes[01_quickstart]" time="20.0"/>
<testcase classname="tests.test_notebooks" name="test_notebook_executes[05_locomo]" time="25.5"/>
<testcase classname="tests.test_b" name="test_slow[x]" time="40.25"/>
</testsuite></testsuites>
"""


def test_the_report_names_each_phase_the_notebooks_and_the_slowest(tmp_path: Path, capsys) -> None:
    (tmp_path / "phases.tsv").write_text("lint\t6\nopenclaw\t1\ntests\t300\n")
    (tmp_path / "junit.xml").write_text(JUNIT)
    assert (
        ci_report.main(["--dir", str(tmp_path), "--phase", "setup=90", "--phase", "docs=30"]) == 0
    )
    text = capsys.readouterr().out
    names = [line.split()[0] for line in text.splitlines()[1:8]]
    assert names == ["setup", "lint", "openclaw", "tests", "notebooks", "docs", "total"]
    assert "  total         427 s" in text
    assert "notebooks      46 s  (2 executed within the tests; slowest 26 s: 05_locomo)" in text
    slow = text.split("slowest 4 tests:\n")[1].splitlines()
    assert slow[0] == "     40.2 s  tests/test_b.py::test_slow[x]"
    assert slow[-1].endswith("tests/test_a.py::test_fast")


def test_a_run_without_records_still_reports(tmp_path: Path, capsys) -> None:
    assert ci_report.main(["--dir", str(tmp_path), "--phase", "setup=5"]) == 0
    assert capsys.readouterr().out == "CI phases:\n  setup           5 s\n  total           5 s\n"
