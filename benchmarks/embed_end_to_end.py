"""Whole-process ELMo embedding of a file: ``elmo-tasks elmo-embed`` against AllenNLP's ``Elmo``, both at defaults.

What a user waits for: each command runs in a fresh process from start-up to its output file,
back to back on the same whitespace-tokenized sentences and the same random weights written in
the original hdf5 layout, at the small (2x1024_128, 1 highway) and original
(2x4096_512_2048cnn_2xhighway) sizes.

- ours: ``elmo-tasks elmo-embed IN OUT --options-file .. --weight-file ..`` with no thread setting
  (the thread policy: worker processes of one thread, one per core), storing all layers; it starts
  without importing AllenNLP (``--ours allennlp`` times ``allennlp elmo-embed``, which does);
- AllenNLP: a script that builds ``allennlp.modules.elmo.Elmo`` (one output representation, no
  dropout), embeds the file in batches of 64 and writes one hdf5 dataset per sentence, at torch's
  default thread count (no ``OMP_NUM_THREADS``), so it does less writing than ours. AllenNLP's ``Elmo``
  is stateful: each batch starts from the LSTM states the previous batch left. ``--allennlp-states
  reset`` (the default) resets them before every batch, so that both sides are stateless and their
  outputs comparable (AllenNLP also runs faster so); ``carried`` leaves its default behaviour.

The outputs are compared after both runs: the average of our three layers against AllenNLP's mix
(its scalar mix starts as that average), the largest absolute difference over every sentence. With
``carried`` states the sentences after the first batch differ by design, so no difference is reported.

    .venv/bin/python benchmarks/embed_end_to_end.py --sizes small --sentences 6000
    .venv/bin/python benchmarks/embed_end_to_end.py --sizes original --sentences 1500
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from typing import Any, Dict, List

import h5py
import numpy as np
from bench_files import ALLENNLP, BROWN_NEWS, ROOT, data_file, environment_without_thread_settings, report_rows
from bilm_speed import write_random_model  # (the same random biLM as the speed benchmark)

ALLENNLP_SCRIPT = """
import sys, h5py, torch
from allennlp.modules.elmo import Elmo, batch_to_ids
options, weights, source, target, states = sys.argv[1:6]
elmo = Elmo(options, weights, num_output_representations=1, dropout=0.0).eval()
sentences = [line.split() for line in open(source, encoding="utf-8")]
with h5py.File(target, "w") as out, torch.no_grad():
    for start in range(0, len(sentences), 64):
        batch = sentences[start : start + 64]
        if states == "reset":
            elmo._elmo_lstm._elmo_lstm.reset_states()
        mixed = elmo(batch_to_ids(batch))["elmo_representations"][0]
        for row, words in enumerate(batch):
            out.create_dataset(str(start + row), data=mixed[row, : len(words)].numpy())
"""


def sentences_file(path: str, count: int, directory: str) -> str:
    kept: List[str] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.split():
                kept.append(" ".join(line.split()))
                if len(kept) == count:
                    break
    target = os.path.join(directory, "sentences.txt")
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(kept) + "\n")
    return target


def timed(command: List[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=environment_without_thread_settings(), check=True, capture_output=True)
    return time.perf_counter() - start


OUR_COMMANDS = {"elmo-tasks": os.path.join(os.path.dirname(sys.executable), "elmo-tasks"), "allennlp": ALLENNLP}


def largest_difference(ours_path: str, theirs_path: str, sentences: int) -> float:
    """The largest absolute difference between our layer average and AllenNLP's mix, over every sentence."""
    largest = 0.0
    with h5py.File(ours_path, "r") as ours, h5py.File(theirs_path, "r") as theirs:
        for index in range(sentences):
            average = ours[str(index)][()].mean(axis=0)  # (layers, tokens, dim): elmo-embed stores all layers
            largest = max(largest, float(np.abs(average - theirs[str(index)][()]).max()))
    return largest


def run_size(
    size: str, source: str, directory: str, our_command: str, sentences: int, states: str
) -> Dict[str, object]:
    model_dir = os.path.join(directory, size)
    os.makedirs(model_dir, exist_ok=True)
    write_random_model(size, model_dir)
    options, weights = os.path.join(model_dir, "options.json"), os.path.join(model_dir, "weights.hdf5")
    ours_path, theirs_path = os.path.join(directory, f"ours_{size}.hdf5"), os.path.join(directory, f"an_{size}.hdf5")
    ours = timed(
        [OUR_COMMANDS[our_command], "elmo-embed", source, ours_path]
        + ["--options-file", options, "--weight-file", weights, "--no-progress"]
    )
    print(f"{size}: {our_command} elmo-embed took {ours:.1f} s", flush=True)
    theirs = timed([sys.executable, "-c", ALLENNLP_SCRIPT, options, weights, source, theirs_path, states])
    difference = largest_difference(ours_path, theirs_path, sentences) if states == "reset" else None
    return {
        "size": size,
        "ours_command": f"{our_command} elmo-embed",
        "ours_s": ours,
        "allennlp_s": theirs,
        "ratio": theirs / ours,
        "allennlp_states": states,
        "max_abs_diff": difference,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=data_file, default=BROWN_NEWS, help="text, one tokenized sentence per line")
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--sizes", default="small,original")
    parser.add_argument("--ours", choices=sorted(OUR_COMMANDS), default="elmo-tasks", help="our command's front")
    parser.add_argument("--allennlp-states", choices=["reset", "carried"], default="reset", help="see above")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source = sentences_file(args.data, args.sentences, directory)
        with open(source, encoding="utf-8") as handle:
            lengths = [len(line.split()) for line in handle]
        described = partial(_described, f"{len(lengths)} sentences ({sum(lengths)} tokens)")
        rows = (
            run_size(size, source, directory, args.ours, len(lengths), args.allennlp_states)
            for size in args.sizes.split(",")
        )
        report_rows(rows, described, args.json)


def _described(measured: str, row: Dict[str, Any]) -> str:
    return (
        f"{row['size']:9s} {measured}: {row['ours_command']} {row['ours_s']:.1f} s, "
        f"AllenNLP's Elmo ({row['allennlp_states']} states) {row['allennlp_s']:.1f} s, ours is {row['ratio']:.2f}x "
        f"faster (whole process), max abs diff "
        + ("not compared" if row["max_abs_diff"] is None else f"{row['max_abs_diff']:.1e}")
    )


if __name__ == "__main__":
    main()
