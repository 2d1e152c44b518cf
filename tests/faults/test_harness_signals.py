"""Ctrl-C, ``kill`` and ``kill -9`` of ``scripts/reproduce.py`` (issue 54), run as users run it (a
subprocess training through ``allennlp train`` subprocesses, the smoke budget on the fixtures): at
start-up, mid-training, while the run's record is written, and in a queue of runs. SIGINT / SIGTERM end
it within seconds with one line saying which run stopped and to run the same command again, exit 130 /
143; no record looks complete when it is not; the lock is freed and the ``allennlp`` command under way
is gone; the same command again finishes, and its records equal an uninterrupted run's apart from timings.

Every harness run trains (about 45 s on the loaded 2-core machine), so these are slow.
"""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from elmo_tasks.reproduction.records import read_record
from tests.conftest import ROOT
from tests.faults.signalled import signalled

pytestmark = pytest.mark.slow

ENV = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
# the harness, as scripts/reproduce.py runs it; a test may first hold one of its steps (a slow disk)
_HARNESS = textwrap.dedent(
    """
    import sys, time
    {held}
    from elmo_tasks.reproduction import main

    sys.argv = ["reproduce.py", *sys.argv[1:]]
    sys.exit(main())
    """
)
# start-up: the plan (which runs, in which order) held, after every import
_HELD_PLANNING = """
from elmo_tasks.reproduction.plan import Plan
real_jobs = Plan.jobs
def held_jobs(self, tasks):
    print("PLANNING", file=sys.stderr, flush=True)
    time.sleep(120)
    return real_jobs(self, tasks)
Plan.jobs = held_jobs
"""
# while the record is written: half of record.json written to its temporary file, then a wait (a slow disk)
_HELD_RECORD = """
from elmo_tasks.reproduction import records
from elmo_tasks.atomic_files import WholeFile
real_write_whole = records.write_whole
def held_write_whole(path, text):
    if path.name == "record.json":
        with WholeFile(path) as partial:
            partial.write_text(text[: len(text) // 2], encoding="utf-8")
            print("RECORD HALF WRITTEN", file=sys.stderr, flush=True)
            time.sleep(120)
    real_write_whole(path, text)
records.write_whole = held_write_whole
"""
# what two runs of one record may differ in: timings, and whether the working tree had uncommitted changes
# (other work goes on in the repository meanwhile); the rerun's training flag is left out by _content
NOT_COMPARED = ("train_seconds", "evaluate_seconds", "evaluated_at", "git_dirty")


def _arguments(runs: Path, seeds: int) -> List[str]:
    return ["ner", "--budget", "smoke", "--variants", "baseline", "--seeds", str(seeds), "--runs-dir", str(runs)]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job starts with SIGINT ignored


def _start(runs: Path, seeds: int, logs: Path, held: str = "") -> "subprocess.Popen[bytes]":
    command = [sys.executable, "-c", _HARNESS.format(held=held), *_arguments(runs, seeds)]
    with open(logs / "out.txt", "wb") as out, open(logs / "err.txt", "wb") as err:
        return subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=out, stderr=err, preexec_fn=_default_sigint)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _wait_for(process: "subprocess.Popen[bytes]", log: Path, pattern: str, timeout: float = 300) -> None:
    """Until ``pattern`` (a regular expression) shows in ``log``, or fails the test."""
    deadline = time.monotonic() + timeout
    while not re.search(pattern, _text(log)):
        assert process.poll() is None, _text(log.parent / "err.txt")[-3000:] + _text(log.parent / "out.txt")[-2000:]
        assert time.monotonic() < deadline, f"the harness never printed {pattern!r}"
        time.sleep(0.1)


def _children(pid: int) -> List[int]:
    """The processes ``pid`` started (the allennlp command under way)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stop(process: "subprocess.Popen[bytes]", signum: int) -> float:
    """Sends ``signum`` and waits for the harness; the seconds it took to end."""
    seconds, _ = signalled(process, signum, timeout=60)
    return seconds


def _run_again(runs: Path, seeds: int) -> str:
    """The same command, run to its end as users run it; its stdout."""
    done = subprocess.run(
        [sys.executable, "scripts/reproduce.py", *_arguments(runs, seeds)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-2000:]
    return done.stdout


def _content(record: Dict[str, Any], runs: Path) -> Dict[str, Any]:
    """A record without NOT_COMPARED, its runs folder written as RUNS, and without the restart or resume
    flag of a rerun's training command (which the record keeps, truthfully)."""
    kept = {name: value for name, value in record.items() if name not in NOT_COMPARED}
    text = json.dumps(kept, sort_keys=True).replace(str(runs), "RUNS")
    return _rounded(json.loads(re.sub(r" (-f|--recover)(?=\")", "", text)))


def _rounded(value: Any) -> Any:
    """``value`` with every float to 6 significant digits: two evaluations of one archive can differ in
    float32 rounding (a test loss of 107.98685 or 107.98686, the labels' spans summed in another order)."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def _records(runs: Path) -> Dict[str, Dict[str, Any]]:
    """Each recorded run (by seed) as the run folder and the records folder hold it: the two must agree."""
    found = {}
    for copy in sorted((runs / "records" / "ner" / "baseline").glob("*.json")):
        in_run = read_record(runs / "ner" / "baseline" / copy.stem / "record.json", every_field=True)
        assert read_record(copy, every_field=True) == in_run
        found[copy.stem] = _content(in_run, runs)
    return found


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    """The records of the two seeds' runs made without a stop."""
    runs = tmp_path_factory.mktemp("uninterrupted") / "runs"
    _run_again(runs, seeds=2)
    return _records(runs)


