"""A Ctrl-C or SIGTERM while ``elmo-tasks`` or ``python -m elmo_tasks.bilm.embed`` is still starting (importing
AllenNLP or torch takes seconds): one line and the shell's status, no traceback, nothing written
(elmo_tasks/start_up_stops.py). And the documented limit of ``allennlp``, AllenNLP's own entry point, which
imports itself before any code of ours runs.

The signal is sent the moment the program's ``main`` has installed its start-up handlers, which the test
sees in ``/proc/PID/status`` (SIGTERM joins the caught signals), seconds before AllenNLP is imported; or
once torch has begun to import (its first library in ``/proc/PID/maps``).
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


# --- python -m elmo_tasks.bilm.embed: the same start-up handlers, installed before torch is imported ------------

EMBED_MODULE = "elmo_tasks.bilm.embed"


def _maps(pid: int, library: str) -> bool:
    """Whether the process has loaded a shared library whose name holds ``library`` (/proc/PID/maps)."""
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
        return library in maps.read()


def _wait_until(process: "subprocess.Popen[str]", ready, what: str) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, f"the program never {what}"
        time.sleep(0.005)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads the caught signals and libraries in /proc")
@pytest.mark.parametrize("moment", ["handlers-in-place", "torch-importing"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda signum: signal.Signals(signum).name)
def test_a_stop_while_python_m_embed_starts_is_one_line(tmp_path, signum, moment):
    """Signalled the moment ``main`` has installed its handlers (about 0.1 s after Python starts), or while
    torch's import has begun (its first library loaded), which takes seconds: one line, the shell's
    status, the earlier output's bytes unchanged and nothing beside it."""
    source = tmp_path / "in.txt"
    source.write_text("a sentence\n", encoding="utf-8")
    output = tmp_path / "out" / "out.hdf5"
    output.parent.mkdir()
    output.write_bytes(b"an earlier output\n")
    process = subprocess.Popen(
        [sys.executable, "-m", EMBED_MODULE, str(source), str(output), "--no-progress"],
        cwd=tmp_path,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if moment == "handlers-in-place":
        _wait_until(process, lambda: _catches(process.pid, signal.SIGTERM), "installed its start-up handlers")
    else:
        _wait_until(process, lambda: _maps(process.pid, "libtorch"), "loaded torch's first library")
    seconds, err = signalled(process, signum, timeout=30)
    assert seconds < 10
    assert "Traceback" not in err, err[-3000:]
    name = signal.Signals(signum).name
    assert err.strip().splitlines() == [
        f"python -m {EMBED_MODULE}: stopped by {name} while starting, before the command ran; "
        "nothing was read or written: run the same command again"
    ], err[-3000:]
    assert process.returncode == 128 + signum
    assert output.read_bytes() == b"an earlier output\n"
    assert os.listdir(output.parent) == ["out.hdf5"]


def test_python_m_embed_main_leaves_the_handlers_it_found(monkeypatch, capsys):
    from elmo_tasks.bilm import embed

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(SystemExit):
        embed.main(["--help"])
    assert "usage: python -m elmo_tasks.bilm.embed" in capsys.readouterr().out
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_importing_the_bilm_package_and_the_embed_module_installs_no_handler_and_no_torch():
    """What lets ``python -m elmo_tasks.bilm.embed`` set its handlers before torch: Python imports the
    package before the module runs. A library user's plain import must change no signal handler."""
    script = (
        "import signal, sys\n"
        "import elmo_tasks.bilm, elmo_tasks.bilm.embed\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
        "signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, 'torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["True", "True", "False"], done.stderr[-3000:]


def test_every_public_name_of_the_bilm_package_still_works():
    """``elmo_tasks.bilm`` imports its names when first used (PEP 562), each the object of its home module."""
    import importlib

    import elmo_tasks.bilm as bilm

    homes = bilm._HOME_MODULES  # each name and its home module: checked against that module below
    assert sorted(bilm.__all__) == sorted(homes)
    for name, home in homes.items():
        assert getattr(bilm, name) is getattr(importlib.import_module(f"elmo_tasks.bilm.{home}"), name), name
    star: dict = {}
    exec("from elmo_tasks.bilm import *", star)  # the star import a user may write
    assert {name: star[name] for name in homes} == {name: getattr(bilm, name) for name in homes}
    assert set(homes) <= set(dir(bilm))
    from elmo_tasks.bilm import raw_text  # a submodule, not one of the names: imported as before

    assert raw_text.__name__ == "elmo_tasks.bilm.raw_text"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        bilm.no_such_name  # noqa: B018


# --- `allennlp`, AllenNLP's own entry point: nothing of ours runs while it imports --------------------------------

ALLENNLP = str(Path(sys.executable).parent / "allennlp")


def _allennlp_embed(tmp_path: Path) -> "tuple[subprocess.Popen[str], Path]":
    source = tmp_path / "in.txt"
    source.write_text("a sentence\n", encoding="utf-8")
    output = tmp_path / "out" / "out.hdf5"
    output.parent.mkdir()
    process = subprocess.Popen(
        [ALLENNLP, "elmo-embed", str(source), str(output), "--no-progress"],
        cwd=ROOT,  # .allennlp_plugins names our plugin there
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, output


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads the caught signals and libraries in /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda signum: signal.Signals(signum).name)
def test_a_stop_while_allennlp_imports_ends_it_the_default_way_and_writes_nothing(tmp_path, signum):
    """A documented limit (docs/RELIABILITY.md): ``allennlp`` imports itself (torch, spaCy, transformers: 15 s
    on a busy 2-core machine) before it installs its SIGTERM handler or imports our plugin, so nothing of
    ours can run: SIGINT is Python's ``KeyboardInterrupt`` traceback, SIGTERM ends it silently. Either way
    nothing was opened yet, so nothing is written. ``elmo-tasks`` (tested above) says it in one line."""
    process, output = _allennlp_embed(tmp_path)
    _wait_until(process, lambda: _maps(process.pid, "libtorch"), "loaded torch's first library")
    assert not _catches(process.pid, signal.SIGTERM), "AllenNLP had installed its SIGTERM handler already"
    seconds, err = signalled(process, signum, timeout=30)
    assert seconds < 10
    assert process.returncode == -signum  # Python ends an uncaught KeyboardInterrupt with SIGINT itself
    assert "stopped by" not in err, err[-3000:]
    if signum == signal.SIGINT:
        assert "Traceback (most recent call last):" in err and err.rstrip().endswith("KeyboardInterrupt"), err[-3000:]
    else:
        assert "Traceback" not in err, err[-3000:]
    assert os.listdir(output.parent) == []


@pytest.mark.slow  # waits for AllenNLP's whole import (15 to 20 s on the 2-core machine)
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the caught signals in /proc")
def test_a_sigterm_after_allennlp_installs_its_handler_is_its_traceback_and_writes_nothing(tmp_path):
    """The second part of the limit: once imported, AllenNLP makes SIGTERM raise its ``SigTermReceived`` and
    builds its parser, then imports our plugin; a SIGTERM there (before our command runs) is AllenNLP's
    traceback, exit 1. Nothing was opened yet."""
    process, output = _allennlp_embed(tmp_path)
    deadline = time.monotonic() + 240
    while not _catches(process.pid, signal.SIGTERM):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "AllenNLP never installed its SIGTERM handler"
        time.sleep(0.005)
    _, err = signalled(process, signal.SIGTERM, timeout=60)
    assert process.returncode == 1, err[-3000:]
    assert err.rstrip().endswith("allennlp.common.util.SigTermReceived"), err[-3000:]
    assert "stopped by" not in err, err[-3000:]
    assert os.listdir(output.parent) == []
