"""``allennlp elmo-demo``: its help, its one-line errors (before any model loads), and a real run in a
subprocess, named with NAME=ARCHIVE, answering on a free port and stopping on Ctrl-C."""

import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from elmo_tasks.demo.__main__ import main as module_main
from tests.commands import test_command_help as help_checks
from tests.conftest import ROOT, run_allennlp
from tests.demo.http_client import get_json, page_status, request


def test_every_default_is_shown_once():
    help_checks.test_every_default_is_shown_once_in_our_form("elmo-demo")


def test_python_dash_m_has_the_same_arguments(capsys):
    with pytest.raises(SystemExit) as done:
        module_main(["--help"])
    assert done.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "python -m elmo_tasks.demo" in shown and "port to listen on (0: any free port) (default: 8000)" in shown


def _demo_error(capsys, *arguments: str) -> str:
    with pytest.raises(SystemExit) as done:
        run_allennlp("elmo-demo", *arguments)
    assert done.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("elmo-demo: error: "), lines
    return lines[0]


def test_mistakes_are_one_line_before_anything_loads(capsys, tmp_path, demo_archives):
    assert "none.tar.gz does not exist" in _demo_error(capsys, str(tmp_path / "none.tar.gz"))
    ner = str(demo_archives["ner"])
    assert "two archives would be served as 'ner'" in _demo_error(capsys, ner, ner)
    assert "--port must be from 0 to 65535, got 70000" in _demo_error(capsys, ner, "--port", "70000")
    missing = str(tmp_path / "options.json")
    assert f"--options-file: {missing} is not a file" in _demo_error(capsys, ner, "--options-file", missing)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert f"cannot listen on 127.0.0.1:{port}" in _demo_error(capsys, ner, "--port", port, "--no-bilm")


def test_the_command_serves_until_ctrl_c(demo_archives):
    """The real thing: `python -m elmo_tasks elmo-demo` (the `elmo-tasks` entry point) in a subprocess."""
    command = [sys.executable, "-m", "elmo_tasks", "elmo-demo", f"mine={demo_archives['sst5']}", "--port", "0"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    server = subprocess.Popen(
        [*command, "--no-bilm"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("elmo-demo: serving mine at http://127.0.0.1:"), (line, server.stderr.read())
        url = line.split(" at ")[1].split()[0]
        assert get_json(f"{url}api/health") == (200, {"status": "ok", "models": {"mine": 0}, "bilm": False})
        status, answer = request(f"{url}api/mine/predict", {"sentence": "A fine film ."})
        assert status == 200 and set(answer) == {"tokens", "label", "label_probs"}
        assert page_status(f"{url}bilm") == 404 and page_status(url) == 200
    finally:
        server.send_signal(signal.SIGINT)
        _, errors = server.communicate(timeout=60)
    assert server.returncode == 0 and errors.strip().splitlines()[-1] == STOPPED_LINE.format("SIGINT")


STOPPED_LINE = "elmo-demo: stopped by {}; nothing is served any more (start it again to serve)"


def test_sigterm_stops_the_demo_with_one_line_and_answers_the_request_in_flight(demo_archives):
    """`kill PID`: a request in flight is answered, then one line and status 0 (it was a traceback ending
    in AllenNLP's SigTermReceived)."""
    command = [sys.executable, "-m", "elmo_tasks", "elmo-demo", f"mine={demo_archives['sst5']}", "--port", "0"]
    server = subprocess.Popen(
        [*command, "--no-bilm"],
        cwd=ROOT,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().split(" at ")[1].split()[0]
        with ThreadPoolExecutor(1) as pool:
            in_flight = pool.submit(request, f"{url}api/mine/predict", {"sentence": "A fine film ."})
            time.sleep(0.5)
            server.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            status, answer = in_flight.result(timeout=60)
        assert status == 200 and "label" in answer
        _, errors = server.communicate(timeout=60)
    finally:
        server.kill()
    assert time.monotonic() - sent < 15
    assert "Traceback" not in errors and errors.strip().splitlines()[-1] == STOPPED_LINE.format("SIGTERM")
    assert server.returncode == 0
