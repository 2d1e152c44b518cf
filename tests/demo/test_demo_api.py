"""The demo's JSON API on the fixture-trained models: the same JSON as ``allennlp predict``, and every
bad input answered with its 4xx and a message naming the key, while the server keeps serving."""

import json

import pytest

from tests.demo.conftest import BASELINE, TASK_NAMES
from tests.demo.http_client import get_json, request


def test_every_task_answers_what_its_predictor_answers(demo_url, demo_models):
    for model in demo_models:
        record = model.task.example()
        status, answer = request(f"{demo_url}api/{model.name}/predict", record)
        assert status == 200, answer
        # `allennlp predict` writes json.dumps(predictor.predict_json(line)) per line
        assert answer == json.loads(json.dumps(model.predictor.predict_json(record))), model.name


def test_health_and_models_for_scripts(demo_url, demo_models):
    assert get_json(f"{demo_url}api/health") == (
        200,
        {"status": "ok", "models": {name: 0 for name in TASK_NAMES + [BASELINE]}, "bilm": True},
    )
    status, models = get_json(f"{demo_url}api/models")
    assert status == 200
    assert [(m["name"], m["task"]) for m in models] == [(n, n) for n in TASK_NAMES] + [(BASELINE, "sst5")]
    by_name = {m["name"]: m for m in models}
    assert [mix["representation"] for mix in by_name["squad"]["mixing_weights"]] == ["input", "output"]
    assert by_name[BASELINE]["mixing_weights"] == [] and by_name[BASELINE]["bilm"] == []
    assert by_name["ner"]["metric"] == "f1-measure-overall" and "best validation" in by_name["ner"]["scores"]
    for mix in by_name["sst5"]["mixing_weights"]:
        assert sum(mix["weights"]) == pytest.approx(1.0) and len(mix["weights"]) == 3


BAD_INPUTS = [
    ("ner", {"sentenc": "x"}, 422, 'input: no "sentence" key; expected'),
    ("ner", {"sentence": 3}, 422, '"sentence" is a JSON number, not a string'),
    ("ner", {"sentence": "  "}, 422, '"sentence" is only whitespace'),
    ("ner", ["John"], 422, "a JSON array, not an object"),
    ("squad", {"question": "Who?"}, 422, 'no "passage" key'),
    ("srl", {"sentence": "The cat sat .", "verbs": [7]}, 422, '"verbs"'),
    ("ner", b'{"sentence": "x"', 400, "the request body is not JSON"),
    ("ner", b'{"sentence": "\xff"}', 400, "the request body is not UTF-8 (byte 15)"),
    ("ner", b"[" * 100_000, 400, "nested too deeply"),
    ("ner", {"sentence": "a " * 10_001}, 413, "10,001 tokens in the sentence, more than the ner predictor's"),
    ("snli", {"premise": "x", "hypothesis": "y " * 5_001}, 413, "tokens in the hypothesis, more than"),
    ("ner", {"sentence": "a" * 1_000_001}, 413, "more than the demo's limit of 1,000,000"),
    ("parser", {"sentence": "x"}, 404, "no model named 'parser'; this demo serves ner, srl"),
]


@pytest.mark.parametrize("name, body, status, message", BAD_INPUTS)
def test_bad_inputs_get_a_4xx_that_says_what_is_wrong(demo_url, name, body, status, message):
    answer_status, answer = request(f"{demo_url}api/{name}/predict", body)
    assert (answer_status, list(answer)) == (status, ["error"])
    assert message in answer["error"] and "Traceback" not in answer["error"]
    assert request(f"{demo_url}api/ner/predict", {"sentence": "Anna lives in Oslo ."})[0] == 200


def test_wrong_methods_and_paths_answer_json_errors(demo_url):
    assert get_json(f"{demo_url}api/ner/predict") == (405, {"error": "GET /api/ner/predict: Method Not Allowed"})
    assert get_json(f"{demo_url}api/nothing") == (404, {"error": "GET /api/nothing: Not Found"})
    assert request(f"{demo_url}api/health", {}) == (405, {"error": "POST /api/health: Method Not Allowed"})
