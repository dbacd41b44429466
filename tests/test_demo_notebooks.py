"""memlab.demo.notebooks: the one place notebooks read their size, cache and findings rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab.demo import notebooks as nbs


def test_size_is_full_unless_the_variable_says_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nbs.SIZE_ENV, raising=False)
    assert nbs.notebook_size() == "full" and nbs.sized(60, 20) == 60
    monkeypatch.setenv(nbs.SIZE_ENV, "")
    assert nbs.notebook_size() == "full"
    monkeypatch.setenv(nbs.SIZE_ENV, " small ")
    assert nbs.notebook_size() == "small" and nbs.sized(60, 20) == 20
    monkeypatch.setenv(nbs.SIZE_ENV, "tiny")
    with pytest.raises(
        ValueError, match=r"MEMLAB_NOTEBOOK_SIZE must be one of full, small, got 'tiny'"
    ):
        nbs.sized(1, 2)


def test_the_cache_is_the_users_unless_overridden(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(nbs.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert nbs.notebook_cache() == tmp_path / "xdg" / "memlab" / "notebooks"
    monkeypatch.setenv(nbs.CACHE_ENV, str(tmp_path / "mine"))
    assert nbs.notebook_cache() == tmp_path / "mine"
    work = nbs.notebook_workdir()
    assert Path(work.name).is_dir() and Path(work.name).name.startswith("memlab-notebook-")
    work.cleanup()
    assert not Path(work.name).exists()


def test_a_finding_fails_at_full_size_and_is_reported_at_small(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(nbs.SIZE_ENV, raising=False)
    assert nbs.finding(True, "a leads b") is True
    with pytest.raises(AssertionError, match="finding no longer holds: a leads b"):
        nbs.finding(False, "a leads b")
    assert capsys.readouterr().out == ""
    monkeypatch.setenv(nbs.SIZE_ENV, "small")
    assert nbs.finding(False, "a leads b") is False
    assert nbs.finding(True, "c") is True
    assert capsys.readouterr().out == (
        "finding not checked at small size (does not hold here): a leads b\n"
        "finding not checked at small size (holds here): c\n"
    )
