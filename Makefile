# The two commands of the README: `make setup` (also run by the others) and `make test`.
.PHONY: setup lint test test-all

# Tests run in random order (pytest-randomly, pinned in requirements/test.txt), a new order each
# run, so no test can lean on the ones before it. The seed is printed; `make test SEED=N` repeats
# that run's order.
ifndef SEED
SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
# When make started (read once): the test targets end with how long they took, set-up and lint included.
STARTED := $(shell date +%s)
ELAPSED = $$(( ($$(date +%s) - $(STARTED)) / 60 )) min $$(( ($$(date +%s) - $(STARTED)) % 60 )) s
# Two worker processes (pytest-xdist), each test file kept on one of them (its module fixtures built
# once); WORKERS=0 runs the tests in this process, e.g. to debug one. The first pass ends with its 15
# slowest tests, to keep the suite's time in view (mark a test `slow` if it trains for long).
WORKERS ?= 2
PYTEST := .venv/bin/python -m pytest -q -p randomly --randomly-seed=$(SEED) -n $(WORKERS) --dist loadfile
# The first pass already runs on one thread (the plugin's thread policy, elmo_tasks/threads.py) with
# worker processes where a command uses them; a user's OMP_NUM_THREADS=1 takes the policy's other
# branch (torch left as set, one process instead of workers). These tests exercise those code paths,
# so they run a second time with OMP_NUM_THREADS=1.
THREAD_SENSITIVE_TESTS := tests/bilm \
	$(sort $(wildcard tests/test_threads.py tests/commands/test_elmo_embed*.py tests/tasks/lm/test_lm_commands.py))

setup:
	bash scripts/setup.sh

# ruff (pinned in requirements/test.txt): lint rules and formatting; mypy: types of elmo_tasks/.
# Settings of both in pyproject.toml.
lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

test: setup lint
	@echo "make test: the tests in random order, seed $(SEED) (the same order again: make test SEED=$(SEED))"
	$(PYTEST) -m "not slow" --durations=15 tests
	@echo "make test: the thread-sensitive tests again with OMP_NUM_THREADS=1"
	OMP_NUM_THREADS=1 $(PYTEST) -m "not slow" $(THREAD_SENSITIVE_TESTS)
	@echo "make test: passed in $(ELAPSED)"

test-all: setup
	@echo "make test-all: the tests in random order, seed $(SEED) (the same order again: make test-all SEED=$(SEED))"
	$(PYTEST) tests
	@echo "make test-all: passed in $(ELAPSED)"
