"""Whole-process ELMo embedding of a file: ``allennlp elmo-embed`` against AllenNLP's ``Elmo``, both at defaults.

What a user waits for: each command runs in a fresh process from start-up to its output file,
back to back on the same whitespace-tokenized sentences and the same random weights written in
the original hdf5 layout, at the small (2x1024_128, 1 highway) and original
(2x4096_512_2048cnn_2xhighway) sizes.

- ours: ``allennlp elmo-embed IN OUT --options-file .. --weight-file ..`` with no thread setting
  (the thread policy: worker processes of one thread, one per core), storing all layers;
- AllenNLP: a script that builds ``allennlp.modules.elmo.Elmo`` (one output representation, no
  dropout), embeds the file in batches of 64 and writes one hdf5 dataset per sentence, at torch's
  default thread count (no ``OMP_NUM_THREADS``), so it does less writing than ours.

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

from bench_files import ALLENNLP, ROOT, environment_without_thread_settings, report_rows
from bilm_speed import write_random_model  # (the same random biLM as the speed benchmark)

# the real data (docs/DATA.md): ELMO_TASKS_SHARED_DATA, default data/ in the checkout
DEFAULT_DATA = os.path.join(ROOT, os.environ.get("ELMO_TASKS_SHARED_DATA", "data"), "lm/books/brown/brown_news_a-c.txt")

ALLENNLP_SCRIPT = """
import sys, h5py, torch
from allennlp.modules.elmo import Elmo, batch_to_ids
options, weights, source, target = sys.argv[1:5]
elmo = Elmo(options, weights, num_output_representations=1, dropout=0.0).eval()
sentences = [line.split() for line in open(source, encoding="utf-8")]
with h5py.File(target, "w") as out, torch.no_grad():
    for start in range(0, len(sentences), 64):
        batch = sentences[start : start + 64]
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


def run_size(size: str, source: str, directory: str) -> Dict[str, object]:
    model_dir = os.path.join(directory, size)
    os.makedirs(model_dir, exist_ok=True)
    write_random_model(size, model_dir)
    options, weights = os.path.join(model_dir, "options.json"), os.path.join(model_dir, "weights.hdf5")
    ours = timed(
        [ALLENNLP, "elmo-embed", source, os.path.join(directory, f"ours_{size}.hdf5")]
        + ["--options-file", options, "--weight-file", weights, "--no-progress"]
    )
    print(f"{size}: elmo-embed took {ours:.1f} s", flush=True)
    theirs = timed(
        [sys.executable, "-c", ALLENNLP_SCRIPT, options, weights, source, os.path.join(directory, f"an_{size}.hdf5")]
    )
    return {"size": size, "ours_s": ours, "allennlp_s": theirs, "ratio": theirs / ours}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="text, one tokenized sentence per line")
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--sizes", default="small,original")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source = sentences_file(args.data, args.sentences, directory)
        with open(source, encoding="utf-8") as handle:
            tokens = sum(len(line.split()) for line in handle)
        described = partial(_described, f"{args.sentences} sentences ({tokens} tokens)")
        report_rows((run_size(size, source, directory) for size in args.sizes.split(",")), described, args.json)


def _described(measured: str, row: Dict[str, Any]) -> str:
    return (
        f"{row['size']:9s} {measured}: elmo-embed {row['ours_s']:.1f} s, "
        f"AllenNLP's Elmo {row['allennlp_s']:.1f} s, ours is {row['ratio']:.2f}x faster (whole process)"
    )


if __name__ == "__main__":
    main()
