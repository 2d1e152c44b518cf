# The two commands of the README: `make setup` (also run by the others) and `make test`.
.PHONY: setup test test-all

setup:
	bash scripts/setup.sh

test: setup
	.venv/bin/python -m pytest -q -m "not slow" tests

test-all: setup
	.venv/bin/python -m pytest -q tests
