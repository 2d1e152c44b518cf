"""CPU seconds per training document of the coreference model, as ``allennlp train`` runs it.

The model is ``experiments/coref_baseline.jsonnet`` (``--variant elmo``: ``coref_elmo.jsonnet``, by
default with the shipped small biLM) with the real data (``ELMO_TASKS_DATA=full``) and the sizes of
the reproduction's ``mini`` budget (100-unit BiLSTM and scorers; ``--overrides`` changes them),
without word vectors (they change no step's cost). The documents are the first ``--documents`` of
the config's validation file, read by its validation reader (reading is not timed), each a batch
as in training: forward, backward, gradient clipping as the config sets it, an Adam update, in a
fixed order after one warm-up document. With ELMo an untimed pass over all the documents comes
first, so that the timed pass finds the frozen biLM's layer cache warm, as every epoch after a
run's first does; the weights, the optimizer and the random state are then put back as they were
before it (the cache is not part of them and stays), so the timed losses are those of a first pass
and comparable between versions (``--cold`` skips that pass: the first epoch).

``--code-root`` imports ``elmo_tasks`` from another checkout, so two versions of the model are
measured back to back with the same documents and seeds:

    git archive 4dab868 | (mkdir -p /tmp/coref_base && tar -x -C /tmp/coref_base)
    for root in /tmp/coref_base .; do ELMO_TASKS_DATA=full OMP_NUM_THREADS=1 \\
        .venv/bin/python benchmarks/coref_train_speed.py --code-root $root; done

The losses are printed so that two versions are seen to compute the same thing.
"""

import argparse
import copy
import json
import os
import time

from bench_files import ROOT, add_checkout_options, import_checkout, report_steps

MINI_SIZES = {
    "model.antecedent_feedforward.hidden_dims": 100,
    "model.context_layer.hidden_size": 100,
    "model.mention_feedforward.hidden_dims": 100,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_checkout_options(parser)
    parser.add_argument("--variant", choices=("baseline", "elmo"), default="baseline")
    parser.add_argument("--cold", action="store_true", help="elmo: time the first pass (a cold layer cache)")
    parser.add_argument("--documents", type=int, default=8, help="timed documents (after one warm-up)")
    parser.add_argument("--overrides", default=json.dumps(MINI_SIZES), help="config overrides, JSON")
    args = parser.parse_args()
    import_checkout(args.code_root, args.threads, "documents")
    import torch
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    os.chdir(ROOT)  # the config's relative data paths
    config = Params.from_file(f"experiments/coref_{args.variant}.jsonnet", args.overrides).as_dict(quiet=True)
    reader = DatasetReader.from_params(Params(config["validation_dataset_reader"]))
    instances = []
    for instance in reader.read(config["validation_data_path"]):
        instances.append(instance)
        if len(instances) == args.documents + 1:
            break
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(config["model"]))
    model.train()
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trained, lr=1e-3)
    grad_norm = config["trainer"].get("grad_norm")

    def step(instance) -> float:
        batch = Batch([instance])
        batch.index_instances(vocab)
        tensors = batch.as_tensor_dict()
        optimizer.zero_grad()
        loss = model(**tensors)["loss"]
        loss.backward()
        if grad_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
        optimizer.step()
        return float(loss)

    if args.variant == "elmo" and not args.cold:
        initial_weights, initial_random = copy.deepcopy(model.state_dict()), torch.get_rng_state()
        for instance in instances:  # an untimed pass: the biLM's layers of every sentence are cached
            step(instance)
        model.load_state_dict(initial_weights)
        optimizer.state.clear()  # Adam's moments
        torch.set_rng_state(initial_random)
        model.get_metrics(reset=True)
    step(instances[0])  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    losses = [step(instance) for instance in instances[1:]]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    metrics = model.get_metrics(reset=True)
    result = {
        "code_root": args.code_root,
        "variant": args.variant,
        "pass": "first (cold)" if args.variant == "baseline" or args.cold else "second (warm)",
        "threads": args.threads,
        "documents": len(losses),
        "antecedent_pairs_per_doc": round(metrics.get("antecedent_pairs_per_doc", 0.0), 1),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_s_per_document": round(cpu / len(losses), 3),
        "losses": [round(loss, 4) for loss in losses],
    }
    report_steps(args, result, step, instances[1:4])


if __name__ == "__main__":
    main()
