"""``elmo-embed`` and ``bilm-perplexity`` with freed memory kept for the next batch against glibc's default.

Each command runs as a user runs it (``elmo-tasks CMD``, whole process, its default workers and threads,
the shipped small biLM) on the first ``--sentences`` sentences of a whitespace-tokenized file, with
``ELMO_TASKS_FREED_MEMORY=return`` (glibc's default) and ``keep`` (the commands' default) alternated
``--rounds`` times. It prints, per run, wall seconds, CPU seconds and page faults (minor) of the
command and its workers, and the peak memory of the largest of them; then whether the outputs were the
same (``elmo-embed``'s hdf5 datasets, ``bilm-perplexity``'s result line).

    .venv/bin/python benchmarks/freed_memory.py --sentences 1500 --rounds 3
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import h5py
import numpy as np
from bench_files import add_alternation_options, environment_without_thread_settings

ELMO_TASKS = os.path.join(os.path.dirname(sys.executable), "elmo-tasks")
SETTINGS = ("return", "keep")
# runs the command and prints, last, the peak resident memory (KB) of the largest of its processes
PEAK_WRAPPER = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
    "print('peak', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)"
)


def timed_run(command: List[str], setting: str) -> Tuple[Dict[str, float], str]:
    """Wall and CPU seconds, minor page faults and peak memory (MB) of ``command`` and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK_WRAPPER, *command],
        capture_output=True,
        text=True,
        env={**environment_without_thread_settings(), "ELMO_TASKS_FREED_MEMORY": setting},
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    figures = {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "system": after.ru_stime - before.ru_stime,
        "faults": after.ru_minflt - before.ru_minflt,
        "peak_mb": float(done.stderr.strip().splitlines()[-1].split()[-1]) / 1024,
    }
    return figures, done.stdout + "\n".join(done.stderr.strip().splitlines()[:-1])


def embedded(path: str) -> Dict[str, np.ndarray]:
    with h5py.File(path, "r") as datasets:
        return {name: datasets[name][...] for name in datasets if name != "sentence_to_index"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_alternation_options(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "sentences.txt")
        with open(args.data, encoding="utf-8") as lines, open(source, "w", encoding="utf-8") as kept:
            sentences = [line for line in lines if line.strip()][: args.sentences]
            kept.writelines(sentences)
        print(f"{len(sentences)} sentences of {args.data}")
        outputs: Dict[Tuple[str, str], object] = {}
        for round_ in range(1, args.rounds + 1):
            for setting in SETTINGS:
                target = os.path.join(directory, f"{setting}.hdf5")
                commands = {
                    "elmo-embed": [ELMO_TASKS, "elmo-embed", source, target, "--no-progress"],
                    "bilm-perplexity": [
                        ELMO_TASKS,
                        "bilm-perplexity",
                        source,
                        "--whitespace-tokenized",
                        "--no-progress",
                    ],
                }
                for name, command in commands.items():
                    figures, printed = timed_run(command, setting)
                    print(
                        f"round {round_} {name:15} {setting:6}: {figures['wall']:6.1f} s wall, "
                        f"{figures['cpu']:6.1f} CPU s ({figures['system']:.1f} system), "
                        f"{figures['faults']:>9,.0f} page faults, peak {figures['peak_mb']:,.0f} MB"
                    )
                    if name == "elmo-embed":
                        result: object = embedded(target)
                    else:
                        result = next(line for line in printed.splitlines() if "perplexity forward" in line)
                    outputs.setdefault((name, setting), result)
        for name in ("elmo-embed", "bilm-perplexity"):
            first, second = (outputs[(name, setting)] for setting in SETTINGS)
            if name == "elmo-embed":
                same = first.keys() == second.keys() and all(np.array_equal(first[k], second[k]) for k in first)
            else:
                same = first == second
            print(
                f"{name}: the same output with either setting: {same}" + ("" if name == "elmo-embed" else f" ({first})")
            )


if __name__ == "__main__":
    main()
