"""What the tasks' command tests all do: train an experiment briefly, predict with its archive.

Imported by ``tests/tasks/<task>/test_<task>_commands.py``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_allennlp

# The allennlp script of the Python running the tests (the project's .venv/bin/allennlp).
ALLENNLP = str(Path(sys.executable).parent / "allennlp")


def train_experiment(tmp_path_factory: pytest.TempPathFactory, experiment: str, overrides: str) -> Path:
    """Trains ``experiments/<experiment>.jsonnet`` with ``overrides`` into ``<folder>/run``; returns
    the folder, named after the experiment so that tests can tell which one it holds."""
    out = tmp_path_factory.mktemp(experiment)
    run_allennlp("train", f"experiments/{experiment}.jsonnet", "-s", str(out / "run"), "-o", overrides)
    return out


def predict(trained: Path, inputs: Path, output: Path, fresh_process: bool) -> None:
    """``allennlp predict`` with the archive in ``trained/run``, writing ``output``; with
    ``fresh_process`` as the installed script (plugins found via .allennlp_plugins), else in-process."""
    args = ["predict", str(trained / "run" / "model.tar.gz"), str(inputs), "--output-file", str(output), "--silent"]
    if fresh_process:
        subprocess.run(
            [ALLENNLP, *args],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={**os.environ, "ELMO_TASKS_DATA": "fixtures"},
        )
    else:
        run_allennlp(*args)


#: A Python program (for ``python -c``) that runs ``allennlp predict`` with its own arguments and
#: prints its peak memory, ``{"peak_mb": ...}``, as the last line of stderr, even when predict fails.
PREDICT_REPORTING_PEAK_MEMORY = r"""
import json, resource, sys
from allennlp.commands import main
sys.argv = ["allennlp", "predict", *sys.argv[1:]]
try:
    main(prog="allennlp")
finally:
    print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)
"""


def evaluate(trained: Path, data_file: str, output: Path, *options: str) -> dict:
    """``allennlp evaluate`` of the archive in ``trained/run`` on ``data_file`` (more ``options``,
    e.g. ``-o``, after), writing ``output``; returns the metrics it wrote."""
    run_allennlp("evaluate", str(trained / "run" / "model.tar.gz"), data_file, "--output-file", str(output), *options)
    return json.loads(output.read_text())
