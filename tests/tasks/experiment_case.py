"""``ModelTestCase`` on the real experiment configs, shrunk with ``-o``-style overrides.

Each task's model test builds its tiny config from ``experiments/<task>_<variant>.jsonnet`` and a
few size overrides (one key per size: the models derive every dependent width), so the test checks
the configs users run, and that one override changes one size. Data paths become absolute so the
tests work from any directory.
"""

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Set, Tuple

import pytest
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE


def tiny_bilm_embedder() -> Dict[str, Any]:
    """The ``fast_elmo`` embedder of the hand-built test models: the tiny test biLM, no dropout."""
    return {"type": "fast_elmo", "options_file": OPTIONS_FILE, "weight_file": WEIGHT_FILE, "dropout": 0.0}


def build_fixture_model(experiment: str, sentences: int = 20) -> Tuple[Model, Vocabulary]:
    """The experiment's model as its config builds it (vocabulary settings included) from the first
    ``sentences`` instances of its fixture training data; run from the repository root."""
    params = Params.from_file(
        str(ROOT / "experiments" / experiment), ext_vars={**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    )
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[:sentences]
    vocab = Vocabulary.from_params(params.pop("vocabulary", Params({})), instances=instances)
    return Model.from_params(vocab=vocab, params=params.pop("model")), vocab


def write_tiny_config(experiment: str, overrides: Dict[str, Any], directory: Path) -> str:
    """The experiment's config with ``overrides`` applied, as a JSON file in ``directory``."""
    env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    params = Params.from_file(str(ROOT / "experiments" / experiment), json.dumps(overrides), ext_vars=env)
    config = params.as_dict(quiet=True)
    # Plain batches of 8 in file order: ModelTestCase compares the trained and the reloaded model
    # batch by batch, and the experiments' bucket sampler shuffles its batches.
    config["data_loader"] = {"batch_size": 8}
    config.pop("validation_data_loader", None)
    for key in ("train_data_path", "validation_data_path"):
        path = Path(config[key])
        config[key] = str(path if path.is_absolute() else ROOT / path)
    out = directory / f"{experiment.replace('.jsonnet', '')}_tiny.json"
    out.write_text(json.dumps(config, indent=2))
    return str(out)


class ExperimentModelTestCase(ModelTestCase):
    """Sets up ``self.model`` from a shrunk experiment config and runs AllenNLP's model checks."""

    def check_experiment(self, experiment: str, overrides: Dict[str, Any], **train_kwargs: Any) -> None:
        param_file = write_tiny_config(experiment, overrides, self.TEST_DIR)
        self.set_up_model(Path(param_file), json.loads(Path(param_file).read_text())["validation_data_path"], seed=0)
        self.ensure_model_can_train_save_and_load(param_file, **train_kwargs)
        self.ensure_batch_predictions_are_consistent()


class BaselineAndElmoModelCase(ExperimentModelTestCase):
    """AllenNLP's model checks on a task's ``<task>_baseline`` and ``<task>_elmo`` configs, both shrunk
    by the same ``overrides``; a subclass names the task and its overrides."""

    task: str
    overrides: Dict[str, Any]
    # Parameters whose true gradient is zero, which the check for a gradient on every parameter skips.
    gradients_to_ignore: Optional[Set[str]] = None

    @pytest.mark.parametrize("variant", ["baseline", "elmo"])
    def test_train_save_load_and_batch_consistency(self, variant: str) -> None:
        self.check_experiment(
            f"{self.task}_{variant}.jsonnet", self.overrides, gradients_to_ignore=self.gradients_to_ignore
        )
