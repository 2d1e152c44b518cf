"""A Ctrl-C or SIGTERM while one of our programs is still starting: one line, not a traceback.

Importing torch (and AllenNLP) takes seconds. A SIGINT in that time would print Python's
``KeyboardInterrupt`` traceback, a SIGTERM end the program silently; neither says that nothing was
read or written. Our entry points (``elmo-tasks``, ``python -m elmo_tasks.bilm.embed``) run their start
inside :func:`stopped_while_starting`, from their first line, and call :func:`command_starts` just
before the command runs, whose own stop handling (:mod:`elmo_tasks.stopping`) then speaks. Nothing here
is installed by importing a module: only an entry point's ``main`` does it.
"""

import signal
import sys
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator, Mapping, Optional

STARTING_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StoppedWhileStarting(BaseException):
    """A SIGINT or SIGTERM that arrived while the program was still starting, before the command ran:
    nothing was read or written yet.

    Not an ``Exception``, for the reason ``KeyboardInterrupt`` is not one: the signal lands inside
    whatever is importing, and torch's own import swallows any ``Exception`` while it loads its CUDA
    libraries (``except Exception: pass`` in ``torch._load_global_deps``), which then went on to run the
    command to its end (tests/faults/test_start_up_signals.py, the stop while torch imports)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop_while_starting(signum: int, _frame: Optional[FrameType]) -> None:
    raise StoppedWhileStarting(signum)


def start_up_line(prog: str, signum: int) -> str:
    """What ``PROG`` prints when ``signum`` stops it while it starts."""
    return (
        f"{prog}: stopped by {signal.Signals(signum).name} while starting, before the command ran; "
        "nothing was read or written: run the same command again"
    )


@contextmanager
def stopped_while_starting(prog: str) -> Iterator[None]:
    """Run the block (a program's start and its command); a SIGINT or SIGTERM before
    :func:`command_starts` prints :func:`start_up_line` and exits with the shell's status (128 + the
    signal's number). The handlers found are put back at the end (``main`` run in a test process)."""
    earlier = {signum: signal.signal(signum, _stop_while_starting) for signum in STARTING_STOP_SIGNALS}
    try:
        yield
    except StoppedWhileStarting as stop:
        print(start_up_line(prog, stop.signum), file=sys.stderr, flush=True)
        sys.exit(128 + stop.signum)
    finally:
        _undo_start_up_handlers(earlier)


def _undo_start_up_handlers(earlier: Mapping[signal.Signals, Any]) -> None:
    """Puts ``earlier`` back for each signal whose handler is still the start-up one."""
    for signum, handler in earlier.items():
        if signal.getsignal(signum) is _stop_while_starting:
            signal.signal(signum, handler)


def command_starts() -> None:
    """From here on the command's own stop handling speaks: the start-up handlers still set give way to
    Python's defaults (Ctrl-C a ``KeyboardInterrupt``, SIGTERM the end of the process)."""
    _undo_start_up_handlers({signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL})
