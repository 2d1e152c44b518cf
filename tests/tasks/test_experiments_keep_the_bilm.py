"""Every ELMo experiment leaves the pretrained biLM exactly as loaded when it builds its model.

An initializer regex written for the task's own encoders (e.g. an unanchored '.*encoder.*bias')
also matches the biLM's ``token_encoder`` parameters and silently overwrites pretrained weights:
this caught SNLI zeroing the char-CNN biases. Building the model is enough to see it.
"""

import os
from pathlib import Path

import pytest
import torch
from allennlp.common import Params

from elmo_tasks.bilm import load_bilm
from elmo_tasks.modules import find_elmo_embedder
from tests.conftest import OPTIONS_FILE, ROOT, WEIGHT_FILE
from tests.tasks.experiment_case import build_fixture_model

ELMO_EXPERIMENTS = sorted(p.name for p in (ROOT / "experiments").glob("*_elmo.jsonnet"))


@pytest.mark.parametrize("experiment", ELMO_EXPERIMENTS)
def test_building_the_model_keeps_the_pretrained_bilm(experiment, monkeypatch):
    monkeypatch.chdir(ROOT)
    model, _ = build_fixture_model(experiment)
    elmo = find_elmo_embedder(model)
    assert elmo is not None, f"{experiment} has no fast_elmo embedder"
    reference = load_bilm(OPTIONS_FILE, WEIGHT_FILE).state_dict()
    for name, value in elmo.bilm.state_dict().items():
        assert torch.equal(value, reference[name]), f"{experiment} changed the biLM parameter {name}"


def test_every_task_has_an_elmo_experiment():
    assert len(ELMO_EXPERIMENTS) >= 5 and all(Path(ROOT / "experiments" / e).exists() for e in ELMO_EXPERIMENTS)


@pytest.mark.parametrize("experiment", ELMO_EXPERIMENTS)
def test_every_elmo_experiment_archives_its_bilm_options(experiment):
    """Without it, an archive trained with a non-shipped biLM needs that biLM's files to load."""
    env = {**os.environ, "ELMO_TASKS_DATA": "fixtures"}
    params = Params.from_file(str(ROOT / "experiments" / experiment), ext_vars=env)
    assert "elmo_bilm" in params.get("include_in_archive", [])


# Task models that drop out their whole embedded input (ELMo included) themselves, and that dropout's
# dotted key in the model (NER's encoder drops out the input of each BiLSTM layer).
MODEL_INPUT_DROPOUT = {
    "ner_elmo.jsonnet": "encoder.input_dropout",
    "snli_elmo.jsonnet": "dropout",
    "coref_elmo.jsonnet": "lexical_dropout",
    "sst5_elmo.jsonnet": "embedding_dropout",
}


@pytest.mark.parametrize("data", ["fixtures", "full"])
@pytest.mark.parametrize("experiment", sorted(MODEL_INPUT_DROPOUT))
def test_elmo_is_dropped_out_once_where_the_model_drops_out_its_input(experiment, data):
    """ELMo's own dropout inside such a model dropped its features out twice (NER and SNLI fell behind their
    baselines, docs/RESULTS.md), so those experiments leave the dropout to the model."""
    env = {**os.environ, "ELMO_TASKS_DATA": data}
    model = Params.from_file(str(ROOT / "experiments" / experiment), ext_vars=env).as_dict()["model"]
    dropout = model
    for key in MODEL_INPUT_DROPOUT[experiment].split("."):
        dropout = dropout[key]
    assert dropout > 0
    assert model["text_field_embedder"]["token_embedders"]["elmo"]["dropout"] == 0
