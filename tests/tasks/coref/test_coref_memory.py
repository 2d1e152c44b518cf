"""A 50-sentence document trains and predicts within 2 GB on the CPU, with the full-data model sizes.

Runs in a fresh process so its peak resident memory is the model's own: the ``full`` ELMo
config, the paper's recipe (300-d words, 200-unit BiLSTM, 150-unit scorers, Lee et al.'s K = 250,
the shipped small biLM) on an invented document of 50 sentences x 20 tokens (1,000 tokens, 7,750
candidate spans of at most 10 words). Prints the seconds of one training step and of one prediction
(docs/BENCHMARKS.md quotes them).
"""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

SCRIPT = r"""
import json, resource, sys, time
import torch
import elmo_tasks.plugin  # noqa: F401
from elmo_tasks.command_start import start_command
from allennlp.common import Params

start_command()  # as a command does first: the experiments' jsonnet blocks become importable
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

config = Params.from_file("experiments/coref_elmo.jsonnet").as_dict()
reader = DatasetReader.from_params(Params(config["validation_dataset_reader"]))
words = (
    "the committee said on monday that its members would meet again to discuss the new budget plan very soon"
).split()
sentences = [words[:19] + ["."] for _ in range(50)]
clusters = [[(s * 20, s * 20 + 1) for s in range(0, 50, 5)], [(s * 20 + 7, s * 20 + 7) for s in range(1, 50, 7)]]
instance = reader.text_to_instance(sentences, None, "nw", "memory-test", clusters)
reader.apply_token_indexers(instance)
vocab = Vocabulary.from_instances([instance])
model = Model.from_params(vocab=vocab, params=Params(config["model"]))
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
batch = Batch([instance]); batch.index_instances(vocab); tensors = batch.as_tensor_dict()
model.train()
start = time.perf_counter()
loss = model(**tensors)["loss"]; loss.backward(); optimizer.step()
train_seconds = time.perf_counter() - start
model.eval()
start = time.perf_counter()
with torch.no_grad():
    output = model.forward_on_instance(instance)
predict_seconds = time.perf_counter() - start
metrics = model.get_metrics(reset=True)
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"peak_mb": peak_mb, "train_seconds": train_seconds, "predict_seconds": predict_seconds,
                  "candidate_spans": metrics["candidate_spans_per_doc"], "kept_spans": metrics["kept_spans_per_doc"],
                  "antecedent_pairs": metrics["antecedent_pairs_per_doc"]}))
"""


@pytest.mark.slow  # about a minute
def test_fifty_sentence_document_trains_and_predicts_within_2_gb():
    env = {**os.environ, "ELMO_TASKS_DATA": "full", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    for name in ("ELMO_OPTIONS", "ELMO_WEIGHTS"):  # the shipped biLM, as the real experiments use
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    numbers = json.loads(result.stdout.strip().splitlines()[-1])
    print(numbers)
    assert numbers["candidate_spans"] == 50 * sum(min(10, 20 - start) for start in range(20))
    assert numbers["kept_spans"] == 400
    assert numbers["antecedent_pairs"] == sum(min(span, 250) for span in range(400))  # K = 250, as the recipe
    assert numbers["peak_mb"] < 2048
