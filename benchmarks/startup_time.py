"""Start-up cost of the command line: median wall and CPU time of a few fresh runs of each command.

Measures, each in a new process and until it exits (what a user waits for):
- ``python -c "import torch"``: the floor of every command that runs a biLM;
- ``python -c "from elmo_tasks.bilm import BiLM"``: the plain-PyTorch biLM on its own (about ``import torch``;
  a bare ``import elmo_tasks.bilm`` loads its names only when first used);
- ``allennlp --help`` and ``elmo-tasks --help``: AllenNLP plus the plugin's registration;
- ``elmo-tasks CMD --help`` for every command the plugin registers (found by asking the registry in
  a subprocess, so a new command is measured without editing this script): the commands that need
  data or a trained model are measured through their help;
- ``elmo-embed`` on a one-sentence file with the shipped biLM, through ``elmo-tasks``, through
  ``allennlp`` (with the plugin, as before ``elmo-tasks`` had its AllenNLP-free path) and through
  ``python -m elmo_tasks.bilm.embed``;
- ``bilm-perplexity`` on the same file, through ``elmo-tasks`` and ``allennlp``, with its default
  tokenizer (spaCy's rule-based English one, which costs an import of spaCy) and with
  ``--whitespace-tokenized``.

Every run must exit 0 and print the line its row expects (the help's ``usage:``, the command's
summary or result line), so a command that fails fast cannot pass for a fast start.

Wall times move with machine load; the CPU seconds (user + system) of each process move far less,
so both are printed. Worker processes are not started for one sentence (one batch), so the CPU
seconds are the command's own.

    .venv/bin/python benchmarks/startup_time.py --runs 5
    .venv/bin/python benchmarks/startup_time.py --runs 5 --only elmo-tasks,allennlp   # rows whose name has either
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
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from bench_files import ALLENNLP, ROOT, report_rows

ELMO_TASKS = os.path.join(os.path.dirname(sys.executable), "elmo-tasks")
ONE_SENTENCE = "The quick brown fox jumps over the lazy dog .\n"
# Asked in a subprocess, so this process never imports AllenNLP: our commands, by the module of their class.
LIST_OUR_COMMANDS = """
import elmo_tasks.plugin
from allennlp.commands.subcommand import Subcommand
for name in sorted(Subcommand.list_available()):
    if Subcommand.by_name(name).__module__.startswith("elmo_tasks"):
        print(name)
"""


class Row(NamedTuple):
    """One measured command: its name in the report, its command line and a text its output must contain."""

    name: str
    command: List[str]
    expected: str


def timed_run(command: Sequence[str], expected: str, env: Dict[str, str]) -> Tuple[float, float]:
    """Wall seconds from launch until the process exits, and its CPU seconds (user + system, its
    children included), which machine load disturbs far less. Raises if it fails or lacks ``expected``."""
    cpu_before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode != 0 or expected not in done.stdout:
        raise RuntimeError(
            f"{' '.join(command)} exited {done.returncode} without {expected!r} in its output:\n{done.stdout[-2000:]}"
        )
    return wall, _children_cpu() - cpu_before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def our_commands(env: Dict[str, str]) -> List[str]:
    """The names of the commands our plugin registers with AllenNLP."""
    done = subprocess.run(
        [sys.executable, "-c", LIST_OUR_COMMANDS], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    return done.stdout.split()


def rows(commands: List[str], sentence_file: str, output_file: str, threads: int) -> Iterator[Row]:
    """Every row this benchmark measures, in report order."""
    quiet = ["--no-progress", "--threads", str(threads)]
    yield Row("import torch", [sys.executable, "-c", "import torch; print('imported')"], "imported")
    yield Row(
        "from elmo_tasks.bilm import BiLM",
        [sys.executable, "-c", "from elmo_tasks.bilm import BiLM; print('imported')"],
        "imported",
    )
    yield Row("allennlp --help", [ALLENNLP, "--help"], "usage:")
    yield Row("elmo-tasks --help", [ELMO_TASKS, "--help"], "usage:")
    for command in commands:
        yield Row(f"elmo-tasks {command} --help", [ELMO_TASKS, command, "--help"], "usage:")
    for front in ("elmo-tasks", "allennlp"):
        program = ELMO_TASKS if front == "elmo-tasks" else ALLENNLP
        yield Row(
            f"{front} elmo-embed (one sentence)",
            [program, "elmo-embed", sentence_file, output_file, *quiet],
            "elmo-embed: wrote 1 sentence",
        )
    yield Row(
        "python -m elmo_tasks.bilm.embed (one sentence)",
        [sys.executable, "-m", "elmo_tasks.bilm.embed", sentence_file, output_file, *quiet],
        "elmo-embed: wrote 1 sentence",
    )
    for front in ("elmo-tasks", "allennlp"):
        program = ELMO_TASKS if front == "elmo-tasks" else ALLENNLP
        for tokenizer, flags in (("spaCy", []), ("whitespace", ["--whitespace-tokenized"])):
            yield Row(
                f"{front} bilm-perplexity (one sentence, {tokenizer})",
                [program, "bilm-perplexity", sentence_file, *flags, *quiet],
                "perplexity forward",
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="fresh runs per command (the median is reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of elmo-embed (default 1)")
    parser.add_argument(
        "--only", help="comma-separated texts: measure only the rows whose name contains one of them (e.g. embed)"
    )
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as directory:
        sentence_file = Path(directory) / "one.txt"
        sentence_file.write_text(ONE_SENTENCE, encoding="utf-8")
        output_file = str(Path(directory) / "one.hdf5")
        chosen = list(rows(our_commands(env), str(sentence_file), output_file, args.threads))
        if args.only:
            wanted = args.only.split(",")
            chosen = [row for row in chosen if any(text in row.name for text in wanted)]
        print(f"{len(chosen)} commands, {args.runs} runs each; load average before: {_load()}", flush=True)
        report_rows((_timed_runs(row, env, args.runs) for row in chosen), _described, args.json)
        print(f"load average after: {_load()}")


def _load() -> Optional[str]:
    try:
        return " ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return None


def _timed_runs(row: Row, env: Dict[str, str], runs: int) -> Dict[str, Any]:
    """``runs`` runs of one command, whole process each, and their medians."""
    timings = [timed_run(row.command, row.expected, env) for _ in range(runs)]
    wall, cpu = [w for w, _ in timings], [c for _, c in timings]
    return {
        "command": row.name,
        "median_wall_s": statistics.median(wall),
        "median_cpu_s": statistics.median(cpu),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def _described(row: Dict[str, Any]) -> str:
    return (
        f"{row['command']:58s} median wall {row['median_wall_s']:6.2f} s, cpu {row['median_cpu_s']:6.2f} s  "
        f"(wall {', '.join(f'{s:.1f}' for s in row['wall_s'])})"
    )


if __name__ == "__main__":
    main()
