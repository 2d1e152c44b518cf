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
"""

import multiprocessing
from collections import deque
from typing import Any, Callable, Deque, Iterable, Iterator, Optional, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# The function the forked workers run: set just before the fork, so it needs no pickling.
_batch_function: Optional[Callable[[Any], Any]] = None


def forking_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _start_worker() -> None:
    import torch

    torch.set_num_threads(1)


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
        with multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker) as pool:
            pending: Deque[Any] = deque()
            for item in items:
                pending.append(pool.apply_async(_run_batch, (item,)))
                if len(pending) >= workers * in_flight_per_worker:
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()
    finally:
        _batch_function = None
