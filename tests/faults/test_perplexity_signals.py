"""Ctrl-C and ``kill`` while ``bilm-perplexity`` scores, through the real entry points at their defaults
(worker processes, one per core): one line, the shell's exit status, no worker (nor the child reading the text)
left behind (issue 54)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from tests.conftest import ROOT
from tests.faults.signalled import signalled

TEXT = "".join(f"The cat sat on the mat for the {i}th time while the dogs ran past the house.\n" for i in range(4000))
BIN = Path(sys.executable).parent


def _children(pid: int) -> List[int]:
    """The processes ``pid`` started (its scoring workers) that are still there."""
    found = []
    for thread in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{thread}/children", encoding="ascii") as listed:
            found.extend(int(child) for child in listed.read().split())
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize(
    "entry_point, signum", [("allennlp", signal.SIGTERM), ("elmo-tasks", signal.SIGINT), ("elmo-tasks", signal.SIGTERM)]
)
def test_a_signal_while_scoring_ends_bilm_perplexity_with_one_line_and_no_worker_left(tmp_path, entry_point, signum):
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if name != "OMP_NUM_THREADS"}  # default workers
    command = [str(BIN / entry_point), "bilm-perplexity", str(text), "--whitespace-tokenized", "--no-progress"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: List[int] = []
    try:
        deadline = time.monotonic() + 240
        # scoring has begun once the pool's workers are there beside the child that reads the text
        while len(workers) < 2:
            assert process.poll() is None, process.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "bilm-perplexity never started its workers"
            time.sleep(0.1)
            workers = _children(process.pid)
        time.sleep(1.0)  # some batches in
        seconds, err = signalled(process, signum, timeout=30)
    finally:
        process.kill()
    assert seconds < 10
    name = signal.Signals(signum).name
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines[-1] == (
        f"bilm-perplexity: stopped by {name}; nothing was scored to the end; run the same command again"
    ), err[-3000:]
    assert process.returncode == 128 + signum
    time.sleep(0.5)
    assert [worker for worker in workers if _alive(worker)] == []
