"""Checkpoints that a Ctrl-C or a SIGTERM cannot cut short: ``allennlp train --recover`` can always resume.

AllenNLP 2.10's ``Checkpointer.save_checkpoint`` writes ``model_state_eN.th`` and then
``training_state_eN.th`` with ``torch.save``, in place. ``allennlp train`` turns SIGTERM into an
exception (``SigTermReceived``) and SIGINT is ``KeyboardInterrupt``; either, raised between Python
bytecodes while ``torch.save`` pickles, leaves a file cut short or the model state without its training
state. ``--recover`` then picks that newest, broken pair and fails to load it, and the run cannot go on
until a user deletes the pair by hand (the reproduction harness stops its runs with SIGTERM).

Here the two signals wait while a checkpoint is written: their handlers are swapped for ones that only
note the signal, and once both files are whole the earlier handlers come back and each noted signal is
raised again, so the run stops exactly as it would have, one checkpoint later. A SIGKILL or a power cut
can still cut a checkpoint short (docs/RELIABILITY.md). :func:`install_whole_checkpoints` is called
where a command starts (:mod:`elmo_tasks.command_start`).
"""

import functools
import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List

# the attribute our replacement carries, so that installing twice changes nothing
_WHOLE_MARK = "_elmo_tasks_whole_checkpoint"
DEFERRED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM noted inside the block and raised again, in arrival order, once it ends.

    Only the main thread may set signal handlers; elsewhere (where Python would not run a handler
    either) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: List[signal.Signals] = []

    def note(signum: int, _frame: Any) -> None:
        arrived.append(signal.Signals(signum))

    earlier = {signum: signal.signal(signum, note) for signum in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in earlier.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)


def whole_save_checkpoint(original: Callable[..., None]) -> Callable[..., None]:
    """``original`` (AllenNLP's ``Checkpointer.save_checkpoint``) with SIGINT and SIGTERM deferred."""

    @functools.wraps(original)
    def save_checkpoint(self: Any, trainer: Any) -> None:
        with signals_deferred():
            original(self, trainer)

    setattr(save_checkpoint, _WHOLE_MARK, True)
    return save_checkpoint


def install_whole_checkpoints() -> None:
    """Replaces ``Checkpointer.save_checkpoint`` (subclasses that do not override it included); idempotent."""
    from allennlp.training.checkpointer import Checkpointer

    if getattr(Checkpointer.save_checkpoint, _WHOLE_MARK, False):
        return
    Checkpointer.save_checkpoint = whole_save_checkpoint(Checkpointer.save_checkpoint)  # type: ignore[method-assign]
