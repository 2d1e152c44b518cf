"""Start-up cost of the command line: median wall time of a few fresh runs of each command.

Measures, each in a new process (what a user waits for):
- ``python -c "import elmo_tasks.bilm"``: the plain-PyTorch biLM on its own;
- ``allennlp --help``: AllenNLP plus the plugin's registration;
- ``allennlp elmo-embed`` on a one-sentence file until its first output line (the summary line,
  as the input is one sentence), with the shipped biLM;
- the same through ``python -m elmo_tasks.bilm.embed`` (no AllenNLP).

Wall times move with machine load; the CPU seconds (user + system) of each process move far less,
so both are printed.

Run it from the repository root so ``.allennlp_plugins`` is found:

    PYTHONPATH=$PWD python benchmarks/startup_time.py --runs 5
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_files import ALLENNLP, report_rows  # noqa: E402


def time_until_first_line(command: List[str], marker: str, env: Dict[str, str]) -> Tuple[float, float]:
    """Wall seconds from launch until a line of stderr or stdout contains ``marker``, and the CPU
    seconds (user + system) of the whole process, which machine load disturbs far less."""
    cpu_before = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    seen = None
    assert process.stdout is not None
    for line in process.stdout:
        if seen is None and marker in line:
            seen = time.perf_counter() - start
    if process.wait() != 0 or seen is None:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode} without a line containing {marker!r}")
    return seen, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="fresh runs per command (the median is reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of elmo-embed (default 1)")
    parser.add_argument("--only", help="comma-separated subset of: bilm,help,embed,standalone")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as directory:
        sentence = Path(directory) / "one.txt"
        sentence.write_text("The quick brown fox jumps over the lazy dog .\n", encoding="utf-8")
        output = str(Path(directory) / "one.hdf5")
        commands = {
            "import elmo_tasks.bilm": ([sys.executable, "-c", "import elmo_tasks.bilm; print('imported')"], "imported"),
            "allennlp --help": ([ALLENNLP, "--help"], "usage:"),
            "allennlp elmo-embed (one sentence, first line)": (
                [ALLENNLP, "elmo-embed", str(sentence), output, "--no-progress", "--threads", str(args.threads)],
                "elmo-embed:",
            ),
            "python -m elmo_tasks.bilm.embed (one sentence, first line)": (
                [
                    sys.executable,
                    "-m",
                    "elmo_tasks.bilm.embed",
                    str(sentence),
                    output,
                    "--no-progress",
                    "--threads",
                    str(args.threads),
                ],
                "elmo-embed:",
            ),
        }
        keys = dict(zip(["bilm", "help", "embed", "standalone"], commands))
        chosen = [keys[k] for k in args.only.split(",")] if args.only else list(commands)
        timings = (_timed_runs(name, *commands[name], env, args.runs) for name in chosen)
        report_rows(timings, _described, args.json)


def _timed_runs(name: str, command: List[str], marker: str, env: Dict[str, str], runs: int) -> Dict[str, Any]:
    """``runs`` starts of one command until its first line, and their medians."""
    timings = [time_until_first_line(command, marker, env) for _ in range(runs)]
    wall, cpu = [w for w, _ in timings], [c for _, c in timings]
    return {
        "command": name,
        "median_wall_s": statistics.median(wall),
        "median_cpu_s": statistics.median(cpu),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def _described(row: Dict[str, Any]) -> str:
    return (
        f"{row['command']:48s} median wall {row['median_wall_s']:6.2f} s, cpu {row['median_cpu_s']:6.2f} s  "
        f"(wall {', '.join(f'{s:.1f}' for s in row['wall_s'])})"
    )


if __name__ == "__main__":
    main()
