"""Speed of ``allennlp bilm-perplexity`` on the shipped small biLM and its 50,003-row softmax.

Scores the first ``--lines`` lines of a text (default: the held-out Reuters test file) once per
``--threads`` value, each in its own process with ``OMP_NUM_THREADS`` and ``--threads`` set, and
prints the command's own summary (scoring time and CPU time, tokens/s, start-up excluded) and
the wall time of the whole command. Run it on an otherwise idle machine: wall-clock tokens/s on
a shared machine say little (the CPU seconds still do).

    .venv/bin/python benchmarks/bilm_perplexity_speed.py --threads 1 2 --lines 1000
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the real data (docs/DATA.md): ELMO_TASKS_SHARED_DATA, default data/ in the checkout
DEFAULT_TEXT = os.path.join(ROOT, os.environ.get("ELMO_TASKS_SHARED_DATA", "data"), "lm/news/test_00.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=DEFAULT_TEXT, help="raw text (default: the held-out Reuters test file)")
    parser.add_argument("--lines", type=int, default=1000, help="score the first N lines (default 1000)")
    parser.add_argument("--threads", type=int, nargs="+", default=[2], help="one run per value (default 2)")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "text.txt")
        with open(args.text, encoding="utf-8", errors="replace") as source, open(text, "w", encoding="utf-8") as out:
            for number, line in enumerate(source):
                if number == args.lines:
                    break
                out.write(line)
        for threads in args.threads:
            command = [
                os.path.join(os.path.dirname(sys.executable), "allennlp"),
                "bilm-perplexity",
                text,
                "--threads",
                str(threads),
                "--batch-size",
                str(args.batch_size),
                "--no-progress",
            ]
            started = time.perf_counter()
            env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(done.stderr[-3000:])
            summary = [line for line in done.stderr.split("\n") if line.startswith("bilm-perplexity:")]
            print(f"--threads {threads}:")
            print("\n".join(summary))
            print(done.stdout.strip().split("\n")[-1])
            print(f"wall time of the whole command (start-up and tokenization included): {wall:.1f} s")


if __name__ == "__main__":
    main()
