"""How many CPU threads torch uses under our commands, and how many worker processes embed and score.

The policy, for every command (``allennlp train/evaluate/predict`` and AllenNLP's other commands
where they load our plugin, our subcommands, ``elmo-tasks``, ``python -m elmo_tasks.bilm.embed``), set
at the command's start (:func:`elmo_tasks.command_start.start_command`), never by importing our plugin:

1. a command's ``--threads N`` wins;
2. else a user's ``OMP_NUM_THREADS`` wins (torch has already read it: we leave torch as it is);
3. else torch runs on **one thread**.

Python code that only imports our plugin keeps torch as it is (torch's default, or its own
``torch.set_num_threads``); it gets the policy by calling :func:`apply_thread_policy`.

Why one: torch's default is one OpenMP thread per core, and OpenMP threads spin while they wait
for each other at every operation. When another job wants a core (a shared 2-core machine, a test
suite, a second training run) that spin burned ten times the CPU: an SNLI epoch took 497 s at
torch's default against 39 s at one thread (docs/BENCHMARKS.md, "Thread policy"). One thread
also keeps a seed's model the same on any machine, whatever its core count.

Where a second core pays, we use it with **worker processes** instead of threads: ``elmo-embed``
and ``bilm-perplexity`` split their batches over ``--workers`` processes (default: one per core
this process may use), each on one thread. Processes share busy cores gracefully (they do not
spin on each other), and the results do not depend on the number of workers.
"""

import os
from typing import Optional

DEFAULT_THREADS = 1
USER_THREADS_VARIABLE = "OMP_NUM_THREADS"


class ThreadSettingError(ValueError):
    """A ``--threads``/``--workers`` value or ``OMP_NUM_THREADS`` that cannot be used."""


def chosen_threads(explicit: Optional[int] = None) -> Optional[int]:
    """The thread count the policy sets, or ``None`` when the user's ``OMP_NUM_THREADS`` decides."""
    if explicit is not None:
        if explicit < 1:
            raise ThreadSettingError(f"--threads must be at least 1, got {explicit}")
        return explicit
    if os.environ.get(USER_THREADS_VARIABLE, "").strip():
        return None
    return DEFAULT_THREADS


def apply_thread_policy(explicit: Optional[int] = None) -> int:
    """Set torch's intra-op threads by the policy above; returns the count torch now uses."""
    import torch

    threads = chosen_threads(explicit)
    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, e.g. under ``taskset`` or a container's cpuset)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def chosen_workers(explicit_workers: Optional[int], explicit_threads: Optional[int], batches: int) -> int:
    """How many worker processes (of one thread each) embed or score ``batches`` batches.

    ``--workers N`` if given; else one process when the user chose a thread count (``--threads`` or
    ``OMP_NUM_THREADS``: that is their CPU budget), else one per usable core, never more than there
    are batches. ``--workers`` above 1 with ``--threads`` above 1 is refused: a worker runs one thread.
    """
    if explicit_workers is not None:
        if explicit_workers < 1:
            raise ThreadSettingError(f"--workers must be at least 1, got {explicit_workers}")
        if explicit_workers > 1 and explicit_threads is not None and explicit_threads > 1:
            raise ThreadSettingError(
                f"--workers {explicit_workers} with --threads {explicit_threads}: each worker process runs one "
                "thread; choose --workers N (N processes) or --threads N (one process of N threads)"
            )
        return explicit_workers
    if explicit_threads is not None or chosen_threads() is None:
        return 1
    return max(1, min(usable_cores(), batches))
