"""Shared test helpers: paths to fixtures and to the real data (``needs_shared``, docs/DATA.md).

Experiments in tests run with bilm-tf's tiny test biLM (fast); tests/pretrained checks the
shipped default biLM itself.
"""

import os
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_ROOT = ROOT / "fixtures"
BILM_TF = FIXTURES_ROOT / "bilm_tf"
OPTIONS_FILE = str(BILM_TF / "options.json")
WEIGHT_FILE = str(BILM_TF / "lm_weights.hdf5")
os.environ["ELMO_OPTIONS"], os.environ["ELMO_WEIGHTS"] = OPTIONS_FILE, WEIGHT_FILE

import elmo_tasks.plugin  # noqa: E402,F401  (registers everything and sets the remaining config defaults)

SHARED = ROOT.parent / "shared"

needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="../shared is absent")


def run_allennlp(*args: str, cwd: Optional[Path] = None) -> None:
    """Run an `allennlp` command in this process from the repo root (or ``cwd``), on the bundled fixtures.

    Config paths (fixtures/..., experiments/...) are relative to the repo root, as for users.
    """
    import os
    import sys
    from unittest import mock

    from allennlp.commands import main

    previous = os.getcwd()
    os.chdir(cwd or ROOT)
    try:
        with (
            mock.patch.object(sys, "argv", ["allennlp", *args]),
            mock.patch.dict(os.environ, {"ELMO_TASKS_DATA": "fixtures"}),
        ):
            main(prog="allennlp")
    finally:
        os.chdir(previous)


def experiment_config(experiment: str, data: str, **extra_env: str) -> dict:
    """``experiments/<experiment>.jsonnet`` as a dict, with fixed stand-in values for the biLM
    files and the seed, so two variants of a task can be compared key by key."""
    from allennlp.common import Params

    env = {
        "ELMO_TASKS_DATA": data,
        "ELMO_TASKS_SHARED_DATA": "../shared/data",
        "ELMO_OPTIONS": "o.json",
        "ELMO_WEIGHTS": "w.hdf5",
        "ELMO_TASKS_SEED": "1",
        **extra_env,
    }
    return Params.from_file(str(ROOT / "experiments" / f"{experiment}.jsonnet"), ext_vars=env).as_dict()
