"""Running a command in a child process from the tests, as a user runs it from a shell."""

import os
import subprocess
from pathlib import Path
from typing import Dict, Sequence

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
