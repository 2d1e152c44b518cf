"""Tokens/s of one full training step of the small biLM, as ``allennlp train`` runs it.

The step is the one of ``experiments/bilm_small.jsonnet``: the ``bilm_language_model`` with the
shipped size (char CNN with 1024 filters, 1 highway, 2x1024_128 LSTMs in both directions), a
softmax of 50,003 rows with 8,192 log-uniform samples, dropout 0.1, forward + backward, gradient
norm clipped at 10 and an Adam update. The batches are fixed: real sentences tokenized by the
``bilm_raw_text`` reader as in training, grouped by length like the bucket sampler, and tensorised
by AllenNLP exactly as the data loader does (reading is not timed: in training it overlaps with
nothing, and it is the same for every variant). Tokens/s counts words (boundaries excluded).

``--code-root`` imports ``elmo_tasks`` from another checkout, so today's recipe and a changed
one can be measured back to back with the same script and batches:

    git archive 8fea2bf | (mkdir -p /tmp/bilm_base && tar -x -C /tmp/bilm_base)
    for root in /tmp/bilm_base .; do OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bilm_train_speed.py \\
        --code-root $root --steps 6; done
"""

import argparse
import json
import os
import time

from bench_files import (
    append_result,
    check_imported_from,
    print_profile,
    run_on_checkout,
    start_like_a_command,
    word_batches,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the real data (docs/DATA.md): ELMO_TASKS_SHARED_DATA, default data/ in the checkout
DEFAULT_TEXT = os.path.join(ROOT, os.environ.get("ELMO_TASKS_SHARED_DATA", "data"), "lm/news/training_00.txt")
SHIPPED_OPTIONS = os.path.join(ROOT, "elmo_tasks", "pretrained", "bilm_small", "options.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code-root", default=ROOT, help="the checkout whose elmo_tasks is measured")
    parser.add_argument("--text", default=DEFAULT_TEXT, help="raw running text (default: Reuters news)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=6, help="timed steps (after one warm-up step)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--num-samples", type=int, default=8192)
    parser.add_argument("--vocab-size", type=int, default=50000)
    parser.add_argument(
        "--autocast",
        choices=["none", "bfloat16"],
        default="none",
        help="run forward under torch.autocast('cpu', dtype) (float32 master weights and Adam state)",
    )
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's top operators")
    parser.add_argument("--json", help="append the result as one json line to this file")
    args = parser.parse_args()

    run_on_checkout(args.code_root)
    import torch

    torch.set_num_threads(args.threads)
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    import elmo_tasks.plugin  # noqa: F401  (registers the reader and the model of this checkout)

    start_like_a_command()
    check_imported_from(args.code_root)
    reader = DatasetReader.by_name("bilm_raw_text")(
        text_format="running",
        max_sentence_length=50,
        drop_wikiextractor_markup=True,
        unescape_html=True,
        fallback_encoding="cp1252",
    )
    needed = args.batch_size * (args.steps + 1)
    instances = []
    for instance in reader.read(args.text):
        instances.append(instance)
        if len(instances) == needed:
            break
    vocab = Vocabulary.from_instances(instances)
    fillers = max(0, args.vocab_size + 2 - vocab.get_vocab_size("lm_targets"))
    vocab.add_tokens_to_namespace([f"filler{i}" for i in range(fillers)], "lm_targets")
    # the bucket sampler groups sentences of similar length: sort, then cut into batches
    instances.sort(key=lambda inst: len(inst["tokens"].tokens))
    batches = word_batches(reader, instances, vocab, args.batch_size)
    order = list(range(len(batches)))
    torch.manual_seed(0)
    order = [order[i] for i in torch.randperm(len(order)).tolist()]  # mixed lengths, as training sees them

    with open(SHIPPED_OPTIONS, encoding="utf-8") as handle:
        options = json.load(handle)
    model = Model.by_name("bilm_language_model")(vocab, options=options, dropout=0.1, num_samples=args.num_samples)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

    def step(tensors) -> float:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast == "bfloat16"):
            loss = model(**tensors)["loss"]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimizer.step()
        return float(loss)

    step(batches[order[0]][0])  # warm-up
    words = 0
    wall, cpu = time.perf_counter(), time.process_time()
    losses = []
    for index in order[1:]:
        tensors, count = batches[index]
        losses.append(step(tensors))
        words += count
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = {
        "code_root": args.code_root,
        "batch_size": args.batch_size,
        "threads": args.threads,
        "autocast": args.autocast,
        "steps": len(order) - 1,
        "words": words,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "words_per_s": round(words / wall, 1),
        "words_per_cpu_s": round(words / cpu, 1),
        "mean_loss": round(sum(losses) / len(losses), 4),
    }
    append_result(args.json, result)
    if args.profile:

        def two_steps() -> None:
            for index in order[1:3]:
                step(batches[index][0])

        print_profile(two_steps)


if __name__ == "__main__":
    main()
