"""A Ctrl-C in a terminal during ``scripts/reproduce.py`` (issue 54): the terminal sends SIGINT to every
process of its foreground group, so the harness's ``allennlp train`` gets it at the same moment as the
harness, not only the SIGTERM the stopping harness sends it. The harness still ends within seconds with its
one line, its command ends by its own stop (its one line in its log) and is gone, nothing looks finished,
and the same command again records what an uninterrupted run records (apart from timings).

The harness runs in a session of its own (a process group the test can signal as a terminal would), as
users run it, training through ``allennlp`` subprocesses: slow (two harness runs and a stopped one).
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pytest

from tests.conftest import ROOT
from tests.faults.test_harness_signals import (
    _HARNESS,
    ENV,
    _arguments,
    _children,
    _default_sigint,
    _records,
    _run_again,
    _running,
    _stopped_cleanly,
    _stopped_run_outcome,
    _text,
    _wait_for,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Dict[str, Any]:
    """The record of the one run made without a stop."""
    runs = tmp_path_factory.mktemp("uninterrupted") / "runs"
    _run_again(runs, seeds=1)
    return _records(runs)["seed0"]


def _training_log_says(runs: Path, pattern: str) -> bool:
    return any(re.search(pattern, _text(log)) for log in runs.rglob("*.train.log"))


def test_a_ctrl_c_in_a_terminal_stops_the_harness_and_its_command_and_the_run_again_records_the_same(
    tmp_path, uninterrupted
):
    runs = tmp_path / "runs"
    with open(tmp_path / "out.txt", "wb") as out, open(tmp_path / "err.txt", "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", _HARNESS.format(held=""), *_arguments(runs, 1)],
            cwd=ROOT,
            env=ENV,
            stdout=out,
            stderr=err,
            preexec_fn=_default_sigint,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    try:
        _wait_for(process, tmp_path / "out.txt", r"allennlp train ")
        deadline = time.monotonic() + 300
        while not _training_log_says(runs, r"Beginning training"):
            assert process.poll() is None, _text(tmp_path / "err.txt")[-3000:]
            assert time.monotonic() < deadline, "allennlp train never began training"
            time.sleep(0.1)
        training = _children(process.pid)
        assert training, "no allennlp command under way"
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        sent = time.monotonic()
        process.wait(timeout=60)
        seconds = time.monotonic() - sent
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # nothing of it outlives the test
        process.wait()
    assert process.returncode == 128 + signal.SIGINT
    _stopped_cleanly(tmp_path, runs, signal.SIGINT, seconds, _stopped_run_outcome(0, 1))
    assert not any(_running(pid) for pid in training)
    # the command ended by its own stop (its one line, no traceback), not by the harness's kill 20 s on;
    # its line names SIGTERM when the harness's SIGTERM lands while it handles the Ctrl-C, as it mostly does
    assert _training_log_says(runs, r"(?m)^allennlp train: stopped by SIG(INT|TERM); the checkpoints in ")
    assert not _training_log_says(runs, r"Traceback")
    assert not (runs / "ner" / "baseline" / "seed0" / "record.json").exists() and not (runs / "records").exists()

    _run_again(runs, 1)
    assert _records(runs) == {"seed0": uninterrupted}
