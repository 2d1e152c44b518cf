"""Pinned numbers of the task models: a model built from a shrunk experiment config with a fixed seed,
run on a fixture batch, must give the numbers recorded in ``tests/tasks/<task>/pinned_outputs.json``.

What is recorded, per case (an experiment, its size overrides, a seed): in evaluation mode the loss and
every tensor output (the logits, probabilities, spans), and in training mode (dropout on, torch seeded)
the loss and the gradient norm of every parameter. A refactoring that should not change what a model
computes (how ELMo reaches a model's output, how layers are built) must leave them all equal, within
1e-6 plus 1e-6 relative (float noise of a different thread count).

The files were written by the code of commit 7751b0f, before ELMo at the output became an explicit
``ElmoAtOutput.embed`` call (the models then read it back from the embedder with
``take_representations()``). Written again since, each for a change meant to change the numbers: SST-5's
training-mode numbers when its integrator dropout moved onto the pooled vector, as in AllenNLP's BCN (its
evaluation-mode numbers did not change), and SNLI's when its output feedforward became ReLU, as in the
paper and allennlp-models (with ``tanh`` restored by an override, every old number came back), and
SNLI's input-and-output case when ELMo's output mix moved to the paper's place, the input encoder's
output (its other cases kept their numbers). Rewrite them only for such a change, and say so in its
commit:

    OMP_NUM_THREADS=1 .venv/bin/python -m tests.tasks.pinned_outputs --write snli sst squad
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Instance, Vocabulary
from allennlp.models import Model

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH

ROOT = Path(__file__).resolve().parent.parent.parent
TOLERANCE = 1e-6
#: Instances in the fixture batch.
BATCH_SIZE = 6


def pinned_file(task: str) -> Path:
    return ROOT / "tests" / "tasks" / task / "pinned_outputs.json"


def _params(experiment: str, overrides: Dict[str, Any]) -> Params:
    env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    return Params.from_file(str(ROOT / "experiments" / experiment), json.dumps(overrides), ext_vars=env)


def fixture_batch(experiment: str, overrides: Dict[str, Any]) -> Tuple[Params, List[Instance]]:
    """The model's params and the first ``BATCH_SIZE`` validation instances, read as the config reads them."""
    params = _params(experiment, overrides)
    reader_params = params.pop("validation_dataset_reader", None) or params.pop("dataset_reader")
    params.pop("dataset_reader", None)
    reader = DatasetReader.from_params(reader_params)
    instances = list(reader.read(str(ROOT / params.pop("validation_data_path"))))[:BATCH_SIZE]
    return params.pop("model"), instances


def model_outputs(experiment: str, overrides: Dict[str, Any], seed: int) -> Dict[str, Any]:
    """The numbers this case pins (see the module docstring), as plain lists and floats."""
    model_params, instances = fixture_batch(experiment, overrides)
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(seed)
    model = Model.from_params(vocab=vocab, params=model_params)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    pinned: Dict[str, Any] = {}
    model.eval()
    with torch.no_grad():
        output = model(**tensors)
    for key, value in sorted(output.items()):
        # Probabilities are softmaxes of the logits pinned beside them.
        if isinstance(value, torch.Tensor) and not key.endswith("_probs"):
            pinned[f"eval/{key}"] = _shortest(value.double().tolist())
    model.train()
    torch.manual_seed(seed + 1)
    loss = model(**tensors)["loss"]
    loss.backward()
    pinned["train/loss"] = _shortest(loss.item())
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            pinned[f"train/grad_norm/{name}"] = _shortest(parameter.grad.double().norm().item())
    return pinned


def _shortest(numbers: Any) -> Any:
    """Floats with 9 significant digits, which tell every float32 apart (the files stay small)."""
    if isinstance(numbers, list):
        return [_shortest(number) for number in numbers]
    return float(f"{numbers:.9g}")


def differences(expected: Any, actual: Any, where: str = "") -> List[str]:
    """Where ``actual`` differs from ``expected`` by more than the tolerance (empty: the same)."""
    if isinstance(expected, dict) or isinstance(actual, dict):
        if not (isinstance(expected, dict) and isinstance(actual, dict)) or expected.keys() != actual.keys():
            missing = sorted(set(expected) - set(actual)) if isinstance(actual, dict) else expected
            extra = sorted(set(actual) - set(expected)) if isinstance(expected, dict) else actual
            return [f"{where}: keys differ, missing {missing}, extra {extra}"]
        return [line for key in expected for line in differences(expected[key], actual[key], f"{where}/{key}")]
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)) or len(expected) != len(actual):
            return [f"{where}: shapes differ"]
        return [
            line
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for line in differences(e, a, f"{where}[{i}]")
        ]
    if not math.isclose(float(actual), float(expected), rel_tol=TOLERANCE, abs_tol=TOLERANCE):
        return [f"{where}: expected {expected!r}, got {actual!r}"]
    return []


#: The cases pinned per task: name -> (experiment, overrides, seed). The experiments' own fixture sizes
#: are small enough; SNLI's ELMo config has ELMo at the input only in fixture mode, so its input-and-output
#: variant (the paper's, ``elmo_input_output`` in elmo_tasks/tasks/snli/spec.py) is pinned too.
CASES: Dict[str, Dict[str, Tuple[str, Dict[str, Any], int]]] = {
    "snli": {
        "baseline": ("snli_baseline.jsonnet", {}, 7),
        "elmo": ("snli_elmo.jsonnet", {}, 7),
        "elmo_input_output": (
            "snli_elmo.jsonnet",
            {"model.elmo_at_output": True, f"{ELMO_EMBEDDER_PATH}.num_output_representations": 2},
            7,
        ),
    },
    "sst": {"baseline": ("sst5_baseline.jsonnet", {}, 7), "elmo": ("sst5_elmo.jsonnet", {}, 7)},
    "squad": {"baseline": ("squad_baseline.jsonnet", {}, 7), "elmo": ("squad_elmo.jsonnet", {}, 7)},
}


def check_pinned(task: str, case: str) -> None:
    """Asserts that the case's numbers are the pinned ones (the first differences in the message)."""
    expected = json.loads(pinned_file(task).read_text())[case]
    found = differences(expected, model_outputs(*CASES[task][case]))
    assert not found, f"{len(found)} numbers differ from {pinned_file(task)}: " + "; ".join(found[:5])


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description="Write the pinned outputs of task models (see the docstring).")
    parser.add_argument("--write", action="store_true", help="write tests/tasks/<task>/pinned_outputs.json")
    parser.add_argument("tasks", nargs="+", choices=["snli", "sst", "squad"])
    args = parser.parse_args(argv)
    import tests.conftest  # noqa: F401 (the tiny biLM of the tests, and the plugin)

    for task in args.tasks:
        numbers = {name: model_outputs(*case) for name, case in CASES[task].items()}
        if args.write:
            pinned_file(task).write_text(json.dumps(numbers, indent=1, sort_keys=True) + "\n")
            print(f"wrote {len(numbers)} cases to {pinned_file(task)}")
        else:
            expected = json.loads(pinned_file(task).read_text())
            for name, found in numbers.items():
                different = differences(expected[name], found)
                print(task, name, "same" if not different else f"{len(different)} differ: {different[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
