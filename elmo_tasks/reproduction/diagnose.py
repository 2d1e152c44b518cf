"""``scripts/reproduce.py diagnose VARIANT``: a few training steps of ESIM on the bundled SNLI sample, to
compare where ELMo enters without a whole run.

Prints the mean training loss and accuracy every 10 steps (Adam 3e-3, the experiment's model, fixture
data). Variants: ``baseline`` (no ELMo), ``input`` (ELMo at the input only, the config's default),
``input_output`` (also at the input encoder's output, the paper's SNLI placement) and
``input_output_layer_norm`` (the same with layer norm). This is how ELMo at the output, then joined to the
inference composition's output, was found to keep ESIM at chance with the shipped biLM
(docs/RESULTS_history.md).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/reproduce.py diagnose input_output
"""

import argparse
import itertools
import json
import os
from typing import Any, Dict, List, Tuple

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH as ELMO

ELMO_AT_OUTPUT = {"model.elmo_at_output": True, f"{ELMO}.num_output_representations": 2}
VARIANTS: Dict[str, Tuple[str, Dict[str, Any]]] = {
    "baseline": ("experiments/snli_baseline.jsonnet", {}),
    "input": ("experiments/snli_elmo.jsonnet", {}),
    "input_output": ("experiments/snli_elmo.jsonnet", ELMO_AT_OUTPUT),
    "input_output_layer_norm": ("experiments/snli_elmo.jsonnet", {**ELMO_AT_OUTPUT, f"{ELMO}.do_layer_norm": True}),
}
REPORT_EVERY = 10


def _model_and_instances(variant: str, count: int) -> Tuple[Any, List[Any], Any]:
    """The variant's model (seeded) with a vocabulary of the first ``count`` training pairs of the fixtures."""
    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    import elmo_tasks.plugin  # noqa: F401  (registers the SNLI reader and model)

    config, overrides = VARIANTS[variant]
    ext_vars = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    params = Params.from_file(config, json.dumps(overrides), ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(params.pop("train_data_path")), count))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    return Model.from_params(vocab=vocab, params=params.pop("model")), instances, vocab


def run(variant: str, steps: int = 40, batch_size: int = 32) -> List[str]:
    """Trains ``steps`` batches and prints (and returns) a line of loss and accuracy every 10 steps."""
    import torch
    from allennlp.data import Batch

    model, instances, vocab = _model_and_instances(variant, steps * batch_size)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    losses: List[float] = []
    lines: List[str] = []
    for step in range(steps):
        batch = Batch(instances[step * batch_size : (step + 1) * batch_size])
        batch.index_instances(vocab)
        loss = model(**batch.as_tensor_dict())["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % REPORT_EVERY == REPORT_EVERY - 1:
            accuracy = model.get_metrics(reset=True)["accuracy"]
            mean_loss = sum(losses[-REPORT_EVERY:]) / REPORT_EVERY
            lines.append(
                f"{variant} steps {step + 2 - REPORT_EVERY}-{step + 1}: loss {mean_loss:.3f} accuracy {accuracy:.3f}"
            )
            print(lines[-1], flush=True)
    return lines


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="reproduce.py diagnose", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("variant", nargs="?", default="input", choices=VARIANTS, help="(default: input)")
    parser.add_argument("--steps", type=int, default=40, help="training steps (default: 40)")
    parser.add_argument("--batch-size", type=int, default=32, help="pairs a step (default: 32)")
    args = parser.parse_args(argv)
    run(args.variant, args.steps, args.batch_size)
    return 0
