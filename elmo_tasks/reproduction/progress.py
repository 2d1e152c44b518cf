"""The progress lines of an invocation: which run, how many are left, elapsed and estimated time."""

import statistics
import time
from typing import List, Optional


class Progress:
    """Counts the runs done and estimates the time left from the runs trained so far."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.durations: List[float] = []
        self.current: Optional[float] = None

    def _line(self, what: str, label: str) -> None:
        elapsed = (time.monotonic() - self.started) / 60
        left = self.total - self.done
        estimate = (
            f", about {statistics.mean(self.durations) * left / 60:.0f} min left" if self.durations and left else ""
        )
        print(f"[{self.done + 1}/{self.total}] {what} {label} (elapsed {elapsed:.1f} min{estimate})", flush=True)

    def reused(self, label: str) -> None:
        self._line("reusing", label)
        self.done += 1

    def skipped(self, label: str) -> None:
        self._line("not finished, skipped (--reuse-only):", label)
        self.done += 1

    def start(self, label: str) -> None:
        self._line("running", label)
        self.current = time.monotonic()

    def finished(self) -> None:
        if self.current is not None:
            self.durations.append(time.monotonic() - self.current)
        self.current = None
        self.done += 1

    def failed(self) -> None:
        self.current = None
        self.done += 1
