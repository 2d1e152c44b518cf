"""Ctrl-C and ``kill``: a command that writes files ends with one line, not a traceback.

Under ``allennlp`` a SIGTERM raises AllenNLP's ``SigTermReceived`` and Ctrl-C a ``KeyboardInterrupt``,
each ending in a long traceback that does not say whether the output was written. Inside
:func:`stopped_with_one_line` both signals raise :class:`CommandStopped` instead, so the ``finally``
blocks of the command still run (a partial output is removed, worker processes are stopped), and
the command then prints one line, saying what happened and what to run next, and exits with the
shell's status for that signal (128 + its number). No import of AllenNLP: our AllenNLP-free entry
points use it too.
"""

import gc
import signal
import sys
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from elmo_tasks.atomic_files import OutputsPutInPlace

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class CommandStopped(BaseException):
    """SIGINT or SIGTERM arrived while a command was running. A ``BaseException``, as ``KeyboardInterrupt``
    is, so that no ``except Exception`` on the way (torch's own import has one) swallows the stop: the
    handlers ignore both signals once it is raised, and a swallowed stop would leave the command deaf to
    every later Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum: int, frame: Optional[FrameType]) -> None:
    # a second Ctrl-C must not cut short the clean-up (removing a partial output, stopping workers)
    for other in STOPPING_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise CommandStopped(signum)


@contextmanager
def stopped_with_one_line(
    command: str, outcome: Union[str, Callable[[], str]], exit_status: Optional[int] = None
) -> Iterator[None]:
    """Run the block; on SIGINT or SIGTERM print ``COMMAND: stopped by SIGNAL; OUTCOME`` and exit.

    ``outcome`` says what became of the output and what to run next, e.g. ``"out.hdf5 was not
    written (an existing one is unchanged); run the same command again"``, or a function giving it when
    the signal arrives (for a command whose output may be complete by then). The exit status is
    ``exit_status`` if given (0 for a server, whose normal end is a signal), else the shell's
    128 + the signal's number. Outside the main thread (where Python cannot set handlers) the block
    runs as it is.
    """
    previous: Dict[int, object] = {}
    try:
        for stopping_signal in STOPPING_SIGNALS:
            previous[stopping_signal] = signal.signal(stopping_signal, _raise_stopped)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    except (CommandStopped, KeyboardInterrupt) as stopped:
        received = stopped.signum if isinstance(stopped, CommandStopped) else int(signal.SIGINT)
        said = outcome() if callable(outcome) else outcome
        print(f"{command}: stopped by {signal.Signals(received).name}; {said}", file=sys.stderr, flush=True)
        # the process ends now: spare it the interpreter's last garbage collections over everything
        # torch and AllenNLP built (8 s of a 10 s stop on a busy 2-core machine); clean-up ran above
        gc.freeze()
        sys.exit(128 + received if exit_status is None else exit_status)
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)  # type: ignore[arg-type]  # why: what signal.signal returned


def output_files_outcome(*paths: str) -> Callable[[], str]:
    """The outcome (for :func:`stopped_with_one_line`) of a command that writes ``paths`` through
    :class:`~elmo_tasks.atomic_files.WholeFile`, made before it writes: each file it had renamed into place
    when the signal came is complete, the others were not written. Asked when the signal arrives, so a stop
    in the instant after a rename says that file is complete."""
    put_in_place = OutputsPutInPlace(*paths)

    def outcome() -> str:
        complete = put_in_place.put_in_place()
        missing = [path for path in paths if path not in complete]
        if not missing:
            return f"{_listed(complete)} {_was(complete)} complete before it stopped; nothing to run again"
        unchanged = "earlier files there are unchanged" if len(missing) > 1 else "an earlier file there is unchanged"
        not_written = f"{_listed(missing)} {_was(missing)} not written ({unchanged}); run the same command again"
        if complete:
            return f"{_listed(complete)} {_was(complete)} complete before it stopped, but {not_written}"
        return not_written

    return outcome


def _listed(paths: List[str]) -> str:
    return " and ".join(paths) if len(paths) < 3 else ", ".join(paths[:-1]) + f" and {paths[-1]}"


def _was(paths: List[str]) -> str:
    return "were" if len(paths) > 1 else "was"


def writing_output_file(command: str, write: Callable[[Any], None]) -> Callable[[Any], None]:
    """A command's run from ``write(args)``, which writes ``args.output_file`` through ``WholeFile``: Ctrl-C
    or SIGTERM end it with one line saying whether that file is complete (:func:`output_files_outcome`)."""

    def run(args: Any) -> None:
        with stopped_with_one_line(command, output_files_outcome(args.output_file)):
            write(args)

    return run
