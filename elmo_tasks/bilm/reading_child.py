"""Sentences read and tokenized by a child process while the parent starts: ``bilm-perplexity``'s reading.

The command's default tokenizer is spaCy's, whose import takes more than a second, and its scoring needs
torch, whose import takes two to three: one after the other, and with the reading of the text after
them, they were a fifth of a run over a few hundred paragraphs and most of a run over one line. A child
forked before the parent imports torch reads and tokenizes the text meanwhile, and hands the sentences
back over a pipe, in file order, in chunks; the parent scores them as it would have scored its own.

The child imports spaCy with torch held out (``sys.modules["torch"] = None``): spaCy's thinc imports
torch only to offer its torch layers, and records it as missing; tokenizing needs none of them, and the
child never imports torch otherwise. What the reading raises (a missing file, a line that is not UTF-8,
no sentence at all) is raised in the parent, at the same point of its iteration as before, with the same
message. The child ignores Ctrl-C and dies at SIGTERM (the parent alone decides, as for the scoring
workers, :mod:`elmo_tasks.bilm.workers`); the parent stops it when it leaves the context, however it
leaves, and a child whose parent died is stopped by its next write into the closed pipe.
"""

import os
import pickle
import signal
import sys
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection, Pipe
from typing import Callable, Iterable, Iterator, List

from elmo_tasks.bilm.workers import forking_available, stopping_signals_blocked

Sentence = List[str]


class ReadingChildError(RuntimeError):
    """The child reading the text ended before the text did (killed from outside, or out of memory)."""


#: Sentences per message: large enough that pickling costs little, small enough to start scoring soon.
SENTENCES_PER_MESSAGE = 256


@contextmanager
def sentences_read_aside(read: Callable[[], Iterable[Sentence]]) -> Iterator[Iterable[Sentence]]:
    """The sentences ``read()`` yields, read by a forked child from now on (in this process where
    processes cannot be forked). ``read`` runs in the child only: it may import spaCy there."""
    if not forking_available():
        yield _read_here(read)
        return
    receiver, sender = Pipe(duplex=False)
    with stopping_signals_blocked():
        pid = os.fork()
        if pid == 0:  # the child: it never returns
            receiver.close()
            _child(read, sender)
    sender.close()
    try:
        yield _received(receiver)
    finally:
        receiver.close()
        _stop(pid)


def _read_here(read: Callable[[], Iterable[Sentence]]) -> Iterator[Sentence]:
    yield from read()


def _child(read: Callable[[], Iterable[Sentence]], sender: Connection) -> None:
    code = 1
    chunk: List[Sentence] = []
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        if "torch" not in sys.modules:
            sys.modules["torch"] = None  # type: ignore[assignment]  # held out of spaCy's import (above)
        for sentence in read():
            chunk.append(list(sentence))
            if len(chunk) == SENTENCES_PER_MESSAGE:
                sender.send(("sentences", chunk))
                chunk = []
        sender.send(("sentences", chunk))
        sender.send(("end", None))
        code = 0
    except (BrokenPipeError, ConnectionResetError):  # the parent has stopped reading: nothing to tell it
        pass
    except BaseException as err:  # whatever the reading raises, the parent raises after the sentences before it
        with suppress(BrokenPipeError, ConnectionResetError):
            sender.send(("sentences", chunk))
            sender.send(("error", _sendable(err)))
    finally:
        # neither atexit handlers nor the parent's stack run here, nor a flush of what the parent had
        # buffered for its own output before the fork (it would be written twice)
        os._exit(code)


def _sendable(err: BaseException) -> BaseException:
    """``err`` if it survives pickling (the command's own errors do), else a RuntimeError saying what it was."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")


def _received(receiver: Connection) -> Iterator[Sentence]:
    while True:
        try:
            kind, payload = receiver.recv()
        except EOFError:
            raise ReadingChildError(
                "the process reading the text ended before the text did (was it killed, or out of memory?); "
                "run the same command again"
            ) from None
        if kind == "end":
            return
        if kind == "error":
            raise payload
        yield from payload


def _stop(pid: int) -> None:
    """End the child (it may still be reading, if the parent stopped early) and collect its exit status."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
