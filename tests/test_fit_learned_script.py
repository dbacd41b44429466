"""studies/fit_learned.py: which base the learned model corrects."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "studies") not in sys.path:
    sys.path.insert(0, str(REPO / "studies"))

import fit_learned  # noqa: E402

import memlab.stages.learned as learned  # noqa: E402
from memlab.pipeline.presets import memlab_best, memlab_learned  # noqa: E402


def test_the_pinned_base_is_the_engines_and_today_is_the_preset() -> None:
    pinned = fit_learned.base_pipeline("pinned")
    assert pinned.get_params() == memlab_learned(name="ltr-base", learned_model=()).get_params()
    today = fit_learned.base_pipeline("today")
    assert today.get_params() == memlab_best(name="ltr-base").get_params()
    # The two differ where today's preset moved on (file context, the speaker rule).
    assert today.file_context > 0 and pinned.file_context == 0
    model = (("bias", 0.0, 1.0, 0.5),)
    assert fit_learned.learned_system("today", learned_model=model).learned_model == model
    with pytest.raises(ValueError, match="base must be one of pinned, today"):
        fit_learned.learned_system("latest")


def test_write_refuses_a_model_fitted_on_another_base(monkeypatch: pytest.MonkeyPatch) -> None:
    # In-process, with the data loader disarmed: a broken guard fails here at once instead
    # of running the whole fit and writing the engine's model file.
    def no_load() -> None:
        raise AssertionError("the guard must stop before any data is loaded")

    monkeypatch.setattr(fit_learned, "load", no_load)
    monkeypatch.setattr(sys, "argv", ["fit_learned.py", "--base", "today", "--write"])
    with pytest.raises(SystemExit, match="--write needs --base pinned"):
        fit_learned.main()


def test_write_puts_the_model_in_the_data_file_never_in_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = Path(learned.__file__).read_text()
    monkeypatch.setattr(learned, "model_path", lambda: tmp_path / learned.MODEL_FILE)
    model = (("prior", 0.5, 2.0, 1.0), ("vz*qlen", 0.1, 0.3, -0.25), ("bias", 0.0, 1.0, 0.0))
    monkeypatch.setattr(sys, "argv", ["fit_learned.py", "--write"])
    out = fit_learned.write_model(model, "pairwise prior+adaptive C=0.01")
    assert out == tmp_path / learned.MODEL_FILE
    assert learned.load_model(out) == model
    about = json.loads(out.read_text())
    assert about["config"] == "pairwise prior+adaptive C=0.01"
    assert about["command"].endswith("studies/fit_learned.py --write")
    assert Path(learned.__file__).read_text() == source
