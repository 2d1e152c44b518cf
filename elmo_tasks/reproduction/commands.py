"""Running one ``allennlp`` command of a run, from the repository root, and showing it as a shell line."""

import contextlib
import logging
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

# The repository whose experiments/ the runs train (this file is elmo_tasks/reproduction/commands.py).
ROOT = Path(__file__).resolve().parents[2]
# The allennlp beside this Python (.venv/bin/allennlp when run as the README shows).
ALLENNLP = str(Path(sys.executable).parent / "allennlp")


# Environment variables the caller may set to a path; the commands run from ROOT, not from the caller's directory.
PATH_VARIABLES = (
    "ELMO_TASKS_SHARED_DATA",
    "ELMO_TASKS_WORD_VECTORS",
    "ELMO_TASKS_GLOVE_DIR",
    "ELMO_OPTIONS",
    "ELMO_WEIGHTS",
    "BILM_CORPUS",
    "BILM_START",
)


def from_caller(value: str) -> str:
    """A path the caller gave relative to their own directory, as seen from ROOT (where the commands run);
    anything else (absolute, a package reference such as ``elmo_tasks:pretrained/...``, a path that is not
    there from the caller's directory) as it is."""
    if not value or os.path.isabs(value) or not os.path.exists(value):
        return value
    return os.path.relpath(os.path.abspath(value), ROOT)


def env_paths_from_caller() -> None:
    """Rewrites ``PATH_VARIABLES`` in this process's environment, so that the harness run from any directory
    reads what the caller meant (a no-op from the repository's root)."""
    for name in PATH_VARIABLES:
        if name in os.environ:
            os.environ[name] = from_caller(os.environ[name])


class RunFailed(Exception):
    """One run cannot go on (a command failed, a config does not resolve); the message says which and where
    its log is. The other runs go on."""


def say(line: str) -> None:
    """A progress line of one run, indented under the run's heading."""
    print(f"    {line}", flush=True)


def shown(env: Dict[str, str], command: List[str]) -> str:
    """The command as one shell line a reader can paste (run from the repo root)."""
    prefix = " ".join(f"{key}={value}" for key, value in env.items())
    parts = [".venv/bin/allennlp" if part == ALLENNLP else part.replace(f"{ROOT}/", "") for part in command]
    return f"{prefix} {shlex.join(parts)}"


def run_allennlp(env: Dict[str, str], command: List[str], log: Path, in_process: bool) -> float:
    """Runs one allennlp command from the repo root, output to ``log``; its wall time in seconds.

    ``in_process`` runs it inside this Python (the test suite's smoke runs: no interpreter start-up
    per command); otherwise it is a subprocess, so a crash or a leak stays in that run."""
    say(f"$ {shown(env, command)}")
    start = time.monotonic()
    if in_process:
        _run_in_process(env, command, log)
    else:
        with open(log, "w", encoding="utf-8") as handle:
            result = subprocess.run(
                command, cwd=ROOT, env={**os.environ, **env}, stdout=handle, stderr=subprocess.STDOUT, check=False
            )
        if result.returncode != 0:
            raise RunFailed(f"exit {result.returncode}; see {log}: {shown(env, command)}")
    return time.monotonic() - start


def _run_in_process(env: Dict[str, str], command: List[str], log: Path) -> None:
    from unittest import mock

    from allennlp.commands import main as allennlp_main

    import elmo_tasks.plugin  # noqa: F401  (registers the names)
    from elmo_tasks.command_start import start_command

    start_command()  # as a subprocess's allennlp command starts; its defaults outlive each run's patched environment

    previous = os.getcwd()
    os.chdir(ROOT)
    try:
        with (
            open(log, "w", encoding="utf-8") as handle,
            contextlib.redirect_stdout(handle),
            contextlib.redirect_stderr(handle),
            mock.patch.object(sys, "argv", ["allennlp", *command[1:]]),
            mock.patch.dict(os.environ, env),
            logging_kept(),
        ):
            allennlp_main(prog="allennlp")
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise RunFailed(f"exit {stop.code}; see {log}: {shown(env, command)}") from None
    except Exception as error:  # noqa: BLE001 (any failure of one run is reported, the others go on)
        raise RunFailed(f"{type(error).__name__}: {error}; see {log}: {shown(env, command)}") from error
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """Gives back, after an in-process ``allennlp`` command, the logging it replaced.

    ``allennlp train`` clears the root logger's handlers and adds its own, bound to the ``sys.stdout``
    and ``sys.stderr`` of the moment (here a run's log file, closed when the run ends) and to a file in
    the run's folder; left in place, every later log line of the process would go to a closed file.
    The root and tqdm loggers get their handlers and level back, the command's handlers are closed,
    and ``sys.excepthook`` (which the command also replaces) is restored."""
    from allennlp.common.tqdm import logger as tqdm_logger

    loggers = (logging.getLogger(), tqdm_logger)
    saved = [(logger, list(logger.handlers), logger.level) for logger in loggers]
    excepthook = sys.excepthook
    try:
        yield
    finally:
        sys.excepthook = excepthook
        for logger, handlers, level in saved:
            for handler in [h for h in logger.handlers if h not in handlers]:
                logger.removeHandler(handler)
                handler.close()
            for handler in [h for h in handlers if h not in logger.handlers]:
                logger.addHandler(handler)
            logger.setLevel(level)


def git_commit() -> Dict[str, Any]:
    """HEAD and whether the working tree had uncommitted changes to tracked files."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()

    return {"git_commit": git("rev-parse", "HEAD") or None, "git_dirty": bool(git("status", "--porcelain", "-uno"))}
