"""The demo server under concurrent requests, with stand-in models whose timing the tests control:
predictions run off the event loop, one at a time per model, in a bounded queue."""

import http.client
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.demo.http_client import get_json, request
from tests.demo.stub_models import StubPredictor, serve_stubs


def test_a_slow_prediction_does_not_hold_up_the_health_check_or_other_models():
    slow, quick = StubPredictor(), StubPredictor(released=True)
    server = serve_stubs({"slow": slow, "quick": quick})
    try:
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(request, f"{server.url}api/slow/predict", {"sentence": "wait"})
            assert slow.entered.wait(10)
            started = time.monotonic()
            assert get_json(f"{server.url}api/health", timeout=10) == (
                200,
                {"status": "ok", "models": {"slow": 1, "quick": 0}, "bilm": False},
            )
            assert request(f"{server.url}api/quick/predict", {"sentence": "now"}, timeout=10) == (
                200,
                {"echo": {"sentence": "now"}},
            )
            assert time.monotonic() - started < 10 and not pending.done()
            slow.release.set()
            assert pending.result(timeout=30) == (200, {"echo": {"sentence": "wait"}})
    finally:
        slow.release.set()
        server.stop()


def test_one_model_runs_one_request_at_a_time():
    stub = StubPredictor(released=True, pause=0.05)
    server = serve_stubs({"stub": stub})
    try:
        with ThreadPoolExecutor(6) as pool:
            records = [{"sentence": str(i)} for i in range(6)]
            answers = list(pool.map(lambda r: request(f"{server.url}api/stub/predict", r), records))
        assert answers == [(200, {"echo": record}) for record in records]
        assert stub.most_at_once == 1
    finally:
        server.stop()


def test_past_the_queue_limit_requests_are_refused_at_once():
    stub = StubPredictor()
    server = serve_stubs({"stub": stub}, max_waiting=2)
    try:
        with ThreadPoolExecutor(2) as pool:
            first = [pool.submit(request, f"{server.url}api/stub/predict", {"n": i}) for i in range(2)]
            deadline = time.monotonic() + 10
            while get_json(f"{server.url}api/health")[1]["models"]["stub"] < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            status, answer = request(f"{server.url}api/stub/predict", {"n": 3}, timeout=10)
            assert status == 503 and "the stub model has 2 requests waiting, its limit" in answer["error"]
            stub.release.set()
            assert sorted(f.result(timeout=30)[1]["echo"]["n"] for f in first) == [0, 1]
    finally:
        stub.release.set()
        server.stop()


def test_a_failing_model_answers_500_in_one_line_and_the_server_goes_on():
    server = serve_stubs({"stub": StubPredictor(released=True)})
    try:
        status, answer = request(f"{server.url}api/stub/predict", {"fail": True})
        assert status == 500 and answer["error"].startswith("the stub model failed on this input (RuntimeError: ")
        assert request(f"{server.url}api/stub/predict", {"fail": False}) == (200, {"echo": {"fail": False}})
    finally:
        server.stop()


def test_a_chunked_body_is_cut_off_at_the_size_limit():
    """No Content-Length to go by: the body is counted as it arrives."""
    stub = StubPredictor(released=True)
    server = serve_stubs({"stub": stub}, max_request_bytes=100)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        chunks = iter([b'{"sentence": "', b"a" * 60, b"a" * 60, b'"}'])
        connection.request("POST", "/api/stub/predict", body=chunks, encode_chunked=True)
        response = connection.getresponse()
        assert response.status == 413 and b"more than the demo's limit of 100" in response.read()
        connection.close()
        assert request(f"{server.url}api/stub/predict", {"sentence": "short"})[0] == 200
        assert not stub.entered.is_set() or stub.most_at_once == 1
    finally:
        server.stop()


def test_a_stopped_server_has_no_thread_left_and_refuses_connections():
    before = set(threading.enumerate())
    server = serve_stubs({"stub": StubPredictor(released=True)})
    assert request(f"{server.url}api/stub/predict", {"sentence": "x"})[0] == 200
    server.stop()
    left = set(threading.enumerate()) - before
    for thread in left:  # AnyIO's worker threads are told to end with the event loop, not joined by it
        thread.join(timeout=15)
    assert {thread for thread in left if thread.is_alive()} == set()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=5)
