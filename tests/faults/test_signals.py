"""Ctrl-C and ``kill`` mid-run through the real entry points: one line, the partial output gone, an
earlier output untouched, and the same command run again gives the whole file (issue 54)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest

from tests.conftest import ROOT
from tests.faults.signalled import signalled

SENTENCES = "".join(f"the cat sat on the mat number {i} while dogs ran past\n" for i in range(3000))
EARLIER = b"an earlier output\n"
BIN = Path(sys.executable).parent


def _start(entry_point: str, source: Path, output: Path) -> "subprocess.Popen[str]":
    arguments = [str(source), str(output), "--batch-size", "1", "--no-progress"]
    command = {
        "allennlp": [str(BIN / "allennlp"), "elmo-embed", *arguments],
        "elmo-tasks": [str(BIN / "elmo-tasks"), "elmo-embed", *arguments],
    }[entry_point]
    env = {name: value for name, value in os.environ.items() if name != "OMP_NUM_THREADS"}  # default workers
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_partial(folder: Path, process: "subprocess.Popen[str]", timeout: float = 120) -> None:
    """Until the command writes its partial output (it is mid-run), or fails the test."""
    deadline = time.monotonic() + timeout
    while not any(name.endswith(".partial") for name in os.listdir(folder)):
        assert process.poll() is None, process.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.1)
    time.sleep(0.5)  # some batches in


@pytest.mark.parametrize(
    "entry_point, signum", [("allennlp", signal.SIGTERM), ("elmo-tasks", signal.SIGINT), ("elmo-tasks", signal.SIGTERM)]
)
def test_a_signal_mid_run_ends_elmo_embed_with_one_line_and_nothing_lost(tmp_path, entry_point, signum):
    source = tmp_path / "in.txt"
    source.write_text(SENTENCES, encoding="utf-8")
    output = tmp_path / "out" / "out.hdf5"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    process = _start(entry_point, source, output)
    try:
        _wait_for_partial(output.parent, process)
        seconds, err = signalled(process, signum, timeout=30)
    finally:
        process.kill()
    assert seconds < 10
    name = signal.Signals(signum).name
    # (`allennlp` itself prints its start-up warnings and plugin line before)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"elmo-embed: stopped by {name}; {output} was not written (an earlier file there is unchanged); "
        "run the same command again"
    ), err[-3000:]
    assert process.returncode == 128 + signum
    assert sorted(os.listdir(output.parent)) == ["out.hdf5"] and output.read_bytes() == EARLIER

    short = "".join(SENTENCES.splitlines(keepends=True)[:40])
    (tmp_path / "short.txt").write_text(short, encoding="utf-8")  # the run again, kept short
    again = _start("elmo-tasks", tmp_path / "short.txt", output)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    with h5py.File(output, "r") as written:
        assert len([name for name in written if name.isdigit()]) == 40


@pytest.mark.slow
def test_sigkill_mid_write_leaves_the_earlier_output_and_the_run_again_is_whole(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(SENTENCES, encoding="utf-8")
    output = tmp_path / "out" / "out.hdf5"
    output.parent.mkdir()
    output.write_bytes(EARLIER)
    process = _start("elmo-tasks", source, output)
    try:
        _wait_for_partial(output.parent, process)
        process.kill()
        process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    names = sorted(os.listdir(output.parent))
    # nothing could clean up: the partial file stays, hidden, and never replaces out.hdf5
    assert (
        names[-1] == "out.hdf5"
        and len(names) == 2
        and names[0].startswith(".out.hdf5.")
        and names[0].endswith(".partial")
    )
    assert output.read_bytes() == EARLIER

    short = "".join(SENTENCES.splitlines(keepends=True)[:40])
    (tmp_path / "short.txt").write_text(short, encoding="utf-8")
    again = _start("elmo-tasks", tmp_path / "short.txt", output)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    with h5py.File(output, "r") as written:
        assert len([name for name in written if name.isdigit()]) == 40
