"""Running one ``allennlp`` command of a run, from the repository root, and showing it as a shell line."""

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Dict, Iterator, List

# The repository whose experiments/ the runs train (this file is elmo_tasks/reproduction/allennlp_runs.py).
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
            returncode = run_subprocess(launched(command), {**os.environ, **env}, handle)
        if returncode != 0:
            raise RunFailed(f"exit {returncode}; see {log}: {shown(env, command)}")
    return time.monotonic() - start


def launched(command: List[str]) -> List[str]:
    """``command`` as it can start here: where AllenNLP is importable but has no ``allennlp`` script beside
    this Python (a package folder on PYTHONPATH, as on an offline GPU machine), ``python -m allennlp``."""
    if command[:1] == [ALLENNLP] and not os.path.exists(ALLENNLP):
        return [sys.executable, "-m", "allennlp", *command[1:]]
    return command


# How long a stopped harness waits for its allennlp command to end on SIGTERM (AllenNLP's own stop, with
# our one line about the checkpoints kept) before it kills it.
COMMAND_STOP_SECONDS = 20.0


def run_subprocess(command: List[str], env: Dict[str, str], output: IO[str]) -> int:
    """Runs ``command`` from ROOT to its end; its exit status. The command ends with the harness: on an
    exception here (a Ctrl-C or SIGTERM of the harness) it is sent SIGTERM, and killed if it has not
    ended within COMMAND_STOP_SECONDS; if the harness itself is killed, the kernel sends it SIGTERM."""
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, preexec_fn=_terminated_with_parent
    )
    try:
        return process.wait()
    except BaseException:
        process.terminate()
        try:
            process.wait(timeout=COMMAND_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise


def _terminated_with_parent() -> None:
    """In the child, before it runs the command: SIGTERM when the harness's process ends, even by SIGKILL
    (Linux's PR_SET_PDEATHSIG; elsewhere nothing: a killed harness leaves its command running)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def config_variables(env: Dict[str, str]) -> Dict[str, str]:
    """What ``std.extVar`` sees in the configs of a run whose variables are ``env``: as in its subprocess, the
    run's variables over this process's environment over the config defaults (which ``allennlp`` fills in at
    its start for the ones unset; from ROOT, ``ELMO_TASKS_FIXTURES``'s default is ``fixtures``)."""
    from elmo_tasks.config_defaults import DEFAULTS

    return {**DEFAULTS, **os.environ, **env}


def _run_in_process(env: Dict[str, str], command: List[str], log: Path) -> None:
    """Runs ``allennlp train`` or ``allennlp evaluate`` through AllenNLP's Python functions, with the run's
    variables given to the config as external variables: this process's ``sys.argv``, environment and
    working directory stay as they are. The paths in the commands and configs are from ROOT (the data
    paths of the experiments, with their globs, lists and ``#`` suffixes, are not rewritten: they are
    recorded as written), so the process must be there already."""
    if Path.cwd().resolve() != ROOT:
        raise RunFailed(
            f"in-process runs read the configs' relative paths from the working directory, which is {Path.cwd()}, "
            f"not the repository's root {ROOT}: run from there, or without --in-process: {shown(env, command)}"
        )
    import elmo_tasks.plugin  # noqa: F401  (registers the names)
    from elmo_tasks.command_start import start_command

    # what a subprocess's allennlp command does at its start, less the config defaults: config_variables has them
    start_command(config_defaults=False)
    try:
        with (
            open(log, "w", encoding="utf-8") as handle,
            contextlib.redirect_stdout(handle),
            contextlib.redirect_stderr(handle),
            logging_kept(),
        ):
            _allennlp_command(command[1:], config_variables(env))
    except SystemExit as stop:  # a command line argparse refuses (its message is in the log)
        if stop.code not in (0, None):
            raise RunFailed(f"exit {stop.code}; see {log}: {shown(env, command)}") from None
    except Exception as error:  # noqa: BLE001 (any failure of one run is reported, the others go on)
        raise RunFailed(f"{type(error).__name__}: {error}; see {log}: {shown(env, command)}") from error


def _allennlp_command(arguments: List[str], ext_vars: Dict[str, str]) -> None:
    """``allennlp ARGUMENTS`` (train or evaluate) by AllenNLP's own parser and functions, the config read
    with ``ext_vars`` (``allennlp train`` reads them from its environment)."""
    from allennlp.commands import ArgumentParserWithDefaults
    from allennlp.commands.evaluate import Evaluate, evaluate_from_args
    from allennlp.commands.train import Train, train_model
    from allennlp.common import Params

    parser = ArgumentParserWithDefaults(prog="allennlp")
    subcommands = parser.add_subparsers(dest="subcommand", required=True)
    for subcommand in (Train(), Evaluate()):
        subcommand.add_subparser(subcommands)
    args = parser.parse_args(arguments)
    if args.subcommand == "evaluate":
        evaluate_from_args(args)
        return
    # allennlp.commands.train.train_model_from_args, with the external variables given
    params = Params.from_file(args.param_path, args.overrides, ext_vars=ext_vars)
    train_model(
        params,
        args.serialization_dir,
        recover=args.recover,
        force=args.force,
        node_rank=args.node_rank,
        dry_run=args.dry_run,
        file_friendly_logging=args.file_friendly_logging,
    )


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """Gives back, after an in-process ``allennlp`` command, the logging it changed.

    ``allennlp train`` clears the root logger's handlers and adds its own, bound to the ``sys.stdout``
    and ``sys.stderr`` of the moment (here a run's log file, closed when the run ends) and to a file in
    the run's folder; left in place, every later log line of the process would go to a closed file.
    ``allennlp evaluate`` turns some of AllenNLP's loggers off and sets another's level. Every logger
    that was there gets its handlers, level and switch back, the command's handlers are closed, and
    ``sys.excepthook`` (which ``allennlp train`` also replaces) is restored."""
    # the modules of the loggers those commands change, imported first: a logger made during the run is not saved
    import allennlp.commands.evaluate  # noqa: F401
    import allennlp.commands.train  # noqa: F401
    import allennlp.common.tqdm  # noqa: F401

    manager = logging.Logger.manager
    loggers = [logging.getLogger()] + [node for node in manager.loggerDict.values() if isinstance(node, logging.Logger)]
    saved = [(logger, list(logger.handlers), logger.level, logger.disabled) for logger in loggers]
    excepthook = sys.excepthook
    try:
        yield
    finally:
        sys.excepthook = excepthook
        for logger, handlers, level, disabled in saved:
            for handler in [h for h in logger.handlers if h not in handlers]:
                logger.removeHandler(handler)
                handler.close()
            for handler in [h for h in handlers if h not in logger.handlers]:
                logger.addHandler(handler)
            if logger.level != level:  # setLevel clears every logger's cache: only where the command changed it
                logger.setLevel(level)
            logger.disabled = disabled


def git_commit() -> Dict[str, Any]:
    """HEAD and whether the working tree had uncommitted changes to tracked files."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()

    return {"git_commit": git("rev-parse", "HEAD") or None, "git_dirty": bool(git("status", "--porcelain", "-uno"))}
