"""The lock that lets several reproduce.py processes share one runs directory (say, one run per core): each
run is trained by one process at a time. What several runs read (word vectors, a fine-tuned biLM) is built
once under :func:`elmo_tasks.build_lock.build_lock`."""

import contextlib
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
