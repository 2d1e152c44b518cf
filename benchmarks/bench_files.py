"""The files the benchmarks share the handling of: the JSON their worker subprocesses read, and the
``--json`` results file. Imported by the scripts beside it (run as ``python benchmarks/NAME.py``)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator, Optional


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
