"""Every task predictor checks its input lines the same way (JsonLinesPredictor)."""

import pytest
from allennlp.predictors import Predictor

import elmo_tasks.plugin  # noqa: F401
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError

TASK_PREDICTORS = ["snli_pair", "ner_tagger", "sst_sentiment", "srl", "squad_qa", "coref"]


@pytest.mark.parametrize("name", TASK_PREDICTORS)
def test_a_missing_key_names_the_keys_expected(name):
    cls = Predictor.by_name(name)
    assert issubclass(cls, JsonLinesPredictor) and cls.input_keys
    predictor = cls.__new__(cls)  # check_input needs no model
    with pytest.raises(PredictorInputError, match="missing or not a string") as error:
        predictor.check_input({"unrelated": 1})
    for key in cls.input_keys:
        assert f'"{key}"' in str(error.value)
    with pytest.raises(PredictorInputError, match="expected a JSON object"):
        predictor.check_input(["not", "an", "object"])
