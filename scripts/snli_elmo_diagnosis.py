#!/usr/bin/env python
"""A few training steps of ESIM on the bundled SNLI sample, to compare where ELMo enters.

Prints the mean training loss and accuracy every 10 steps of 32 pairs (Adam 3e-3, the
experiment's model; fixture mode). Variants: ``baseline`` (no ELMo), ``input`` (ELMo at the
input only, the config's default), ``input_output`` (also at the output of the inference
composition, the paper's SNLI variant), ``input_output_layer_norm`` (the same with layer norm).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/snli_elmo_diagnosis.py input_output
"""

import json
import os
import sys

import torch

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH

ELMO = ELMO_EMBEDDER_PATH
VARIANTS = {
    "baseline": ("snli_baseline.jsonnet", {}),
    "input": ("snli_elmo.jsonnet", {}),
    "input_output": ("snli_elmo.jsonnet", {"model.elmo_at_output": True, f"{ELMO}.num_output_representations": 2}),
    "input_output_layer_norm": (
        "snli_elmo.jsonnet",
        {"model.elmo_at_output": True, f"{ELMO}.num_output_representations": 2, f"{ELMO}.do_layer_norm": True},
    ),
}


def main(variant: str, steps: int = 40, batch_size: int = 32) -> None:
    os.environ["ELMO_TASKS_DATA"] = "fixtures"
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import elmo_tasks.plugin  # noqa: F401

    experiment, overrides = VARIANTS[variant]
    params = Params.from_file(f"experiments/{experiment}", json.dumps(overrides), ext_vars=dict(os.environ))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[: steps * batch_size]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    losses = []
    for step in range(steps):
        batch = Batch(instances[step * batch_size : (step + 1) * batch_size])
        batch.index_instances(vocab)
        loss = model(**batch.as_tensor_dict())["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 10 == 9:
            accuracy = model.get_metrics(reset=True)["accuracy"]
            print(f"{variant} steps {step - 8}-{step + 1}: loss {sum(losses[-10:]) / 10:.3f} accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "input")
