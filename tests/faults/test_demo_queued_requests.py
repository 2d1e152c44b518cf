"""``elmo-demo`` stopped with connections still queued on its socket (issue 54): each gets a 503 with one
JSON line saying the demo stopped, never a connection reset. Connections queue while the models load
(the socket listens first) and while uvicorn finishes the requests in flight on its way out."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Tuple

import pytest

from elmo_tasks.demo.server import DemoServer
from tests.conftest import ROOT, untrained_archive
from tests.demo.http_client import request
from tests.demo.stub_models import StubPredictor, serve_stubs

STOPPED_ERROR = (
    "the demo server is stopping (SIGTERM or Ctrl-C) and answers no more requests; try again once it is started again"
)


def _queued_client(port: int) -> socket.socket:
    """A connection the server has not accepted (it sits in the listen queue) that has sent its request."""
    client = socket.create_connection(("127.0.0.1", port), timeout=30)
    body = b'{"sentence": "A fine film ."}'
    client.sendall(
        b"POST /api/mine/predict HTTP/1.1\r\nHost: demo\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        + body
    )
    return client


def _answer(client: socket.socket) -> Tuple[int, dict]:
    """The status and JSON body the client received (ConnectionResetError if it was reset)."""
    received = b""
    with client:
        while chunk := client.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_plain_close_resets_queued_connections_and_close_answers_them_503():
    bare = socket.create_server(("127.0.0.1", 0))  # what the demo did: close the listening socket
    reset = _queued_client(bare.getsockname()[1])
    bare.close()
    with pytest.raises(ConnectionResetError):
        _answer(reset)

    server = DemoServer("127.0.0.1", 0)  # listening, serving nothing yet (as while the models load)
    clients: List[socket.socket] = [_queued_client(server.port) for _ in range(3)]
    for client in clients:
        client.shutdown(socket.SHUT_WR)  # done sending: the server need not wait for more
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 2
    assert [_answer(client) for client in clients] == [(503, {"error": STOPPED_ERROR})] * 3
    server.close()  # again: nothing to do
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=5)


def test_a_connection_made_while_the_server_finishes_its_requests_gets_503():
    """uvicorn stops accepting at once and answers the request in flight; a connection made meanwhile
    waits in the queue and is answered 503 when the server closes (it was reset)."""
    stub = StubPredictor()
    server = serve_stubs({"mine": stub})
    with ThreadPoolExecutor(2) as pool:
        in_flight = pool.submit(request, f"{server.url}api/mine/predict", {"sentence": "in flight"})
        assert stub.entered.wait(30)
        stopping = pool.submit(server.stop)
        time.sleep(0.5)  # uvicorn has stopped accepting and waits for the request in flight
        queued = _queued_client(server.port)
        stub.release.set()
        assert in_flight.result(timeout=30) == (200, {"echo": {"sentence": "in flight"}})
        stopping.result(timeout=30)
    assert _answer(queued) == (503, {"error": STOPPED_ERROR})


# The real command (`python -m elmo_tasks elmo-demo`) with its model loading held, as a big model's would
# be: a request made then waits in the socket's queue when SIGTERM arrives.
_SLOW_LOADING_DEMO = textwrap.dedent(
    """
    import runpy, sys, time
    from elmo_tasks.demo import loaded_models

    real_load_models = loaded_models.load_models

    def slow_load_models(*arguments, **options):
        print("LOADING", file=sys.stderr, flush=True)
        time.sleep(120)
        return real_load_models(*arguments, **options)

    loaded_models.load_models = slow_load_models
    sys.argv = ["elmo-tasks", *sys.argv[1:]]
    runpy.run_module("elmo_tasks", run_name="__main__")
    """
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow  # an archive built and the real command started: about 13 s on the loaded 2-core machine
def test_sigterm_while_the_models_load_answers_the_queued_request_503(tmp_path):
    archive = untrained_archive("sst5_baseline", tmp_path / "sst5")
    port = _free_port()
    stderr_file = tmp_path / "stderr.txt"
    arguments = ["elmo-demo", f"mine={archive}", "--port", str(port), "--no-bilm"]
    with open(stderr_file, "wb") as stderr:
        demo = subprocess.Popen(
            [sys.executable, "-c", _SLOW_LOADING_DEMO, *arguments],
            cwd=ROOT,
            env=dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT)),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 120
        while "LOADING" not in stderr_file.read_text(encoding="utf-8", errors="replace"):
            assert demo.poll() is None, stderr_file.read_text(encoding="utf-8", errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the demo never started loading its models"
            time.sleep(0.1)
        queued = _queued_client(port)  # the socket listens before the models load: the request waits
        demo.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        answer = _answer(queued)
        demo.wait(timeout=30)
    finally:
        demo.kill()
    assert time.monotonic() - sent < 10
    assert answer == (503, {"error": STOPPED_ERROR})
    err = Path(stderr_file).read_text(encoding="utf-8")
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        "elmo-demo: stopped by SIGTERM; nothing is served any more (start it again to serve)"
    ), err[-3000:]
    assert demo.returncode == 0
