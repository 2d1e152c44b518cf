"""Running a command from the tests: in a child process, as a user runs it from a shell, or in this process
through the same entry point (``elmo-tasks``), for checks that need no fresh interpreter."""

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Sequence

import pytest

# Long enough for an AllenNLP start-up and a few batches on a loaded 2-core machine.
COMMAND_TIMEOUT_S = 600


def environment_without_ours(**settings: str) -> Dict[str, str]:
    """This process's environment less every ``ELMO_TASKS_*`` variable (a user's shell sets none), plus ``settings``."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("ELMO_TASKS_")}
    environment.update(settings)
    return environment


def finished(command: Sequence[str], cwd: Path, env: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
    """``command`` run to its end in ``cwd`` with ``env``, its output captured as text; the test fails with the
    end of its stderr unless it exits 0."""
    completed = subprocess.run(
        list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed


def elmo_tasks_exit_status(arguments: Sequence[str], monkeypatch: Any) -> Any:
    """``elmo-tasks ARGUMENTS...`` run in this process until it exits (the commands that stop early, e.g. on
    a bad file): its exit status. The SIGTERM handler it installs is put back."""
    from elmo_tasks.__main__ import run_allennlp

    monkeypatch.setattr(sys, "argv", ["elmo-tasks", *arguments])
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as stopped:
            run_allennlp("elmo-tasks")
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return stopped.value.code
