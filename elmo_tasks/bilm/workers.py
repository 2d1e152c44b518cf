"""Run a batch function in worker processes and get its results back in input order.

``elmo-embed`` and ``bilm-perplexity`` spend their time in independent batches, so they scale over
processes, each on one thread (``elmo_tasks.threads`` says why processes and not threads).
The workers are forked from the caller after it has loaded its model, so they share its weights
(copy on write) and start in milliseconds. Each batch is computed as the caller computes it on
one thread, so the results do not depend on the number of workers. One thread per worker is
also what makes forking safe: a forked child of a process whose OpenMP threads have run hangs at
its first multi-threaded operation (GNU OpenMP keeps the parent's thread team), while a child on
one thread never uses that team. At most
``in_flight_per_worker`` batches per worker are queued or waiting to be collected, so memory
stays bounded however long the input.

Signals: a forked worker would inherit the parent's Python signal handlers, and ``allennlp``'s
entry point turns SIGTERM into an exception (``SigTermReceived``). ``Pool.terminate()`` stops
workers with SIGTERM, so such a worker raised inside the pool's own queue code instead of dying,
and could die holding the queue's lock while its sibling waited for that lock forever: the
``elmo-embed`` hang of issue 54. So the workers get the default SIGTERM (die at once) and ignore
SIGINT (Ctrl-C reaches the whole process group; the parent alone decides, and stops them). Both
signals are blocked in the parent while the workers are forked, so none lands between the fork
and the worker's own handlers; a signal that arrives meanwhile is delivered to the parent right
after. A run that ends normally closes the pool and joins its workers; only an exception (a
worker's error, Ctrl-C, SIGTERM, a consumer that stops early) terminates them.
"""

import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Deque, Iterable, Iterator, List, Optional, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# The function the forked workers run: set just before the fork, so it needs no pickling.
_batch_function: Optional[Callable[[Any], Any]] = None


def forking_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


_STOPPING_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# how long an interrupted run waits for its pool to stop before killing the workers
TERMINATE_WAIT_SECONDS = 5.0


def _start_worker() -> None:
    """One torch thread per worker. torch is set so only if the parent had imported it: importing it here
    would cost every worker seconds (``import elmo_tasks.bilm`` no longer imports it); a worker that imports
    it later gets one thread from ``OMP_NUM_THREADS``."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING_SIGNALS)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    else:
        os.environ["OMP_NUM_THREADS"] = "1"


@contextmanager
def stopping_signals_blocked() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back from this thread (and the threads and processes it starts) for a while."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _run_batch(item: Any) -> Any:
    assert _batch_function is not None, "worker started without a batch function"
    return _batch_function(item)


def ordered_map(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    workers: int,
    in_flight_per_worker: int = 2,
) -> Iterator[Result]:
    """``map(function, items)``, computed by ``workers`` forked processes of one thread each.

    With one worker (or where processes cannot be forked) it runs here, in this process.
    An exception raised by ``function`` in a worker is raised here, and the workers are stopped.
    """
    if workers <= 1 or not forking_available():
        yield from map(function, items)
        return
    global _batch_function
    _batch_function = function  # the forked workers inherit it
    try:
        children_before = set(multiprocessing.active_children())
        with stopping_signals_blocked():
            pool = multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker)
        pool_workers = [child for child in multiprocessing.active_children() if child not in children_before]
        finished = False
        try:
            pending: Deque[Any] = deque()
            for item in items:
                pending.append(pool.apply_async(_run_batch, (item,)))
                if len(pending) >= workers * in_flight_per_worker:
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()
            finished = True
        finally:
            if finished:
                pool.close()
                pool.join()
            else:
                _terminate_without_waiting_forever(pool, pool_workers)
    finally:
        _batch_function = None


def _terminate_without_waiting_forever(pool: Any, pool_workers: List[BaseProcess]) -> None:
    """``pool.terminate()``, waiting at most ``TERMINATE_WAIT_SECONDS`` for it.

    A Ctrl-C raises KeyboardInterrupt wherever this thread happens to be, possibly inside the locking
    of the pool's result objects while it waits for one; ``terminate()`` joins the pool's threads,
    which could then wait for a lock that is never released. A guard, not a fix for a case seen: past
    the wait, the workers are killed and the pool's threads (daemons) are left to the interpreter's
    exit, so an interrupted command still ends within seconds.
    """
    stopper = threading.Thread(target=pool.terminate, name="elmo-tasks-pool-stopper", daemon=True)
    stopper.start()
    stopper.join(TERMINATE_WAIT_SECONDS)
    if stopper.is_alive():
        for worker in pool_workers:
            worker.kill()
            worker.join(TERMINATE_WAIT_SECONDS)
