"""The lock that lets several reproduce.py processes share one runs directory (say, one run per core): each
run is trained by one process at a time. What several runs read (word vectors, a fine-tuned biLM) is built
once under :func:`elmo_tasks.build_lock.build_lock`."""

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator, Optional

from elmo_tasks.reproduction.allennlp_runs import RunFailed


@contextlib.contextmanager
def run_lock(lock: Path) -> Iterator[None]:
    """Holds a run for this process, so that two reproduce.py processes never train one run directory at
    once (the second would resume the first's checkpoints under it); a lock left by a dead process is taken
    over, and the lock goes when the run is recorded or has failed."""
    _claim(lock)
    try:
        yield
    finally:
        with _claiming(lock):
            if _owner(lock) == os.getpid():
                lock.unlink(missing_ok=True)


@contextlib.contextmanager
def _claiming(lock: Path) -> Iterator[None]:
    """One process at a time reads, takes over or frees ``lock``: without it, two processes that find a
    dead process's lock both remove it and each writes its own (or one removes the other's fresh lock), and
    both train the run. The kernel's lock (flock) on a file beside it, held for microseconds, goes with
    its process; that file is never removed (removing it would let two processes lock two files)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock.parent / f".{lock.name}.claim", "a", encoding="utf-8") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(guard, fcntl.LOCK_UN)


def _claim(lock: Path) -> None:
    with _claiming(lock):
        owner = _owner(lock)
        if owner is not None and owner != os.getpid() and _process_alive(owner):
            raise RunFailed(
                f"process {owner} is training this run (lock file {lock}); run this command again when it has "
                "finished, and the finished run is reused"
            )
        partial = lock.parent / f".{lock.name}.{os.getpid()}.partial"
        partial.write_text(str(os.getpid()), encoding="utf-8")
        os.replace(partial, lock)  # whole: a reader never finds the lock empty


def _owner(lock: Path) -> Optional[int]:
    """The process id the lock file names; None when there is no lock file or it names none."""
    try:
        return int(lock.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
