"""Worker processes of ``elmo-embed`` / ``bilm-perplexity`` and signals: no hang, prompt stop (issue 54).

``allennlp``'s entry point turns SIGTERM into an exception. Workers that inherited that handler
raised inside the pool's queue code when the pool was terminated, and one could die holding the
queue lock: the parent then waited forever. These tests hold the fix in place: the workers'
own handlers, a normal end that closes the pool instead of terminating it, and a prompt stop on
an exception or a signal in the parent.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from elmo_tasks.bilm.workers import ordered_map
from tests.conftest import ROOT


def _signal_dispositions(_item: int):
    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_workers_die_on_sigterm_and_leave_ctrl_c_to_the_parent():
    def raising_handler(signum, frame):
        raise RuntimeError("the parent's handler")

    previous = signal.signal(signal.SIGTERM, raising_handler)
    try:
        dispositions = list(ordered_map(_signal_dispositions, range(4), workers=2, in_flight_per_worker=1))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert dispositions == [(signal.SIG_DFL, signal.SIG_IGN)] * 4
    # the parent's own handlers are untouched
    assert signal.getsignal(signal.SIGTERM) is previous


def _slow_square(number: int) -> int:
    time.sleep(0.05)
    return number * number


def test_a_consumer_that_stops_early_stops_the_workers_promptly():
    import multiprocessing

    results = ordered_map(_slow_square, range(1000), workers=2)
    assert next(results) == 0
    started = time.monotonic()
    results.close()  # GeneratorExit inside ordered_map, as when the caller raises
    assert time.monotonic() - started < 5
    assert multiprocessing.active_children() == []


# Many whole runs in one process whose SIGTERM handler raises, as under `allennlp`'s entry point.
_MANY_RUNS = textwrap.dedent(
    """
    import signal, sys
    from elmo_tasks.bilm.workers import ordered_map

    class Raised(Exception):
        pass

    def handler(signum, frame):
        raise Raised()

    def double(number):
        return 2 * number

    signal.signal(signal.SIGTERM, handler)
    for run in range(int(sys.argv[1])):
        assert list(ordered_map(double, range(120), workers=2, in_flight_per_worker=1)) == list(range(0, 240, 2))
    print("done")
    """
)


def test_many_runs_under_a_raising_sigterm_handler_all_finish():
    done = subprocess.run(
        [sys.executable, "-c", _MANY_RUNS, "40"],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]


_STOPPED_BY_A_SIGNAL = textwrap.dedent(
    """
    import signal, sys, time
    from elmo_tasks.bilm.workers import ordered_map

    def slow(number):
        time.sleep(0.05)
        return number

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM raises, as under allennlp
    # Ctrl-C raises too, even where this test runs in a background job (which starts with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for number in ordered_map(slow, range(100000), workers=2):
            if number == 3:
                print("running", flush=True)
    except KeyboardInterrupt:
        import multiprocessing
        print("stopped", len(multiprocessing.active_children()), flush=True)
        sys.exit(130)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_parent_stops_it_and_its_workers_within_seconds(signum):
    process = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_BY_A_SIGNAL],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "running"
        sent = time.monotonic()
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)  # seconds on a quiet machine; a loaded one is slower
    finally:
        process.kill()
    assert time.monotonic() - sent < 30
    assert process.returncode == 130 and out.strip() == "stopped 0", err[-2000:]


@pytest.mark.slow
def test_the_real_commands_at_their_defaults_never_hang():
    """`benchmarks/hang_check.py`: fresh processes of every entry point at the default worker count,
    no thread settings, beside a busy process; a run that does not end in time counts as hung."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "hang_check.py"), "--runs", "3", "--busy", "--timeout", "240"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    summaries = [line for line in done.stdout.splitlines() if " runs, " in line]
    assert len(summaries) == 5, done.stdout + done.stderr[-2000:]  # 2 commands x 2 entry points + python -m
    assert all(line.split(": ", 1)[1].startswith("3 runs, 0 hung, 0 failed") for line in summaries), done.stdout
    assert done.returncode == 0
