# Two commands a new user needs: `make demo` (set up + main job) and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.memlab-installed

.PHONY: setup demo test lint format clean

setup: $(STAMP)

# Reinstall only when the declared dependencies change. torch is pinned and
# installed first: an unpinned torch pulled in by sentence-transformers would be
# a multi-GB CUDA build.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (memlab needs Python 3.11)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(VENV)/bin/memlab demo

test: setup
	$(VENV)/bin/ruff check memlab tests benchmarks scripts
	$(VENV)/bin/ruff format --check memlab tests benchmarks scripts
	$(PY) -m pytest -n auto --dist loadfile

lint:
	$(VENV)/bin/ruff check memlab tests benchmarks scripts

format:
	$(VENV)/bin/ruff format memlab tests benchmarks scripts
	$(VENV)/bin/ruff check --fix memlab tests benchmarks scripts

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
