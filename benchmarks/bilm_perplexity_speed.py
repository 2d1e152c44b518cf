"""Speed of ``allennlp bilm-perplexity`` with a biLM of the shipped size and a 50k-word softmax.

The shipped biLM (2x1024_128 LSTMs, 1024 char filters) has no softmax yet, so this script writes a
folder with the shipped options.json and weights.hdf5, a random float16 softmax of
``--vocab-size`` words plus the padding, unknown and boundary rows (50,003 rows by default, as the
training recipe's vocabulary), and a vocabulary whose first words are the most frequent
whitespace tokens of the text. Speed does not depend on the softmax values; it then runs the
command in a subprocess with ``OMP_NUM_THREADS`` and ``--threads`` set and prints its summary.

    .venv/bin/python benchmarks/bilm_perplexity_speed.py --threads 2
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TEXT = os.path.join(ROOT, "..", "shared", "data", "lm", "news", "test_00.txt")


def write_model(directory: str, text_path: str, vocab_size: int) -> None:
    shipped = os.path.join(ROOT, "elmo_tasks", "pretrained", "bilm_small")
    for name in ("options.json", "weights.hdf5"):
        shutil.copy(os.path.join(shipped, name), os.path.join(directory, name))
    counts: collections.Counter = collections.Counter()
    with open(text_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            counts.update(line.split())
    words = [w for w, _ in counts.most_common(vocab_size) if w not in ("<S>", "</S>", "@@UNKNOWN@@")]
    words += [f"filler{i}" for i in range(vocab_size - len(words))]
    rows = ["@@PADDING@@", "@@UNKNOWN@@", "<S>", "</S>"] + words
    os.makedirs(os.path.join(directory, "vocabulary"))
    with open(os.path.join(directory, "vocabulary", "lm_targets.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(rows[1:]) + "\n")
    with open(os.path.join(directory, "vocabulary", "non_padded_namespaces.txt"), "w", encoding="utf-8") as out:
        out.write("*tags\n*labels\n")
    rng = np.random.default_rng(0)
    np.savez(
        os.path.join(directory, "softmax.npz"),
        weight=(rng.standard_normal((len(rows), 128)) / np.sqrt(128)).astype(np.float16),
        bias=np.zeros(len(rows), dtype=np.float16),
        tokens=np.array(rows),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=DEFAULT_TEXT, help="raw text (default: the held-out Reuters test file)")
    parser.add_argument("--lines", type=int, default=300, help="score the first N lines (default 300)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--vocab-size", type=int, default=50000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "text.txt")
        with open(args.text, encoding="utf-8", errors="replace") as source, open(text, "w", encoding="utf-8") as out:
            for number, line in enumerate(source):
                if number == args.lines:
                    break
                out.write(line)
        model = os.path.join(tmp, "model")
        os.makedirs(model)
        write_model(model, args.text, args.vocab_size)
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
        command = [
            os.path.join(os.path.dirname(sys.executable), "allennlp"),
            "bilm-perplexity",
            text,
            "--options-file",
            os.path.join(model, "options.json"),
            "--weight-file",
            os.path.join(model, "weights.hdf5"),
            "--threads",
            str(args.threads),
            "--batch-size",
            str(args.batch_size),
            "--no-progress",
        ]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(done.stderr[-3000:])
        summary = [line for line in done.stderr.split("\n") if line.startswith("bilm-perplexity:")]
        print("\n".join(summary))
        print(done.stdout.strip().split("\n")[-1])
        print(f"wall time of the whole command (start-up and tokenization included): {wall:.1f} s")


if __name__ == "__main__":
    main()
