"""The training time of one run over all its sittings, kept in a file beside the run.

A run can be trained in several sittings: interrupted (a session that ends kills its processes) and
resumed from its last checkpoint later. Its record should count the time of every sitting, including one
that was killed, which never returns to write its time at the end. So the current sitting's time is
rewritten into the file every ``every_seconds`` while it trains; a killed sitting loses at most that much.
"""

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Iterator, List


def seconds_spent(spent_file: Path) -> float:
    """The training seconds of every sitting written to ``spent_file`` so far (0 when there is none)."""
    return sum(_sittings(spent_file))


@contextlib.contextmanager
def timed_sitting(spent_file: Path, restart: bool, every_seconds: float = 60.0) -> Iterator[None]:
    """Times the enclosed training as one more sitting of the run; ``restart`` forgets earlier sittings
    (a run trained from scratch again). The sitting's time is written when it starts, every
    ``every_seconds`` while it runs, and when it ends, also when it fails (its time was spent)."""
    earlier = [] if restart else _sittings(spent_file)
    start = time.monotonic()
    finished = threading.Event()

    def write() -> None:
        _write_atomically(spent_file, earlier + [round(time.monotonic() - start, 1)])

    def beat() -> None:
        while not finished.wait(every_seconds):
            write()

    spent_file.parent.mkdir(parents=True, exist_ok=True)
    write()
    heartbeat = threading.Thread(target=beat, name=f"sitting clock of {spent_file.name}", daemon=True)
    heartbeat.start()
    try:
        yield
    finally:
        finished.set()
        heartbeat.join()
        write()


def _sittings(spent_file: Path) -> List[float]:
    if not spent_file.exists():
        return []
    sittings = json.loads(spent_file.read_text())
    if not isinstance(sittings, list) or not all(isinstance(s, (int, float)) for s in sittings):
        raise ValueError(
            f"{spent_file}: expected a JSON list of seconds, one per training sitting, got {sittings!r}; "
            "delete the file to count this run's training time from now on"
        )
    return [float(s) for s in sittings]


def _write_atomically(path: Path, sittings: List[float]) -> None:
    """A kill during the write leaves the previous file whole, never half a list."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(sittings))
    os.replace(partial, path)
