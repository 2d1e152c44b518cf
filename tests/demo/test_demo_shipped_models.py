"""``elmo-tasks elmo-demo`` with no ARCHIVE (issue 57): the package's own shipped models, every one of them,
served and answering their task's example as ``Predictor.from_path`` on the same name does. Unlike the
rest of tests/demo, which serves tiny fixture-trained archives, this reads the real catalogue of the
checkout (elmo_tasks/pretrained/), so a shipped model that the demo cannot load or serve fails here."""

import json

import pytest

from elmo_tasks.demo.app import create_app
from elmo_tasks.demo.bilm_neighbours import spacy_tokenizer
from elmo_tasks.demo.loaded_models import load_models
from elmo_tasks.demo.serve_command import _shipped_archives
from elmo_tasks.demo.server import DemoServer
from elmo_tasks.pretrained.catalogue import ROOT_VARIABLE, shipped_models
from tests.demo.http_client import get_json, request


def test_the_demo_without_archives_serves_every_shipped_model_as_its_predictor_answers(neighbours, monkeypatch):
    monkeypatch.delenv(ROOT_VARIABLE, raising=False)  # the package's own catalogue
    shipped = shipped_models()
    if not shipped:
        pytest.skip("no task model is shipped in this checkout")
    assert _shipped_archives() == [f"{model.name}={model.reference}" for model in shipped]
    models = load_models(_shipped_archives())
    assert [model.name for model in models] == [model.name for model in shipped]

    from allennlp.predictors import Predictor

    server = DemoServer("127.0.0.1", 0)
    server.start(create_app(models, neighbours, spacy_tokenizer()))
    try:
        status, listed = get_json(f"{server.url}api/models")
        assert status == 200
        for model, served in zip(shipped, models, strict=True):
            example = served.task.example()
            status, answer = request(f"{server.url}api/{model.name}/predict", example)
            assert status == 200, (model.name, answer)
            by_name = Predictor.from_path(model.reference, model.facts["predictor"])
            assert answer == json.loads(json.dumps(by_name.predict_json(example))), model.name
    finally:
        server.stop()
    assert [(entry["name"], entry["scores"]["test"]) for entry in listed] == [
        (model.name, pytest.approx(model.facts["test"] / 100)) for model in shipped
    ]
