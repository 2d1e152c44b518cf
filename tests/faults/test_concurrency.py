"""Concurrent use (issue 54): two ``elmo-embed`` runs writing one output, two harness processes on one
run folder, two demo servers on one port. Each ends in a clear refusal or a safe result, never a
corrupted file; the locks are tested with real processes contending them at once."""

import multiprocessing
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import h5py
import numpy as np
import pytest

from elmo_tasks.build_lock import build_lock
from elmo_tasks.reproduction.allennlp_runs import RunFailed
from elmo_tasks.reproduction.locks import run_lock
from elmo_tasks.reproduction.records import RECORD_VERSION, RecordError, load_records, read_record, save_run_record
from tests.conftest import ROOT, untrained_archive
from tests.demo.http_client import get_json

ENV = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
# Two inputs whose outputs differ (line count, words), so "equal to one of them" says which.
INPUTS = {
    "cats": "".join(f"the cat sat on the mat number {i}\n" for i in range(200)),
    "dogs": "".join(f"a dog ran in the park {i} times\n" for i in range(150)),
}
FORK = multiprocessing.get_context("fork")  # children start in milliseconds, with the locks imported


# --- two elmo-embed runs writing the same output -------------------------------------------------------------


def _embed(source: Path, output: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "elmo_tasks.bilm.embed", str(source), str(output), "--no-progress"],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(process: subprocess.Popen) -> Tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def _contents(path: Path) -> Dict[str, np.ndarray]:
    """Every dataset of an hdf5 file by name (opening it checks that it is a whole hdf5 file)."""
    with h5py.File(path, "r") as handle:
        return {name: handle[name][()] for name in handle}


def _same(left: Dict[str, np.ndarray], right: Dict[str, np.ndarray]) -> bool:
    return left.keys() == right.keys() and all(np.array_equal(left[name], right[name]) for name in left)


@pytest.fixture(scope="module")
def embedded_alone(tmp_path_factory) -> Tuple[Dict[str, Path], Dict[str, Dict[str, np.ndarray]]]:
    """The two inputs, and what each run writes when it is alone (one after the other)."""
    folder = tmp_path_factory.mktemp("alone")
    sources, alone = {}, {}
    for name, text in INPUTS.items():
        sources[name] = folder / f"{name}.txt"
        sources[name].write_text(text, encoding="utf-8")
        code, _, err = _finished(_embed(sources[name], folder / f"{name}.hdf5"))
        assert code == 0, err[-3000:]
        alone[name] = _contents(folder / f"{name}.hdf5")
    assert not _same(alone["cats"], alone["dogs"])  # else "equal to one of them" would say nothing
    return sources, alone


