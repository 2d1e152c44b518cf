"""What the benchmarks share: the JSON their worker subprocesses read and the options that start a
worker, the ``--json`` results file, and the ``allennlp`` processes they time. Imported by the scripts
beside it (run as ``python benchmarks/NAME.py``)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence

# The repository, where the benchmarks run their commands, and the ``allennlp`` of this environment.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLENNLP = os.path.join(os.path.dirname(sys.executable), "allennlp")


def start_like_a_command() -> None:
    """What a command of the measured checkout does at its start (the config defaults the experiments
    read, the thread policy): checkouts since 2026-11-29 do it in ``elmo_tasks.command_start``, earlier
    ones when the plugin was imported (then there is nothing to do)."""
    import elmo_tasks

    # not an import attempt: the editable install's finder would find this checkout's module for an older one
    if not os.path.exists(os.path.join(os.path.dirname(elmo_tasks.__file__), "command_start.py")):
        return
    from elmo_tasks.command_start import start_command

    start_command()


@contextmanager
def json_temp_file(payload: object) -> Iterator[str]:
    """The path of a temporary JSON file holding ``payload`` (for the worker subprocesses to read),
    removed on leaving the block."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(payload, handle)
    try:
        yield handle.name
    finally:
        os.remove(handle.name)


def save_results(json_path: Optional[str], results: object) -> None:
    """Writes ``results`` as indented JSON to ``json_path`` (the ``--json`` option), if one is given."""
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(results, handle, indent=2)


def append_result(json_path: Optional[str], result: Dict[str, Any]) -> None:
    """Prints ``result`` as one JSON line, and appends that line to ``json_path`` (``--json``), if given."""
    print(json.dumps(result))
    if json_path:
        with open(json_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")


def print_profile(steps: Callable[[], None]) -> None:
    """torch.profiler's top operators by their own CPU time over ``steps`` (``--profile``)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        steps()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


def report_rows(
    rows: Iterable[Dict[str, Any]], describe: Callable[[Dict[str, Any]], str], json_path: Optional[str]
) -> List[Dict[str, Any]]:
    """Prints each row's line as soon as it is measured (``rows`` may be a generator, so a long
    benchmark shows its progress), then writes all of them to ``json_path`` (``--json``), if given."""
    measured = []
    for row in rows:
        measured.append(row)
        print(describe(row), flush=True)
    save_results(json_path, measured)
    return measured


def environment_without_thread_settings() -> Dict[str, str]:
    """This process's environment less ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS``: a command started
    with it runs at its own thread defaults, as a user's would."""
    return {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def add_worker_options(parser: argparse.ArgumentParser, workers: Sequence[str]) -> None:
    """The hidden options that :func:`run_worker` starts a worker with (``workers``: the ``--worker``
    choices); the script also needs ``--batch-size`` and ``--threads``."""
    parser.add_argument("--worker", choices=workers, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--sentences-file", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)


def run_worker(
    script: str, worker: str, model_dir: str, sentences_file: str, args: argparse.Namespace, output: str
) -> dict:
    """Runs ``script --worker WORKER`` on the model in ``model_dir`` and the JSON ``sentences_file``
    with the run's ``--batch-size`` and ``--threads``, in a process of its own (so that its peak
    memory and threads are its own); returns the JSON object the worker prints last."""
    command = [sys.executable, script, "--worker", worker, "--model-dir", model_dir, "--sentences-file", sentences_file]
    command += ["--batch-size", str(args.batch_size), "--threads", str(args.threads), "--output", output]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
