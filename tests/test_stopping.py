"""SIGINT and SIGTERM inside ``stopped_with_one_line``: clean-up runs, one line, the shell's exit status."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

# the block writes a partial file and removes it in `finally`, as a command's output writer does
_COMMAND = textwrap.dedent(
    """
    import os, sys, time
    from elmo_tasks.stopping import stopped_with_one_line

    partial = sys.argv[1]
    with stopped_with_one_line("demo-command", "out.txt was not written; run the same command again"):
        try:
            open(partial, "w").close()
            print("running", flush=True)
            time.sleep(60)
        finally:
            os.remove(partial)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_command_with_one_line_after_its_clean_up(tmp_path, signum):
    partial = tmp_path / "out.txt.partial"
    process = subprocess.Popen(
        [sys.executable, "-c", _COMMAND, str(partial)],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "running"
        assert partial.exists()
        process.send_signal(signum)
        _, err = process.communicate(timeout=10)
    finally:
        process.kill()
    name = signal.Signals(signum).name
    assert err.splitlines() == [f"demo-command: stopped by {name}; out.txt was not written; run the same command again"]
    assert process.returncode == 128 + signum
    assert not partial.exists()


def test_handlers_are_restored_after_the_block():
    from elmo_tasks.stopping import stopped_with_one_line

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    with stopped_with_one_line("demo-command", "nothing"):
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {signum: signal.getsignal(signum) for signum in before} == before
