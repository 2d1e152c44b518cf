"""Stopping a command under test with a signal, as a user's Ctrl-C or a scheduler's SIGTERM would."""

import subprocess
import time
from typing import Any, Tuple


def signalled(process: "subprocess.Popen[Any]", signum: int, timeout: float) -> Tuple[float, str]:
    """Sends ``signum`` to ``process`` and waits up to ``timeout`` s for it to end (it is killed after, so
    that nothing outlives the test): the seconds it took to end, and its stderr where that is a pipe."""
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        _, err = process.communicate(timeout=timeout)
    finally:
        process.kill()
    return time.monotonic() - sent, err or ""
