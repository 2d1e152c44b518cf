"""The harness's last resort when it stops (issue 54): its ``allennlp`` command is sent SIGTERM and, if it
has not ended within ``COMMAND_STOP_SECONDS``, SIGKILL, so a command that ignores SIGTERM (hung in a C
call, or a handler that swallowed it) never outlives the harness. A command that honours SIGTERM ends by
it, without waiting for the kill (the control)."""

import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from elmo_tasks.reproduction import allennlp_runs


class _HarnessStopped(Exception):
    """What the harness's stop handler raises in its main thread (here, on SIGUSR1)."""


def _raise_stopped(signum, frame):
    raise _HarnessStopped()


def _child(ignores_sigterm: bool) -> list:
    setup = "import signal, time; "
    if ignores_sigterm:
        setup += "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    return [sys.executable, "-c", setup + "print('ready', flush=True); time.sleep(120)"]


def _stop_when_ready(log: Path) -> threading.Thread:
    """SIGUSR1 to this process once the child has printed ``ready`` (its SIGTERM setting is in place)."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if log.exists() and "ready" in log.read_text():
                signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("ignores_sigterm", [True, False], ids=["ignores-sigterm", "honours-sigterm"])
def test_a_stopped_harness_never_leaves_its_command_running(tmp_path, monkeypatch, ignores_sigterm):
    monkeypatch.setattr(allennlp_runs, "COMMAND_STOP_SECONDS", 1.5)
    started = {}
    real_popen = allennlp_runs.subprocess.Popen

    def popen(*args, **kwargs):
        started["process"] = real_popen(*args, **kwargs)
        return started["process"]

    monkeypatch.setattr(allennlp_runs.subprocess, "Popen", popen)
    previous = signal.signal(signal.SIGUSR1, _raise_stopped)
    log = tmp_path / "command.log"
    try:
        with open(log, "w", encoding="utf-8") as output:
            watcher = _stop_when_ready(log)
            began = time.monotonic()
            with pytest.raises(_HarnessStopped):
                allennlp_runs.run_subprocess(_child(ignores_sigterm), {}, output)
            waited = time.monotonic() - began
            watcher.join(timeout=5)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    process = started["process"]
    assert process.poll() is not None, "the command outlived the harness's stop"
    if ignores_sigterm:
        assert process.returncode == -signal.SIGKILL
        assert waited >= 1.5  # it had its COMMAND_STOP_SECONDS to end by SIGTERM first
    else:
        assert process.returncode == -signal.SIGTERM
    assert waited < 30
