"""How torch's thread count changes ELMo embedding speed, with and without a competing CPU job.

Embeds the same sentences with the shipped small biLM (what ``elmo-embed`` does, minus the file
writing) at each ``--threads`` setting, alone and while ``--competitors`` busy-looping processes
run, in alternating order, and prints tokens/s (median of ``--repeats`` passes):

    PYTHONPATH=$PWD python benchmarks/embed_threads.py --threads 1,2 --sentences 200
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator, List

import torch

from elmo_tasks.bilm import load_bilm
from elmo_tasks.bilm.file_embedder import embed_sentences
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

DEFAULT_DATA = os.path.join(os.path.dirname(__file__), "..", "fixtures", "lm", "train.txt")


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes that spin on one core each: another user's CPU job."""
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for process in processes:
            process.kill()
            process.wait()


def tokens_per_second(model, sentences: List[List[str]], batch_size: int) -> float:
    start = time.perf_counter()
    for begin in range(0, len(sentences), batch_size):
        embed_sentences(model, sentences[begin : begin + batch_size], torch.device("cpu"))
    return sum(len(s) for s in sentences) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="text, one sentence per line")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--threads",
        default=f"1,{os.cpu_count()}",
        help="comma-separated thread counts to compare (default: 1 and torch's default, one per core)",
    )
    parser.add_argument("--competitors", type=int, default=1, help="busy-looping processes in the loaded runs")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with open(args.data, encoding="utf-8") as handle:
        sentences = [line.split() for line in handle if line.split()][: args.sentences]
    model = load_bilm(SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE).eval()
    thread_counts = [int(t) for t in args.threads.split(",")]
    tokens_per_second(model, sentences[:32], args.batch_size)  # warm up
    print(
        f"{len(sentences)} sentences, {sum(len(s) for s in sentences)} tokens, batch {args.batch_size}, "
        f"{os.cpu_count()} cores, load average before: {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for competitors in (0, args.competitors):
        results = {threads: [] for threads in thread_counts}
        with busy_processes(competitors):
            for repeat in range(args.repeats):
                order = thread_counts if repeat % 2 == 0 else thread_counts[::-1]
                for threads in order:
                    torch.set_num_threads(threads)
                    results[threads].append(tokens_per_second(model, sentences, args.batch_size))
                    print(
                        f"  competitors {competitors} threads {threads}: {results[threads][-1]:.0f} tokens/s",
                        flush=True,
                    )
        for threads, speeds in results.items():
            print(
                f"competing busy processes {competitors}  threads {threads}: {statistics.median(speeds):8.0f} tokens/s "
                f"(runs {', '.join(f'{s:.0f}' for s in speeds)})",
                flush=True,
            )


if __name__ == "__main__":
    main()
