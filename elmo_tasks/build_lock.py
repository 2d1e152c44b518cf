"""A lock for building what several processes want at once (word vectors, a fine-tuned biLM): the first
process builds it, the others wait, then find it built and reuse it."""

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Callable, Iterator


def _print(line: str) -> None:
    print(line, flush=True)


@contextlib.contextmanager
def build_lock(lock: Path, what: str, report: Callable[[str], None] = _print) -> Iterator[None]:
    """Holds the building of ``what`` for this process. A second process reports for whom it waits, waits,
    and then finds it built: a shared input is wanted by every process that asks for it, so waiting beats
    failing, and building it twice at once would waste the time (or, for a fine-tuned biLM, train two
    processes into one directory). The check whether it is built already belongs inside the block. The
    kernel's lock (flock) goes with its process, so a killed builder leaves nothing to clear; the file
    stays, naming the last holder."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            report(f"waiting for process {holder}, which is building {what} (lock file {lock})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
