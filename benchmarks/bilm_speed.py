"""Speed of our ELMo against AllenNLP's ``allennlp.modules.elmo.Elmo`` on the same sentences.

Both run on the CPU with ``--threads`` threads (default 1), batch 32, sentences in file order, with the same random
weights written in the original hdf5 layout, at the small (2x1024_128, 1 highway) and original
(2x4096_512_2048cnn_2xhighway) sizes. Each implementation runs in its own subprocess, back to
back, so peak memory (max RSS) is measured separately; both save their outputs and the script
prints tokens/s, the ratio, the max abs difference and the peak RSS.

    .venv/bin/python benchmarks/bilm_speed.py                       # both sizes, 2,000 sentences
    .venv/bin/python benchmarks/bilm_speed.py --sizes small --sentences 500
"""

import argparse
import json
import os
import resource
import tempfile
import time
from typing import Any, Dict, List

import numpy as np
from bench_files import add_worker_options, data_file, json_temp_file, report_rows, run_worker

# the real data (docs/DATA.md): ELMO_TASKS_SHARED_DATA, default data/ in the checkout
DEFAULT_DATA = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    os.environ.get("ELMO_TASKS_SHARED_DATA", "data"),
    "lm/books/brown/brown_news_a-c.txt",
)
# The sizes measured, as BilmOptions fields; the others are BilmOptions' defaults, the published original
# ELMo's (its char CNN filters, two LSTM layers, clips of 3, skip connections).
SIZES: Dict[str, Dict[str, int]] = {
    "small": {"dim": 1024, "projection_dim": 128, "n_highway": 1},
    "original": {"dim": 4096, "projection_dim": 512, "n_highway": 2},
}


def write_random_model(size: str, directory: str) -> None:
    import torch

    from elmo_tasks.bilm import BiLM, BilmOptions, save_weights

    torch.manual_seed(0)
    options = BilmOptions(**SIZES[size])
    model = BiLM(options)
    options.save(os.path.join(directory, "options.json"))
    save_weights(model, os.path.join(directory, "weights.hdf5"))


def read_sentences(path: str, count: int) -> List[List[str]]:
    sentences = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.split():
                sentences.append(line.split())
                if len(sentences) == count:
                    break
    return sentences


def worker(impl: str, directory: str, sentences_path: str, batch_size: int, threads: int, output: str) -> None:
    import torch

    torch.set_num_threads(threads)
    from allennlp.modules.elmo import Elmo, batch_to_ids

    options, weights = os.path.join(directory, "options.json"), os.path.join(directory, "weights.hdf5")
    if impl == "allennlp":
        model = Elmo(options, weights, num_output_representations=1, dropout=0.0)
    else:
        from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder

        model = ElmoTokenEmbedder(options, weights, dropout=0.0, cache_size_mb=0)
    model.eval()
    with open(sentences_path, encoding="utf-8") as handle:
        sentences = json.load(handle)
    outputs = []
    tokens = 0
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(sentences), batch_size):
            batch = sentences[i : i + batch_size]
            ids = batch_to_ids(batch)
            if impl == "allennlp":  # AllenNLP's Elmo is stateful; compare like for like (stateless)
                model._elmo_lstm._elmo_lstm.reset_states()
            mixed = model(ids)["elmo_representations"][0] if impl == "allennlp" else model(ids)
            outputs.extend(mixed[row, : len(s)].numpy() for row, s in enumerate(batch))
            tokens += sum(len(s) for s in batch)
    seconds = time.perf_counter() - start
    np.save(output, np.concatenate(outputs))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"impl": impl, "tokens": tokens, "seconds": seconds, "peak_rss_mb": peak_mb}))


def run_size(size: str, sentences_path: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        write_random_model(size, directory)
        results = {}
        for impl in ("allennlp", "ours"):
            output = os.path.join(directory, f"{impl}.npy")
            results[impl] = run_worker(__file__, impl, directory, sentences_path, args, output)
        difference = float(
            np.abs(
                np.load(os.path.join(directory, "allennlp.npy")) - np.load(os.path.join(directory, "ours.npy"))
            ).max()
        )
    ours, theirs = results["ours"], results["allennlp"]
    row = {
        "size": size,
        "tokens": ours["tokens"],
        "allennlp_tokens_per_s": theirs["tokens"] / theirs["seconds"],
        "ours_tokens_per_s": ours["tokens"] / ours["seconds"],
        "allennlp_seconds": theirs["seconds"],
        "ours_seconds": ours["seconds"],
        "allennlp_peak_rss_mb": theirs["peak_rss_mb"],
        "ours_peak_rss_mb": ours["peak_rss_mb"],
        "max_abs_diff": difference,
    }
    row["speedup"] = row["ours_tokens_per_s"] / row["allennlp_tokens_per_s"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data", type=data_file, default=DEFAULT_DATA, help="text file, one tokenized sentence per line"
    )
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--sizes", default="small,original")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of each implementation (default 1: "
        "more threads than free cores makes both several times slower, see docs/BENCHMARKS.md)",
    )
    parser.add_argument("--json", help="also write the results here")
    add_worker_options(parser, ["allennlp", "ours"])
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model_dir, args.sentences_file, args.batch_size, args.threads, args.output)
        return
    sentences = read_sentences(args.data, args.sentences)
    with json_temp_file(sentences) as payload_file:
        sizes = args.sizes.split(",")
        report_rows((run_size(size, payload_file, args) for size in sizes), _described, args.json)


def _described(row: Dict[str, Any]) -> str:
    return (
        f"{row['size']:9s} tokens={row['tokens']}  allennlp {row['allennlp_tokens_per_s']:8.1f} tok/s "
        f"({row['allennlp_seconds']:.1f} s, peak {row['allennlp_peak_rss_mb']:.0f} MB)  ours "
        f"{row['ours_tokens_per_s']:8.1f} tok/s "
        f"({row['ours_seconds']:.1f} s, peak {row['ours_peak_rss_mb']:.0f} MB)  speedup {row['speedup']:.2f}x  "
        f"max|diff| {row['max_abs_diff']:.2e}"
    )


if __name__ == "__main__":
    main()
