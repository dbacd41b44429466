# Two commands a new user needs: `make demo` (set up + main job) and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.memlab-installed
LINTED := memlab tests benchmarks studies scripts
# Where `make test` records each step's seconds and the tests' durations (.ci/run reports them).
REPORT := .pytest_cache/ci
PYTEST := $(PY) -m pytest -n auto --dist loadfile --durations=10 --junitxml=$(REPORT)/junit.xml
# Records the seconds a step took: $(call timed,NAME,COMMAND)
timed = @mkdir -p $(REPORT); echo "== $(1)"; start=$$(date +%s); $(2); rc=$$?; \
	printf '%s\t%s\n' "$(1)" "$$(( $$(date +%s) - start ))" >> $(REPORT)/phases.tsv; exit $$rc

.PHONY: setup demo test test-fast docs lint format clean openclaw-release

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

# Everything: ruff, then the whole suite (model tests, notebooks at their small size, and
# the differential tests against OpenClaw 2026.9.6, fetched once with npm into the user
# cache; without node or npm they are skipped with a message saying how to enable them).
test: setup
	@rm -f $(REPORT)/phases.tsv
	$(call timed,lint,$(VENV)/bin/ruff check $(LINTED) && $(VENV)/bin/ruff format --check $(LINTED))
	$(call timed,openclaw,$(PY) scripts/openclaw_release.py $(if $(MEMLAB_REQUIRE_OPENCLAW),--strict) > $(REPORT)/openclaw-dist)
	$(call timed,tests,OPENCLAW_DIST="$$(cat $(REPORT)/openclaw-dist)" $(PYTEST))

# The inner loop: ruff and every test not marked slow, model or locomo (no model load, no
# notebook, no dev set, no test of a few seconds or more), property tests with 10 examples
# each unless a test sets its own: under two minutes on two cores.
test-fast: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(PY) -m pytest -n auto --dist loadfile -q -m "not slow and not model and not locomo" \
		--hypothesis-profile fast

# The documentation site (mkdocs.yml) into site/: --strict fails on a broken link or anchor,
# a page no nav entry reaches, or a docstring the API pages cannot render.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Fetch OpenClaw 2026.9.6 for the differential tests (prints its dist folder).
openclaw-release: setup
	$(PY) scripts/openclaw_release.py

lint:
	$(VENV)/bin/ruff check $(LINTED)

format:
	$(VENV)/bin/ruff format $(LINTED)
	$(VENV)/bin/ruff check --fix $(LINTED)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build site *.egg-info
