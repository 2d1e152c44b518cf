"""Whole-process ``elmo-tasks elmo-embed`` with its word cache (the default) against ``--word-cache-mb 0``.

The cache keeps each word's token-layer vector the first time the character CNN encodes it
(``elmo_tasks.bilm.seen_words``). Both runs embed the same sentences with the same random weights
(the original hdf5 layout), at the command's defaults otherwise, alternating for ``--rounds`` rounds;
the script prints each size's median seconds, their ratio, and the largest difference between the
two outputs (every layer of every sentence).

    .venv/bin/python benchmarks/word_cache_speed.py --sizes small --sentences 6000 --rounds 2
"""

import argparse
import os
import tempfile
from statistics import median
from typing import Any, Dict

import h5py
import numpy as np
from bench_files import BROWN_NEWS, data_file, report_rows
from bilm_speed import write_random_model
from embed_end_to_end import OUR_COMMANDS, sentences_file, timed


def largest_difference(first: str, second: str) -> float:
    largest = 0.0
    with h5py.File(first, "r") as one, h5py.File(second, "r") as other:
        for name in one:
            if name != "sentence_to_index":
                largest = max(largest, float(np.abs(one[name][()] - other[name][()]).max()))
    return largest


def run_size(size: str, source: str, directory: str, rounds: int) -> Dict[str, Any]:
    model_dir = os.path.join(directory, size)
    os.makedirs(model_dir, exist_ok=True)
    write_random_model(size, model_dir)
    model = ["--options-file", os.path.join(model_dir, "options.json")]
    model += ["--weight-file", os.path.join(model_dir, "weights.hdf5"), "--no-progress"]
    outputs = {label: os.path.join(directory, f"{label}_{size}.hdf5") for label in ("plain", "cached")}
    seconds: Dict[str, list] = {"plain": [], "cached": []}
    for _ in range(rounds):
        for label, extra in (("plain", ["--word-cache-mb", "0"]), ("cached", [])):
            command = [OUR_COMMANDS["elmo-tasks"], "elmo-embed", source, outputs[label], *model, *extra]
            seconds[label].append(timed(command))
            print(f"{size}: {label} {seconds[label][-1]:.1f} s", flush=True)
    plain, cached = median(seconds["plain"]), median(seconds["cached"])
    return {
        "size": size,
        "plain_s": plain,
        "cached_s": cached,
        "ratio": plain / cached,
        "max_abs_diff": largest_difference(outputs["plain"], outputs["cached"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=data_file, default=BROWN_NEWS, help="text, one tokenized sentence per line")
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--sizes", default="small,original")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source = sentences_file(args.data, args.sentences, directory)
        with open(source, encoding="utf-8") as handle:
            tokens = sum(len(line.split()) for line in handle)
        measured = f"{args.sentences} sentences ({tokens} tokens), median of {args.rounds}"
        rows = (run_size(size, source, directory, args.rounds) for size in args.sizes.split(","))
        report_rows(rows, lambda row: _described(measured, row), args.json)


def _described(measured: str, row: Dict[str, Any]) -> str:
    return (
        f"{row['size']:9s} {measured}: --word-cache-mb 0 {row['plain_s']:.1f} s, default {row['cached_s']:.1f} s, "
        f"{row['ratio']:.2f}x (whole process), max abs diff {row['max_abs_diff']:.1e}"
    )


if __name__ == "__main__":
    main()