# the race three times; the first in the fast suite, all three in `make test-all`
@pytest.mark.parametrize("attempt", [0, *(pytest.param(attempt, marks=pytest.mark.slow) for attempt in (1, 2))])
def test_two_elmo_embed_runs_into_one_output_leave_one_whole_output(embedded_alone, tmp_path, attempt):
    """Each run writes a private temporary file and renames it onto OUT when complete: both succeed, and
    OUT is the whole output of whichever renamed last, never a mix or a truncated file."""
    sources, alone = embedded_alone
    output = tmp_path / "out.hdf5"
    runs = {name: _embed(source, output) for name, source in sources.items()}  # started together
    ended = {name: _finished(run) for name, run in runs.items()}
    for name, (code, _, err) in ended.items():
        assert code == 0, (name, err[-3000:])
        assert f"to {output} in " in err.splitlines()[-1]  # its summary: it wrote OUT
    written = _contents(output)
    assert [name for name in alone if _same(written, alone[name])] in (["cats"], ["dogs"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.hdf5"]  # no .partial file left


# --- the harness's locks, contended by real processes -------------------------------------------------------


def _append(log: Path, line: str) -> None:
    """One ``write`` on an O_APPEND descriptor: lines of several processes never mix within a line."""
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(descriptor, f"{line}\n".encode())
    finally:
        os.close(descriptor)


def _overlaps(log: Path) -> List[str]:
    """The ``start PID`` lines written while another process was between its own start and end."""
    holding, found = set(), []
    for line in log.read_text().splitlines():
        event, pid = line.split()
        if event == "start":
            if holding:
                found.append(f"{pid} started while {sorted(holding)} held the lock")
            holding.add(pid)
        else:
            holding.discard(pid)
    return found


def _hold(log: Path, seconds: float) -> None:
    _append(log, f"start {os.getpid()}")
    time.sleep(seconds)
    _append(log, f"end {os.getpid()}")


def _contend_run_lock(lock: Path, log: Path, seconds: float, start: Barrier, results: Queue) -> None:
    """Takes ``lock`` as often as it can for ``seconds``; (times held, refusal messages) to ``results``."""
    start.wait()
    held, refusals = 0, []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            with run_lock(lock):
                _hold(log, 0.001)
            held += 1
        except RunFailed as refused:
            refusals.append(str(refused))
    results.put((os.getpid(), held, refusals[:20]))


def _children(targets: List[Callable[..., None]], *arguments: Any) -> List[Tuple]:
    """Runs each ``target(*arguments, barrier, results)`` in a forked process, all released at once by
    the barrier; what each put into ``results``."""
    barrier, results = FORK.Barrier(len(targets)), FORK.Queue()
    children = [FORK.Process(target=target, args=(*arguments, barrier, results)) for target in targets]
    for child in children:
        child.start()
    answers = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    return answers


REFUSAL = re.compile(r"process (\d+) is training this run \(lock file (.+)\); run this command again when")


def test_the_run_lock_lets_one_process_at_a_time_train_a_run(tmp_path):
    """Four processes take and free one run's lock as fast as they can for two seconds: never two hold it
    at once (two harness processes would train one run directory together), and each refusal names a
    process that is contending it and the lock file."""
    lock, log = tmp_path / "ner" / "elmo" / "seed0.lock", tmp_path / "log"
    log.write_text("")
    answers = _children([_contend_run_lock] * 4, lock, log, 2.0)
    assert _overlaps(log) == []
    pids = {str(pid) for pid, _, _ in answers}
    refusals = [message for _, _, messages in answers for message in messages]
    assert sum(held for _, held, _ in answers) > 10 and refusals  # it was taken, and it was contended
    for message in refusals:
        found = REFUSAL.match(message)
        assert found and found[1] in pids and found[2] == str(lock), message
    assert not lock.exists()


ROUNDS = 300  # of the take-over race: a racy lock lets two processes in only in some rounds


def _take_over(lock: Path, log: Path, rounds: int, dead: int, start: Barrier, results: Queue) -> None:
    """Each round: the lock names a dead process; every child tries to take it at once, once."""
    held = refused = 0
    for _ in range(rounds):
        if start.wait() == 0:
            lock.write_text(str(dead))  # left by a killed harness
        start.wait()
        try:
            with run_lock(lock):
                _hold(log, 0.01)
            held += 1
        except RunFailed:
            refused += 1
        start.wait()
    results.put((os.getpid(), held, refused))


def test_a_lock_left_by_a_dead_process_is_taken_over_by_one_process(tmp_path):
    """A killed harness leaves its lock; processes that find it at the same moment must not all take it
    over (each removing the other's fresh lock): one trains the run, the others are refused."""
    lock, log = tmp_path / "seed0.lock", tmp_path / "log"
    log.write_text("")
    ended = subprocess.Popen(["true"])
    ended.wait()
    answers = _children([_take_over] * 4, lock, log, ROUNDS, ended.pid)
    assert _overlaps(log) == []
    assert sum(held for _, held, _ in answers) >= ROUNDS and sum(refused for _, _, refused in answers) > 0
    assert not lock.exists()


def _build(lock: Path, log: Path, times: int, start: Barrier, results: Queue) -> None:
    """Enters the build lock ``times`` times; (times entered, the lines it reported while waiting)."""
    waited: List[str] = []
    start.wait()
    for _ in range(times):
        with build_lock(lock, "the vectors", waited.append):
            _hold(log, 0.002)
    results.put((os.getpid(), times, waited[:20]))


def test_the_build_lock_lets_every_process_in_one_at_a_time(tmp_path):
    """Word vectors or a fine-tuned biLM: one process builds at a time, the others wait (never refused),
    and say for which process they wait."""
    lock, log = tmp_path / "vectors.txt.lock", tmp_path / "log"
    log.write_text("")
    answers = _children([_build] * 4, lock, log, 30)
    assert _overlaps(log) == []
    assert log.read_text().count("start ") == 4 * 30  # everyone got in every time
    pids = {str(pid) for pid, _, _ in answers}
    waits = [line for _, _, lines in answers for line in lines]
    assert waits  # it was contended
    for line in waits:
        found = re.fullmatch(rf"waiting for process (\d+|\?), which is building the vectors \(lock file {lock}\)", line)
        assert found and found[1] in pids | {"?"}, line


RECORD = {
    "record_version": RECORD_VERSION,
    "task": "ner",
    "variant": "baseline",
    "seed_index": 0,
    "run_name": "seed0",
    "metric": "f1-measure-overall",
    "value": 5.0,
    "test_metrics": {"test": {"f1-measure-overall": 0.05}},
    "validation_curve": [4.0],
    "layer_weights": {},
    "best_epoch": 0,
    "config_resolved": {f"key{i}": "a value of the resolved config" * 4 for i in range(2000)},  # about 250 kB
}


def _write(run_dir: Path, records: Path, seconds: float, start: Barrier, results: Queue) -> None:
    """Saves the run's record over and over, as a harness finishing the run does."""
    start.wait()
    written = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        save_run_record({**RECORD, "value": float(written)}, run_dir, records, "smoke")
        written += 1
    results.put(("writer", written, []))


def _read(run_dir: Path, records: Path, seconds: float, start: Barrier, results: Queue) -> None:
    """Reads the record as another harness does meanwhile (reuse check, report); what it could not read."""
    start.wait()
    read, failures = 0, []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        for path in (run_dir / "record.json", records / "ner" / "baseline" / "seed0.json"):
            try:
                read_record(path, every_field=True)
                read += 1
            except FileNotFoundError:
                pass  # not written yet
            except RecordError as error:
                failures.append(str(error)[:300])
    results.put(("reader", read, failures[:5]))


def test_a_record_being_written_is_never_read_cut_short(tmp_path):
    """Several harness processes share a runs directory: one reads a run's record (to reuse the run, or
    for the report) while another writes it. A record written in place is empty or cut short for a
    moment, and the reader fails that run (or the report) saying the record is broken and should be
    deleted; written whole and renamed into place, it is the old record or the new one."""
    run_dir, records = tmp_path / "ner" / "baseline" / "seed0", tmp_path / "records"
    run_dir.mkdir(parents=True)
    answers = {role: (count, failures) for role, count, failures in _children([_write, _read], run_dir, records, 2.0)}
    assert answers["writer"][0] > 10 and answers["reader"][0] > 10  # both were busy at once
    assert answers["reader"][1] == []
    assert sorted(p.name for p in run_dir.iterdir()) == ["record.json"]  # no temporary file left
    assert sorted(p.name for p in (records / "ner" / "baseline").iterdir()) == ["seed0.json"]


# --- two harness processes on one run folder -----------------------------------------------------------------


def _reproduce(runs: Path) -> subprocess.Popen:
    command = [sys.executable, "scripts/reproduce.py", "ner", "--budget", "smoke", "--variants", "baseline"]
    return subprocess.Popen(
        [*command, "--runs-dir", str(runs)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # a smoke training and evaluation through subprocesses: about 40 s alone, more on a busy machine
def test_two_harness_processes_on_one_run_train_it_once(tmp_path):
    """Two ``scripts/reproduce.py`` on the same run at once: one trains and records it, the other is refused
    at once with one line naming the training process and the lock file (exit 1, as for any failed run);
    the record is whole and the lock is gone."""
    runs = tmp_path / "runs"
    processes = [_reproduce(runs), _reproduce(runs)]
    ended = [_finished(process) for process in processes]
    codes = sorted(code for code, _, _ in ended)
    assert codes == [0, 1], [(code, out[-2000:], err[-2000:]) for code, out, err in ended]
    trainer = next(p for p, (code, _, _) in zip(processes, ended, strict=True) if code == 0)
    _, out, _ = next(e for e in ended if e[0] == 1)
    lock = runs / "ner" / "baseline" / "seed0.lock"
    failed = [line for line in out.splitlines() if "FAILED" in line]
    assert failed == [
        f"    FAILED ner baseline seed0: process {trainer.pid} is training this run (lock file {lock}); run this "
        "command again when it has finished, and the finished run is reused"
    ]
    assert "allennlp train" not in out  # refused before training anything
    [record] = load_records(runs / "records")
    run_record = read_record(runs / "ner" / "baseline" / "seed0" / "record.json", every_field=True)
    assert run_record == record and record["task"] == "ner" and record["variant"] == "baseline"
    assert not lock.exists() and "| NER |" in (runs / "RESULTS.md").read_text()
    assert list(runs.rglob("*.partial")) == []


# --- two demo servers on one port ----------------------------------------------------------------------------


def _demo(archive: str, port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "elmo_tasks", "elmo-demo", archive, "--port", str(port), "--no-bilm"]
    return subprocess.Popen(command, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_listening(port: int, server: subprocess.Popen) -> None:
    """Until something accepts connections on ``port`` (the demo binds and listens before loading)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the first demo never listened on port {port}: {server.communicate(timeout=60)}")


@pytest.mark.slow  # 20 to 50 s: in `make test-all`, out of the fast suite
def test_a_second_demo_on_a_taken_port_refuses_and_the_first_keeps_serving(tmp_path):
    """The second server must not share the port (where SO_REUSEADDR let it, requests would go to either):
    one line, exit 2, before it loads a model. Its archive cannot be loaded at all (its weights are
    garbage: alone it ends with exit 1 and another line), so the refusal shows that it binds first."""
    good = untrained_archive("sst5_baseline", tmp_path / "good")
    shutil.copytree(tmp_path / "good", tmp_path / "broken", ignore=shutil.ignore_patterns("model.tar.gz"))
    (tmp_path / "broken" / "best.th").write_bytes(b"not a state dict")
    from allennlp.models.archival import archive_model

    broken = archive_model(tmp_path / "broken")
    port = _free_port()
    first = _demo(f"mine={good}", port)
    try:
        _wait_until_listening(port, first)  # while the first loads its model, the second starts
        code, out, err = _finished(_demo(f"other={broken}", port))
        assert (code, out) == (2, ""), err
        assert err.splitlines() == [
            f"elmo-demo: error: cannot listen on 127.0.0.1:{port} (Address already in use); choose another --port "
            "or --host"
        ]
        line = first.stdout.readline()
        assert line.startswith(f"elmo-demo: serving mine at http://127.0.0.1:{port}/"), (line, first.stderr.read())
        health = (200, {"status": "ok", "models": {"mine": 0}, "bilm": False})
        assert get_json(f"http://127.0.0.1:{port}/api/health", timeout=30) == health  # the first still serves
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 0
