"""ELMo speed with the token-layer cache (``vocab_to_cache``): ours against AllenNLP's ``Elmo``.

The vocabulary is every word of the first half of the sentences (the "training half"); speed is
measured on the second half, so some words are unknown, as in real use. Same random weights
(original hdf5 layout, written by bilm_speed.py's ``write_random_model``), batches of 32 in file
order, each run in its own subprocess. AllenNLP's ``Elmo`` is stateful: its states are reset
before each batch, so every run computes the same stateless vectors.

Runs (each compared with AllenNLP without a cache, the reference):
- ``allennlp``: AllenNLP's ``Elmo``, no cache;
- ``allennlp_cache_exact``: its ``vocab_to_cache`` with word ids; an unknown word gets an
  out-of-range id, which makes AllenNLP fall back to the character CNN for that whole batch (its
  own fallback), so the outputs stay exact;
- ``allennlp_cache_unk``: the same, but unknown words get the OOV id 1, as a vocabulary indexer
  gives them: fast, but those words get the vector of the cached entry at index 1, not their own;
- ``ours`` and ``ours_cache``: ``fast_elmo`` without and with ``vocab_to_cache`` (unknown words take
  the character path; the per-sentence layer cache is off so every sentence runs the biLM).

    .venv/bin/python benchmarks/vocab_cache_speed.py --sentences 2000 --sizes small
"""

import argparse
import json
import os
import tempfile
import time
from typing import Dict, List

import numpy as np
from bench_files import add_worker_options, data_file, json_temp_file, report_rows, run_worker  # noqa: E402
from bilm_speed import DEFAULT_DATA, read_sentences, write_random_model

RUNS = ["allennlp", "allennlp_cache_exact", "allennlp_cache_unk", "ours", "ours_cache"]
PADDING, UNKNOWN = "@@PADDING@@", "@@UNKNOWN@@"


#: How each measured row is printed.
ROW_LINE = (
    "{size:9s} {run:22s} {tokens_per_s:8.1f} tok/s ({seconds:.1f} s)  "
    "max|diff| vs AllenNLP {max_abs_diff_vs_allennlp:.2e}"
)


def vocabulary(sentences: List[List[str]]) -> List[str]:
    """The cached words as a Vocabulary namespace lists them: padding, OOV, then words in order."""
    return [PADDING, UNKNOWN] + list(dict.fromkeys(w for s in sentences for w in s))


def worker(run: str, directory: str, data_path: str, batch_size: int, threads: int, output: str) -> None:
    import torch

    torch.set_num_threads(threads)
    from allennlp.modules.elmo import Elmo, batch_to_ids

    with open(data_path, encoding="utf-8") as handle:
        data = json.load(handle)
    words, sentences = data["vocabulary"], data["measured"]
    options, weights = os.path.join(directory, "options.json"), os.path.join(directory, "weights.hdf5")
    cached = run.endswith("cache") or "_cache_" in run
    if run.startswith("allennlp"):
        model = Elmo(options, weights, 1, dropout=0.0, vocab_to_cache=words if cached else None)
    else:
        from elmo_tasks.modules import ElmoTokenEmbedder

        model = ElmoTokenEmbedder(
            options, weights, dropout=0.0, cache_size_mb=0, vocab_to_cache=words if cached else None
        )
    model.eval()
    index = {w: i for i, w in enumerate(words)}
    unknown_id = 1 if run == "allennlp_cache_unk" else len(words)  # out of range: AllenNLP's fallback
    outputs, tokens = [], 0
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(sentences), batch_size):
            batch = sentences[i : i + batch_size]
            ids = batch_to_ids(batch)
            if run.startswith("allennlp"):
                model._elmo_lstm._elmo_lstm.reset_states()
                word_ids = None
                if cached:
                    word_ids = torch.zeros(ids.shape[:2], dtype=torch.long)
                    for row, sentence in enumerate(batch):
                        word_ids[row, : len(sentence)] = torch.tensor([index.get(w, unknown_id) for w in sentence])
                mixed = model(ids, word_ids)["elmo_representations"][0]
            else:
                mixed = model(ids)
            outputs.extend(mixed[row, : len(s)].numpy() for row, s in enumerate(batch))
            tokens += sum(len(s) for s in batch)
    seconds = time.perf_counter() - start
    np.save(output, np.concatenate(outputs))
    print(json.dumps({"run": run, "tokens": tokens, "seconds": seconds}))


def run_size(size: str, data_path: str, args: argparse.Namespace) -> List[Dict]:
    with tempfile.TemporaryDirectory() as directory:
        write_random_model(size, directory)
        results = {}
        for run in RUNS:
            output = os.path.join(directory, f"{run}.npy")
            results[run] = run_worker(__file__, run, directory, data_path, args, output)
            results[run]["output"] = np.load(output)
    reference = results["allennlp"]
    rows = []
    for run in RUNS:
        result = results[run]
        rows.append(
            {
                "size": size,
                "run": run,
                "tokens": result["tokens"],
                "seconds": result["seconds"],
                "tokens_per_s": result["tokens"] / result["seconds"],
                "max_abs_diff_vs_allennlp": float(np.abs(result["output"] - reference["output"]).max()),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data", type=data_file, default=DEFAULT_DATA, help="text file, one tokenized sentence per line"
    )
    parser.add_argument("--sentences", type=int, default=2000, help="first half: vocabulary, second half: measured")
    parser.add_argument("--sizes", default="small")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="also write the rows here")
    add_worker_options(parser, RUNS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model_dir, args.sentences_file, args.batch_size, args.threads, args.output)
        return
    sentences = read_sentences(args.data, args.sentences)
    half = len(sentences) // 2
    words = vocabulary(sentences[:half])
    measured = sentences[half:]
    known = set(words)
    unknown = sum(w not in known for s in measured for w in s)
    print(
        f"vocabulary: {len(words) - 2} words from {half} sentences; measured: {len(measured)} sentences, "
        f"{sum(map(len, measured))} tokens, {unknown} of them unknown",
        flush=True,
    )
    with json_temp_file({"vocabulary": words, "measured": measured}) as payload_file:
        rows = (row for size in args.sizes.split(",") for row in run_size(size, payload_file, args))
        report_rows(rows, ROW_LINE.format_map, args.json)


if __name__ == "__main__":
    main()