def _stopped_cleanly(logs: Path, runs: Path, signum: int, seconds: float, outcome: str) -> None:
    """One line, no traceback, the shell's status, nothing looking finished or held that is not."""
    err = _text(logs / "err.txt")
    assert seconds < 10, f"the harness took {seconds:.1f} s to stop"
    assert "Traceback" not in err, err[-3000:]
    name = signal.Signals(signum).name
    assert err.strip().splitlines()[-1] == f"reproduce.py: stopped by {name}; {outcome}", err[-3000:]
    assert list(runs.rglob("*.partial")) == [] and list(runs.rglob("seed*.lock")) == []


def _stopped_run_outcome(done: int, total: int, run: str = "ner baseline seed0") -> str:
    runs_done = f"{done} of {total} run{'s' if total > 1 else ''} done"
    return (
        f"the run {run} was stopped before its record (its checkpoints, if any, are kept to resume from); "
        f"{runs_done}; run the same command again: the runs done are reused and this one goes on"
    )


def _started_training(runs: Path, tmp_path: Path) -> Tuple["subprocess.Popen[bytes]", List[int]]:
    """The harness started on one seed, once its allennlp command reads or trains: the harness's process
    and the processes under it."""
    process = _start(runs, 1, tmp_path)
    _wait_for(process, tmp_path / "out.txt", r"allennlp train ")
    time.sleep(8)  # allennlp has started and reads or trains
    training = _children(process.pid)
    assert training, "no allennlp command under way"
    return process, training


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda signum: signal.Signals(signum).name)
def test_a_signal_mid_training_stops_the_harness_and_the_run_again_records_the_same(tmp_path, uninterrupted, signum):
    runs = tmp_path / "runs"
    process, training = _started_training(runs, tmp_path)
    seconds = _stop(process, signum)
    assert process.returncode == 128 + signum
    _stopped_cleanly(tmp_path, runs, signum, seconds, _stopped_run_outcome(0, 1))
    assert not any(_running(pid) for pid in training)  # the training did not go on without the harness
    assert not (runs / "ner" / "baseline" / "seed0" / "record.json").exists() and not (runs / "records").exists()

    _run_again(runs, 1)
    assert _records(runs) == {"seed0": uninterrupted["seed0"]}


def test_a_kill_mid_training_ends_its_allennlp_command_too_and_the_run_again_records_the_same(tmp_path, uninterrupted):
    """``kill -9`` runs nothing in the harness; its allennlp command gets SIGTERM from the kernel (the
    parent-death signal it was started with) instead of training on, orphaned, beside the next harness."""
    runs = tmp_path / "runs"
    process, training = _started_training(runs, tmp_path)
    _stop(process, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in training) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_running(pid) for pid in training), "the training went on without the harness"
    assert not (runs / "ner" / "baseline" / "seed0" / "record.json").exists()

    _run_again(runs, 1)
    assert _records(runs) == {"seed0": uninterrupted["seed0"]}


def test_a_signal_at_start_up_ends_the_harness_with_one_line(tmp_path, uninterrupted):
    runs = tmp_path / "runs"
    process = _start(runs, 1, tmp_path, held=_HELD_PLANNING)
    _wait_for(process, tmp_path / "err.txt", "PLANNING")
    seconds = _stop(process, signal.SIGINT)
    assert process.returncode == 128 + signal.SIGINT
    _stopped_cleanly(tmp_path, runs, signal.SIGINT, seconds, "no run was started; run the same command again")
    assert not runs.exists()  # nothing was started

    _run_again(runs, 1)
    assert _records(runs) == {"seed0": uninterrupted["seed0"]}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda signum: signal.Signals(signum).name)
def test_a_signal_while_the_record_is_written_leaves_no_record_and_the_run_again_records_it(
    tmp_path, uninterrupted, signum
):
    runs = tmp_path / "runs"
    process = _start(runs, 1, tmp_path, held=_HELD_RECORD)
    _wait_for(process, tmp_path / "err.txt", "RECORD HALF WRITTEN")
    seconds = _stop(process, signum)
    run_dir = runs / "ner" / "baseline" / "seed0"
    assert not (run_dir / "record.json").exists() and not (runs / "records").exists()
    if signum == signal.SIGKILL:  # nothing ran: the half record stays in its hidden temporary file, and the lock
        assert process.returncode == -signal.SIGKILL
        [partial] = run_dir.glob(".record.json.*.partial")
        assert (runs / "ner" / "baseline" / "seed0.lock").read_text() == str(process.pid)
    else:
        assert process.returncode == 128 + signum
        _stopped_cleanly(tmp_path, runs, signum, seconds, _stopped_run_outcome(0, 1))

    out = _run_again(runs, 1)
    assert "trained already, evaluating" in out  # the training is reused, only the evaluation runs again
    assert _records(runs) == {"seed0": uninterrupted["seed0"]}


def test_a_stop_in_a_queue_keeps_the_runs_recorded_and_the_run_again_does_the_rest(tmp_path, uninterrupted):
    runs = tmp_path / "runs"
    process = _start(runs, 2, tmp_path)
    _wait_for(process, tmp_path / "out.txt", r"\[2/2\] running ner baseline seed1")
    _wait_for(process, tmp_path / "out.txt", r"allennlp train .*seed1")
    time.sleep(3)
    seconds = _stop(process, signal.SIGTERM)
    assert process.returncode == 128 + signal.SIGTERM
    _stopped_cleanly(tmp_path, runs, signal.SIGTERM, seconds, _stopped_run_outcome(1, 2, "ner baseline seed1"))
    assert _records(runs) == {"seed0": uninterrupted["seed0"]}  # the first run is whole and recorded

    out = _run_again(runs, 2)
    assert "reusing ner baseline seed0" in out
    assert _records(runs) == uninterrupted
