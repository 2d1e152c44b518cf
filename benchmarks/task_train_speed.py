"""Seconds per training batch of a task model, as ``allennlp train`` runs it at the mini budget.

The model is ``experiments/TASK_VARIANT.jsonnet`` on the real data (``ELMO_TASKS_DATA=full``) with
the harness's ``mini`` overrides, without word vectors (they change no step's cost). The batches
are the first ``--batches`` of the config's own training data loader over the first instances of
the training file, with fixed seeds. They are trained on twice and the second pass is timed: a
frozen biLM's layer cache is then warm, as in every epoch after a run's first (``--cold`` times
the first pass instead: the first epoch). Each is a whole training step: forward in
training mode, backward, the config's gradient clipping and optimizer step (the optimizer built
from the config, as the trainer builds it), the model's regularization penalty included. The
losses are printed so that two versions are seen to compute the same thing.

``--code-root`` imports ``elmo_tasks`` from another checkout, so two versions are measured back to
back on the same batches:

    git archive HEAD | (mkdir -p /tmp/before && tar -x -C /tmp/before)
    for root in /tmp/before .; do ELMO_TASKS_DATA=full ELMO_TASKS_SHARED_DATA=/path/to/data \\
        OMP_NUM_THREADS=1 .venv/bin/python benchmarks/task_train_speed.py ner elmo --code-root $root; done

"""

import argparse
import json
import os
import random
import time
from typing import Any, Dict, List

from bench_files import add_checkout_options, append_result, import_checkout, report_steps, training_step

TASKS = ("ner", "snli", "srl", "sst5", "squad", "coref")


def _seed(seed: int) -> None:
    import numpy
    import torch

    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("variant", choices=("baseline", "elmo"))
    add_checkout_options(parser)
    parser.add_argument("--batches", type=int, default=20, help="timed batches")
    parser.add_argument("--cold", action="store_true", help="time the first pass (a cold layer cache)")
    parser.add_argument("--overrides", default="{}", help="config overrides on top of the mini budget's, JSON")
    parser.add_argument(
        "--ner-ab",
        action="store_true",
        help="NER: alternate our shortcuts and AllenNLP's computations (ner_speedups.py)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="--ner-ab's alternations")
    args = parser.parse_args()
    import_checkout(args.code_root, args.threads, "batches")
    from allennlp.common import Params
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    from elmo_tasks.reproduction.task_table import TASKS as SPECS

    os.chdir(os.path.abspath(args.code_root))  # its own experiments, and the relative paths in them
    overrides: Dict[str, Any] = {**SPECS[args.task].budgets["mini"].overrides, **json.loads(args.overrides)}
    config = Params.from_file(f"experiments/{args.task}_{args.variant}.jsonnet", json.dumps(overrides))
    config = config.as_dict(quiet=True)

    _seed(0)
    batch_size = config["data_loader"].get("batch_sampler", {}).get("batch_size") or config["data_loader"].get(
        "batch_size", 1
    )
    reader_params = dict(config["dataset_reader"], max_instances=args.batches * batch_size)
    reader = DatasetReader.from_params(Params(reader_params))
    loader_params = {k: v for k, v in config["data_loader"].items() if k != "batches_per_epoch"}
    loader = DataLoader.from_params(Params(loader_params), reader=reader, data_path=config["train_data_path"])
    vocab = Vocabulary.from_instances(loader.iter_instances())
    loader.index_with(vocab)
    batches = list(loader)[: args.batches]
    model = Model.from_params(vocab=vocab, params=Params(config["model"]))
    model.train()
    parameters = [[name, p] for name, p in model.named_parameters() if p.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=parameters, params=Params(config["trainer"]["optimizer"]))
    grad_norm = config["trainer"].get("grad_norm")

    def step(batch: Dict[str, Any]) -> float:
        return float(training_step(model, optimizer, parameters, grad_norm, batch))

    if args.ner_ab:
        from ner_speedups import compare

        for batch in batches:  # the biLM's layer cache warm, as in every epoch after the first
            step(batch)
        append_result(
            args.json,
            {"task": args.task, "variant": args.variant, **compare(model, optimizer, batches, step, args.rounds)},
        )
        return
    if args.cold:
        step(batches[0])  # one step's one-off costs; the other batches are new to the biLM
        batches = batches[1:]
    else:
        for batch in batches:
            step(batch)
    wall, cpu = time.perf_counter(), time.process_time()
    losses: List[float] = [step(batch) for batch in batches]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = {
        "task": args.task,
        "variant": args.variant,
        "pass": "first (cold)" if args.cold else "second (warm)",
        "code_root": args.code_root,
        "threads": args.threads,
        "batches": len(losses),
        "batch_size": batch_size,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_s_per_batch": round(cpu / len(losses), 4),
        "losses": [round(loss, 5) for loss in losses],
    }
    report_steps(args, result, step, batches[:3])


if __name__ == "__main__":
    main()
