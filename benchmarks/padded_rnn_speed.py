"""CPU seconds of a training step with AllenNLP's packed ``lstm``/``gru`` encoders against ours
``padded_lstm``/``padded_gru`` (elmo_tasks/modules/padded_rnn.py), back to back in one process.

Two measurements:

- ``encoders``: one bidirectional encoder (400 inputs, 100 units per direction, batches of 32
  sequences whose lengths are drawn between half the maximum and the maximum), forward and backward
  over the sum of its outputs, for several maximum lengths;
- ``squad``: the SQuAD experiment's training step (``experiments/squad_baseline.jsonnet`` with the
  real data, ``ELMO_TASKS_DATA=full``, passages capped at 400 tokens as in training, batches of 32
  questions of similar passage lengths, Adadelta), its four GRUs ``gru`` against ``padded_gru``,
  the same batches and the same seed; the losses of the two are printed side by side (they agree
  to float rounding).

    ELMO_TASKS_DATA=full OMP_NUM_THREADS=1 .venv/bin/python benchmarks/padded_rnn_speed.py
"""

import argparse
import json
import os
import sys
import time
from typing import Dict, List

import torch
from bench_files import ROOT, append_result, start_like_a_command

SQUAD_ENCODERS = ("phrase_layer", "residual_encoder", "span_start_encoder", "span_end_encoder")


def time_encoders(max_lengths: List[int], repeats: int) -> None:
    from allennlp.common import Params
    from allennlp.modules.seq2seq_encoders import Seq2SeqEncoder

    import elmo_tasks.plugin  # noqa: F401  (registers padded_lstm and padded_gru)

    start_like_a_command()

    for rnn in ("lstm", "gru"):
        for max_length in max_lengths:
            generator = torch.Generator().manual_seed(0)
            lengths = torch.randint(max_length // 2, max_length + 1, (32,), generator=generator)
            lengths[0] = max_length
            mask = torch.arange(max_length).unsqueeze(0) < lengths.unsqueeze(1)
            inputs = torch.randn(32, max_length, 400, generator=generator, requires_grad=True)
            seconds: Dict[str, float] = {}
            for kind in (rnn, f"padded_{rnn}"):
                torch.manual_seed(0)
                encoder = Seq2SeqEncoder.from_params(
                    Params({"type": kind, "input_size": 400, "hidden_size": 100, "bidirectional": True})
                )
                encoder(inputs, mask).sum().backward()  # warm-up
                start = time.process_time()
                for _ in range(repeats):
                    encoder(inputs, mask).sum().backward()
                seconds[kind] = (time.process_time() - start) / repeats
            append_result(
                None,
                {
                    "measure": "encoders",
                    "rnn": rnn,
                    "max_length": max_length,
                    "packed_cpu_s": round(seconds[rnn], 4),
                    "padded_cpu_s": round(seconds[f"padded_{rnn}"], 4),
                    "speedup": round(seconds[rnn] / seconds[f"padded_{rnn}"], 2),
                },
            )


def time_squad(batches: int) -> None:
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import elmo_tasks.plugin  # noqa: F401  (registers the reader and the model)

    start_like_a_command()

    os.chdir(ROOT)  # the config's relative data paths
    results: Dict[str, Dict[str, object]] = {}
    for kind in ("gru", "padded_gru"):
        overrides = json.dumps({f"model.{name}.type": kind for name in SQUAD_ENCODERS})
        config = Params.from_file("experiments/squad_baseline.jsonnet", overrides).as_dict(quiet=True)
        reader = DatasetReader.from_params(Params(config["dataset_reader"]))
        # batches of similar passage lengths, as the bucketing loader of training makes them
        instances = sorted(reader.read(config["validation_data_path"]), key=lambda x: len(x["passage"]))
        vocab = Vocabulary.from_instances(instances)
        torch.manual_seed(0)
        model = Model.from_params(vocab=vocab, params=Params(config["model"]))
        model.train()
        optimizer = torch.optim.Adadelta([p for p in model.parameters() if p.requires_grad], lr=1.0, rho=0.95)
        tensor_batches = []
        every = max(1, len(instances) // 32 // (batches + 1))
        for first in range(0, 32 * every * (batches + 1), 32 * every):
            batch = Batch(instances[first : first + 32])
            batch.index_instances(vocab)
            tensor_batches.append(batch.as_tensor_dict())

        def step(tensors, model=model, optimizer=optimizer) -> float:  # this configuration's, bound here
            optimizer.zero_grad()
            loss = model(**tensors)["loss"]
            loss.backward()
            optimizer.step()
            return float(loss)

        torch.manual_seed(1)
        step(tensor_batches[0])  # warm-up
        start = time.process_time()
        losses = [step(tensors) for tensors in tensor_batches[1:]]
        cpu = time.process_time() - start
        results[kind] = {"cpu_s_per_batch": round(cpu / len(losses), 3), "losses": [round(x, 4) for x in losses]}
    append_result(
        None,
        {
            "measure": "squad",
            "batches": batches,
            "gru": results["gru"],
            "padded_gru": results["padded_gru"],
            "speedup": round(results["gru"]["cpu_s_per_batch"] / results["padded_gru"]["cpu_s_per_batch"], 2),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-lengths", type=int, nargs="+", default=[25, 60, 150, 300])
    parser.add_argument("--repeats", type=int, default=3, help="timed steps per encoder and length")
    parser.add_argument("--squad-batches", type=int, default=4, help="timed SQuAD batches (0: skip)")
    args = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    time_encoders(args.max_lengths, args.repeats)
    if args.squad_batches:
        if os.environ.get("ELMO_TASKS_DATA") != "full":
            sys.exit("set ELMO_TASKS_DATA=full (and ELMO_TASKS_SHARED_DATA) for the SQuAD step, or --squad-batches 0")
        os.environ["ELMO_TASKS_WORD_VECTORS"] = ""  # fixed word vectors change no step's cost
        time_squad(args.squad_batches)


if __name__ == "__main__":
    main()
