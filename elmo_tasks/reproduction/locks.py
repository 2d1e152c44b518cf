"""Locks that let several reproduce.py processes share one runs directory (say, one run per core): each run
is trained by one process at a time, and what several runs read (word vectors, a fine-tuned biLM) is built
once, by the first process that needs it, while the others wait and then reuse it."""

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator

from elmo_tasks.reproduction.commands import RunFailed


@contextlib.contextmanager
def run_lock(lock: Path) -> Iterator[None]:
    """Holds a run for this process, so that two reproduce.py processes never train one run directory at
    once (the second would resume the first's checkpoints under it); a lock left by a dead process is taken
    over, and the lock goes when the run is recorded or has failed."""
    _claim(lock)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def _claim(lock: Path) -> None:
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            with open(lock, "x", encoding="utf-8") as handle:
                handle.write(str(os.getpid()))
            return
        except FileExistsError:
            try:
                owner = int(lock.read_text(encoding="utf-8").strip() or 0)
            except (OSError, ValueError):
                owner = 0
            if owner and owner != os.getpid() and _process_alive(owner):
                raise RunFailed(
                    f"process {owner} is training this run (lock file {lock}); run this command again when it has "
                    "finished, and the finished run is reused"
                ) from None
            lock.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


@contextlib.contextmanager
def build_lock(lock: Path, what: str) -> Iterator[None]:
    """Holds the building of ``what`` for this process. A second process waits here, saying for whom, and
    then finds it built: unlike a run, a shared input is wanted by every run that reads it, so waiting beats
    failing, and building it twice at once would waste the time (or, for a fine-tuned biLM, train two
    processes into one directory). The kernel's lock (flock) goes with its process, so a killed builder
    leaves nothing to clear; the file stays, naming the last holder."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            print(f"    waiting for process {holder}, which is building {what} (lock file {lock})", flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
