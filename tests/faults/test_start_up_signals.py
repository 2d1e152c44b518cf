"""A Ctrl-C or SIGTERM while ``elmo-tasks`` is still starting (importing AllenNLP takes seconds): one line and
the shell's status, no traceback, nothing written.

The signal is sent the moment the program's ``main`` has installed its start-up handlers, which the test
sees in ``/proc/PID/status`` (SIGTERM joins the caught signals), seconds before AllenNLP is imported.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.faults.signalled import signalled

ELMO_TASKS = str(Path(sys.executable).parent / "elmo-tasks")


def _catches(pid: int, signum: int) -> bool:
    """Whether the process has a handler for ``signum`` (its ``SigCgt`` mask in /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the caught signals in /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda signum: signal.Signals(signum).name)
def test_a_stop_while_starting_is_one_line(tmp_path, signum):
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [ELMO_TASKS, "train", "experiments/sst5_baseline.jsonnet", "-s", str(run_dir)],
        cwd=ROOT,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not _catches(process.pid, signal.SIGTERM):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "elmo-tasks never installed its start-up handlers"
        time.sleep(0.01)
    seconds, err = signalled(process, signum, timeout=30)
    name = signal.Signals(signum).name
    assert seconds < 10
    assert "Traceback" not in err, err[-3000:]
    assert err.strip().splitlines() == [
        f"elmo-tasks: stopped by {name} while starting, before the command ran; nothing was read or written: "
        "run the same command again"
    ], err[-3000:]
    assert process.returncode == 128 + signum
    assert not run_dir.exists()


def test_the_start_up_handlers_are_undone_when_main_ends(monkeypatch, capsys):
    """``main`` run in this process (as tests do) leaves the signal handlers it found."""
    from elmo_tasks import __main__ as elmo_tasks_main

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(sys, "argv", ["elmo-tasks", "elmo-embed", "--help"])
    with pytest.raises(SystemExit):
        elmo_tasks_main.main()
    assert "usage:" in capsys.readouterr().out
    assert {signum: signal.getsignal(signum) for signum in before} == before
