# datbench: `make install` sets up .venv (and says how to put datbench on PATH); `make demo` and
# `make test` set it up themselves when needed.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_DIR ?= demo-run

.PHONY: help install demo suite test ci lint format sample-data bench fuzz clean

help:
	@echo "make install - create .venv with datbench installed (editable) and its test tools"
	@echo "make demo   - export the bundled sample data, build judge tasks, score the example responses"
	@echo "make test   - run the test suite"
	@echo "make suite  - the suite on one interpreter only (.venv)"
	@echo "make ci     - the suite on Python 3.11 and 3.13 (what CI runs)"
	@echo "make lint   - ruff check + ruff format --check + mypy (type check of datbench_cli)"
	@echo "make bench  - speed and memory ratios, in a runtime-only venv (BENCH_ARGS='--samples 1500')"
	@echo "make fuzz   - the property tests and kill loops with many more examples (minutes)"
	@echo "make format - ruff format + ruff check --fix"
	@echo "make sample-data - regenerate sample_data/ from the vectors in tests/data"

# Python writes the byte code of what it imports (some environments set PYTHONDONTWRITEBYTECODE,
# under which every process compiles sympy, datasets and scipy from source again: an import of
# them took 15 s instead of 2.8 s here, and the suite starts hundreds of processes).
unexport PYTHONDONTWRITEBYTECODE

# --no-compile: pip would byte-compile every installed module (sympy, scipy, pyarrow, ...), a
# third of a fresh install's CPU time; Python compiles what the suite imports on first use.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -e '.[test]'
	$(PY) -m compileall -q datbench_cli
	touch $(STAMP)

install: $(STAMP)
	@echo "datbench is installed in $(VENV)/ (editable: edits to datbench_cli/ take effect at once)."
	@echo "Put it on PATH in this shell with:"
	@echo "    source $(VENV)/bin/activate"
	@echo "then try: datbench --help"

DATBENCH := $(VENV)/bin/datbench
SAMPLE := sample_data/datbench

demo: $(STAMP)
	@echo "demo: the sample responses and judge verdicts contain deliberate mistakes, gaps and one"
	@echo "demo: unparseable verdict, so the warnings below are expected; nothing here is a failure."
	rm -rf $(DEMO_DIR)
	$(DATBENCH) export-tasks all --source $(SAMPLE) --dir $(DEMO_DIR)
	cp $(SAMPLE)/responses.jsonl $(DEMO_DIR)/responses.jsonl
	$(DATBENCH) make-judge-tasks --dir $(DEMO_DIR)
	cp $(SAMPLE)/judge_responses.jsonl $(DEMO_DIR)/judge_responses.jsonl
	@$(DATBENCH) check-judge --dir $(DEMO_DIR) 2>/dev/null || \
		echo "demo: check-judge flagged the deliberately unparseable verdict (exit 1, as expected)"
	$(DATBENCH) score --dir $(DEMO_DIR)
	rm -rf $(DEMO_DIR)-vistoolbench
	$(DATBENCH) export-tasks vistoolbench --source sample_data/vistoolbench --dir $(DEMO_DIR)-vistoolbench
	cp sample_data/vistoolbench/responses.jsonl $(DEMO_DIR)-vistoolbench/responses.jsonl
	$(DATBENCH) make-judge-tasks --dir $(DEMO_DIR)-vistoolbench
	cp sample_data/vistoolbench/judge_responses.jsonl $(DEMO_DIR)-vistoolbench/judge_responses.jsonl
	$(DATBENCH) score --allow-missing --dir $(DEMO_DIR)-vistoolbench  # the sample leaves 2 turns unanswered
	@echo ""
	@echo "demo: done; the runs are in $(DEMO_DIR)/ and $(DEMO_DIR)-vistoolbench/. Next, put datbench on"
	@echo "demo: PATH (source $(VENV)/bin/activate) and write the page of the first run:"
	@echo "    datbench view $(DEMO_DIR)/"

# The suite on one interpreter (PYTHON, in VENV), on pytest-xdist workers: two more than the
# cores, since much of the suite waits on processes it starts (the CLI, kills, scoring pools,
# sandboxes). On 2 cores, the suite on Python 3.11 took 314 s on 3 workers, 283 s on 4 and
# 313 s on 5 (on 3.13 without the one_python tests: 182 s on 3, 177 s on 4). It ends with
# the 15 slowest tests so drift shows, and the reason of every skip (-rs). PYTEST_MARKS selects
# by marker (`make test` runs the newest Python with "not one_python").
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 2 )))
PYTEST_ARGS ?= -n $(PYTEST_WORKERS) --durations=15 -rs
PYTEST_MARKS ?=
suite: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) $(if $(PYTEST_MARKS),-m "$(PYTEST_MARKS)")

# `make test` (the README's test command, what .ci/run runs): the suite on the oldest supported
# Python (PYTHON, in .venv) and on the newest (3.13, in .venv-3.13), there without the tests
# marked one_python (the kernel's side: kills, full disks, locks, a browser; tests/conftest.py). The two venvs are set up
# side by side (mostly waiting on pip), then the suites run one after the other, each on every
# core. A machine without python3.13 runs only the first and says so.
PYTHON_NEWEST ?= python3.13
NEWEST_VENV ?= .venv-3.13
test:
	@newest=""; \
	for candidate in $(PYTHON_NEWEST) $$HOME/.pyenv/versions/3.13*/bin/python3.13; do \
		if "$$candidate" -c "" >/dev/null 2>&1; then newest="$$candidate"; break; fi; \
	done; \
	if [ -z "$$newest" ]; then \
		$(MAKE) --no-print-directory suite || exit 1; \
		echo "notice: $(PYTHON_NEWEST) not found: the suite ran on $$($(PY) -V 2>&1) only"; \
	else \
		$(MAKE) --no-print-directory install PYTHON="$$newest" VENV=$(NEWEST_VENV) & newest_install=$$!; \
		$(MAKE) --no-print-directory install || { wait $$newest_install; exit 1; }; \
		wait $$newest_install || exit 1; \
		$(MAKE) --no-print-directory suite || exit 1; \
		$(MAKE) --no-print-directory suite PYTHON="$$newest" VENV=$(NEWEST_VENV) \
			PYTEST_MARKS="not one_python"; \
	fi

ci: test

# The property tests and kill loops under the long hypothesis profile (CI runs the bounded,
# deterministic "ci" profile as part of `make test`).
FUZZ_TESTS := tests/robustness/test_fuzz_jsonl.py tests/benchmarks/test_fuzz_verdict.py tests/scorers/test_fuzz_scorers.py \
	tests/robustness/test_interruption.py

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -p no:cacheprovider $(FUZZ_TESTS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

sample-data: $(STAMP)
	$(PY) scripts/make_sample_data.py
	$(PY) scripts/make_vistoolbench_sample.py

# The bench measures what a user installs: the runtime dependencies only, in their own venv
# (the test extras bring selenium, whose trio the HTTP client then imports on every start-up).
BENCH_VENV ?= .venv-bench
BENCH_PY := $(BENCH_VENV)/bin/python
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_STAMP): pyproject.toml
	test -x $(BENCH_PY) || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install -q --upgrade pip
	$(BENCH_PY) -m pip install -q -e .
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH_PY) -m compileall -q datbench_cli
	$(BENCH_PY) scripts/bench.py $(BENCH_ARGS)

clean:
	rm -rf $(DEMO_DIR) $(DEMO_DIR)-vistoolbench build *.egg-info
