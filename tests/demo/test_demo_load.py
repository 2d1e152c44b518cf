"""A bounded load test on 127.0.0.1: 200 requests from 20 concurrent clients to the fixture-trained
models, bad inputs mixed in. Every request must get its right answer: the good ones the model's
prediction, the bad ones their 4xx, while the health check keeps answering."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tests.demo.http_client import get_json, request

REQUESTS = 200
CLIENTS = 20

GOOD = [
    ("ner", {"sentence": "Anna Berg works for Nokia in Espoo ."}),
    ("sst5", {"sentence": "A dull and lifeless film ."}),
    ("snli", {"premise": "A dog runs on the beach .", "hypothesis": "An animal is outside ."}),
    ("squad", {"question": "Where did she go?", "passage": "Maria went to Lisbon in May ."}),
    ("srl", {"sentence": "The boy threw the ball .", "verbs": [2]}),
    ("coref", {"document": "Tom met Ann . He liked her ."}),
]
# (model, body, expected status, what the error must say)
BAD = [
    ("ner", {"sentenc": "typo"}, 422, '"sentence"'),
    ("snli", {"premise": "only one"}, 422, '"hypothesis"'),
    ("sst5", b"not json", 400, "not JSON"),
    ("ner", {"sentence": "w " * 10_001}, 413, "more than the ner predictor's limit"),
    ("unknown", {"sentence": "x"}, 404, "no model named 'unknown'"),
]


def _cases():
    """REQUESTS cases, good and bad interleaved (one bad in four)."""
    cases = []
    for i in range(REQUESTS):
        if i % 4 == 3:
            cases.append(("bad", BAD[(i // 4) % len(BAD)]))
        else:
            cases.append(("good", GOOD[i % len(GOOD)]))
    return cases


def _poll_health(url: str, stop: threading.Event, answers: list) -> None:
    while not stop.is_set():
        answers.append(get_json(f"{url}api/health", timeout=30)[0])
        time.sleep(0.05)


def test_200_requests_from_20_clients_all_get_their_right_answer(demo_url):
    expected = {}
    for name, record in GOOD:
        status, answer = request(f"{demo_url}api/{name}/predict", record)
        assert status == 200, answer
        expected[name] = answer

    def send(case):
        kind, (name, body, *rest) = case
        return case, request(f"{demo_url}api/{name}/predict", body, timeout=120)

    stop, health = threading.Event(), []
    poller = threading.Thread(target=_poll_health, args=(demo_url, stop, health))
    poller.start()
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(CLIENTS) as clients:
            results = list(clients.map(send, _cases()))
    finally:
        stop.set()
        poller.join()
    elapsed = time.monotonic() - started
    assert len(results) == REQUESTS and elapsed < 300
    for (kind, (name, _body, *rest)), (status, answer) in results:
        if kind == "good":
            assert (status, answer) == (200, expected[name]), (name, status, answer)
        else:
            want_status, message = rest
            assert status == want_status and message in answer["error"], (name, status, answer)
    assert health and set(health) == {200}
    assert get_json(f"{demo_url}api/health")[1]["models"] == {name: 0 for name in expected} | {"sst5_baseline": 0}
