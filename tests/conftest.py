"""Shared test helpers: paths to fixtures and to the team's ../shared folder."""
from pathlib import Path

import pytest

import elmo_tasks  # noqa: F401  (registers everything and sets the config defaults)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
BILM_TF = FIXTURES / "bilm_tf"
OPTIONS_FILE = str(BILM_TF / "options.json")
WEIGHT_FILE = str(BILM_TF / "lm_weights.hdf5")
SHARED = ROOT.parent / "shared"

needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="../shared is absent")


def run_allennlp(*args: str) -> None:
    """Run an `allennlp` command in this process from the repo root, on the bundled fixtures.

    Config paths (fixtures/..., experiments/...) are relative to the repo root, as for users.
    """
    import os
    import sys
    from unittest import mock

    from allennlp.commands import main

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with mock.patch.object(sys, "argv", ["allennlp", *args]), mock.patch.dict(os.environ, {"ELMO_TASKS_DATA": "fixtures"}):
            main(prog="allennlp")
    finally:
        os.chdir(cwd)
