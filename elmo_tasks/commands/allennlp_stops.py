"""Ctrl-C and ``kill`` during AllenNLP's own commands (``allennlp train``, ``evaluate``, ``predict``) end
with one line saying what to run next, not a traceback.

AllenNLP's ``train`` already reacts to both: it archives the best epoch so far, if there is one, and
re-raises the ``KeyboardInterrupt`` or ``SigTermReceived``, which its exception hook prints as a long
traceback. The checkpoints stay in the serialization directory, so the one thing a user needs to know
is the command that continues the run; :func:`ending_with_one_line` says it.
"""

import shlex
import signal
import sys
from typing import Any, Callable, List, Optional

# What AllenNLP's `train` takes as its serialization directory, and the flags that start a run afresh.
SERIALIZATION_DIR_FLAGS = ("-s", "--serialization-dir")
FRESH_START_FLAGS = ("-f", "--force")


def _option_value(argv: List[str], flags: tuple) -> Optional[str]:
    for index, argument in enumerate(argv):
        if argument in flags and index + 1 < len(argv):
            return argv[index + 1]
        for flag in flags:
            if flag.startswith("--") and argument.startswith(flag + "="):
                return argument[len(flag) + 1 :]
    return None


def stop_line(prog: str, argv: List[str], signum: int) -> str:
    """The line for a command ``PROG ARGV...`` stopped by ``signum``."""
    name = signal.Signals(signum).name
    command = argv[0] if argv else ""
    if command != "train":
        return (
            f"{prog} {command}: stopped by {name}; an output file it was writing is incomplete: "
            "run the same command again"
        )
    directory = _option_value(argv, SERIALIZATION_DIR_FLAGS) or "the serialization directory"
    again = [argument for argument in argv if argument not in FRESH_START_FLAGS]
    if "--recover" not in again and "-r" not in again:
        again.append("--recover")
    return (
        f"{prog} train: stopped by {name}; the checkpoints in {directory} are kept (a model.tar.gz there holds the "
        f"best epoch so far, not the finished run): continue with {shlex.join([prog, *again])}"
    )


def ending_with_one_line(run: Callable[[], Any], prog: str, argv: List[str]) -> Any:
    """``run()``; if SIGINT (``KeyboardInterrupt``) or SIGTERM (AllenNLP's ``SigTermReceived``) ends it,
    print :func:`stop_line` to stderr and exit with the shell's status for that signal (128 + its number)."""
    from allennlp.common.util import SigTermReceived

    try:
        return run()
    except (KeyboardInterrupt, SigTermReceived) as stopped:
        signum = signal.SIGINT if isinstance(stopped, KeyboardInterrupt) else signal.SIGTERM
        print(stop_line(prog, argv, signum), file=sys.stderr, flush=True)
        raise SystemExit(128 + signum) from None


def raise_on_sigterm() -> None:
    """SIGTERM raises AllenNLP's ``SigTermReceived``, as the ``allennlp`` program's entry point arranges, so
    that ``elmo-tasks train`` archives and stops as ``allennlp train`` does."""
    from allennlp.common.util import install_sigterm_handler

    install_sigterm_handler()
