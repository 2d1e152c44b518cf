# The two commands of the README: `make setup` (also run by the others) and `make test`.
.PHONY: setup lint test test-all

setup:
	bash scripts/setup.sh

# ruff (pinned in requirements/test.txt): lint rules and formatting, settings in pyproject.toml.
lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

test: setup lint
	.venv/bin/python -m pytest -q -m "not slow" tests

test-all: setup
	.venv/bin/python -m pytest -q tests
