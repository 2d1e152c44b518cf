"""What the tasks' command tests all do: train an experiment briefly, evaluate and predict with its
archive, and compare a task's baseline and ELMo configs.

Imported by ``tests/tasks/<task>/test_<task>_commands.py``.
"""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Sequence, Tuple

import pytest

from tests.conftest import ROOT, experiment_config, run_allennlp

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
    return evaluate_archive(trained / "run" / "model.tar.gz", data_file, output, *options)


def evaluate_archive(archive: Path, data_file: str, output: Path, *options: str) -> dict:
    """``allennlp evaluate`` of ``archive`` on ``data_file`` (more ``options`` after), writing
    ``output``; returns the metrics it wrote."""
    run_allennlp("evaluate", str(archive), data_file, "--output-file", str(output), *options)
    return json.loads(output.read_text())


def train_span_tagger(tmp_path_factory: pytest.TempPathFactory, experiment: str, overrides: str) -> Tuple[Path, dict]:
    """Trains a span-labelling experiment (NER, SRL) as :func:`train_experiment` does and checks
    that it validated on span F1 and that its embedder has ELMo exactly when ``experiment`` is an
    ``*_elmo`` one; returns its archive and the config it was trained with."""
    run = train_experiment(tmp_path_factory, experiment, overrides) / "run"
    metrics = json.loads((run / "metrics.json").read_text())
    assert "best_validation_f1-measure-overall" in metrics
    config = json.loads((run / "config.json").read_text())
    has_elmo = "elmo" in config["model"]["text_field_embedder"]["token_embedders"]
    assert has_elmo == experiment.endswith("_elmo")
    return run / "model.tar.gz", config


def evaluate_span_f1(archive: Path, data_file: str, output: Path) -> dict:
    """:func:`evaluate_archive` of a span-labelling model, checking that it reports the overall span
    precision, recall and F1 and the loss; returns the metrics."""
    metrics = evaluate_archive(archive, data_file, output)
    for key in ("precision-overall", "recall-overall", "f1-measure-overall", "loss"):
        assert key in metrics
    return metrics


def baseline_and_elmo_configs(task: str, data: str, **extra_env: str) -> Tuple[dict, dict]:
    """``experiments/<task>_baseline`` and ``<task>_elmo`` as :func:`experiment_config` reads them."""
    baseline = experiment_config(f"{task}_baseline", data, **extra_env)
    return baseline, experiment_config(f"{task}_elmo", data, **extra_env)


def without_elmo(
    elmo_config: Dict[str, Any], readers: Sequence[str] = ("dataset_reader", "validation_dataset_reader")
) -> Tuple[dict, dict]:
    """A copy of ``elmo_config`` less its ``elmo`` token embedder and the ``elmo_characters`` indexers
    of its ``readers`` (checked on the way), so what is left can be compared key by key with the
    baseline's config; and the embedder taken out."""
    stripped = copy.deepcopy(elmo_config)
    embedder = stripped["model"]["text_field_embedder"]["token_embedders"].pop("elmo")
    for reader in readers:
        assert stripped[reader]["token_indexers"].pop("elmo") == {"type": "elmo_characters"}
    return stripped, embedder
