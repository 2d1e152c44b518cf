"""One exception per kind of mistake, the same for all six tasks, each naming the place to fix.

- a config mistake is a ``ConfigurationError`` naming the config key;
- a bad line of a data file is a ``DataFileError`` naming the file and line (SQuAD's json: the
  line of a syntax error, or the question id);
- a bad predictor input line is a ``PredictorInputError`` naming the file and line from Python
  (``check_input_file``), and one line ``allennlp predict: FILE, line N: ...`` with exit status 2
  from the command line.

Readers and predictors are built from the experiment configs on small files written here; the
predictors get a stand-in model (input checks never run it), so the whole module takes seconds.
"""

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH
from elmo_tasks.tasks.coref.predictor import CorefPredictor
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.ner.predictor import NerTaggerPredictor
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tasks.snli.predictor import SnliPairPredictor
from elmo_tasks.tasks.squad.predictor import SquadQaPredictor
from elmo_tasks.tasks.srl.predictor import SrlPredictor
from elmo_tasks.tasks.sst.predictor import SstSentimentPredictor
from tests.conftest import ROOT

TASKS = ["ner", "srl", "coref", "squad", "snli", "sst5"]


def _params(task: str, variant: str = "elmo", overrides: Optional[Dict[str, Any]] = None) -> Params:
    """The task's experiment config on the fixtures (the tests' tiny biLM), with ``-o``-style overrides."""
    return Params.from_file(
        str(ROOT / "experiments" / f"{task}_{variant}.jsonnet"),
        json.dumps(overrides or {}),
        ext_vars={**os.environ, "ELMO_TASKS_DATA": "fixtures"},
    )


# ---- config mistakes: ConfigurationError naming the key ------------------------------------------

READER_MISTAKES = {
    "ner": ("convert_to_coding_scheme", "BIOES"),
    "srl": ("holdout_modulus", 1),
    "coref": ("max_span_width", 0),
    "squad": ("passage_length_limit", 0),
    "snli": ("holdout_modulus", 1),
    "sst5": ("phrases", "leaves"),
}


@pytest.mark.parametrize("task", TASKS)
def test_a_bad_reader_setting_is_a_configuration_error_naming_it(task):
    key, value = READER_MISTAKES[task]
    params = _params(task, "baseline", {f"dataset_reader.{key}": value})
    with pytest.raises(ConfigurationError, match=key):
        DatasetReader.from_params(params.pop("dataset_reader"))


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_elmo_size_is_a_configuration_error_naming_the_key(task):
    """The tests' biLM has 3 layers: 2 fixed layer weights cannot be right."""
    params = _params(task, "elmo", {f"{ELMO_EMBEDDER_PATH}.fixed_layer_weights": [1, 1]})
    elmo = params
    for key in ELMO_EMBEDDER_PATH.split("."):
        elmo = elmo[key]
    elmo.pop("scalar_mix_parameters", None)  # else the error is that both are given
    with pytest.raises(ConfigurationError, match=r"fixed_layer_weights needs 3 non-negative weights.*got \[1, 1\]"):
        Model.from_params(vocab=Vocabulary(), params=params.pop("model"))


@pytest.mark.parametrize("task", TASKS)
def test_an_unknown_model_key_is_a_configuration_error_naming_it(task):
    params = _params(task, "baseline", {"model.hidden_sise": 7})
    with pytest.raises(ConfigurationError, match="hidden_sise"):
        Model.from_params(vocab=Vocabulary(), params=params.pop("model"))


# ---- data files: DataFileError naming the file and line -----------------------------------------

SRL_GOOD = "The DT (S1(S* * - - (A0*\ndog NN * * - - *)\n"
COREF_HEAD = "#begin document (nw/x); part 000\n" + "nw/x 0 0 Peter XX * - - - - * (1)\n"
BAD_DATA = {
    # the bad line is line 3 of each file
    "ner": ("train.txt", "EU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP\n", "3 columns, expected 4"),
    "srl": ("train.txt", SRL_GOOD + "chased VBD * * 01\n", "5 columns, but the sentence starting at line 1 has 7"),
    "coref": (
        "train.gold_conll",
        COREF_HEAD + "nw/x 0 1 won XX * - - - - * (2\n#end document\n",
        "(document (nw/x); part 000): the mention of entity 2 opened here ('(2') is never closed before line 4",
    ),
    "squad": ("train.json", '{"version": "1.1",\n "data": [\n  {"title": "x", "paragraphs": [}]}\n', "not valid JSON"),
    "snli": (
        "train.jsonl",
        json.dumps({"sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "entailment"})
        + "\n\n"
        + '{"sentence1": "A cat sits.", "sentence2": "A cat sleeps.", "gold_label": "maybe"}\n',
        "unknown gold_label 'maybe'",
    ),
    "sst5": ("train.txt", "(3 (2 It) (4 rocks))\n(2 fine)\n(4 (2 not) (9 bad))\n", "found '9'"),
}


@pytest.mark.parametrize("task", TASKS)
def test_a_bad_data_line_is_a_data_file_error_naming_the_file_and_line(task, tmp_path):
    name, text, problem = BAD_DATA[task]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    reader_params = _params(task, "baseline").pop("dataset_reader")
    if task == "ner":  # the configs' `conll2003` is AllenNLP's, which names no line; ours checks first
        reader_params["type"] = "ner_reader"
    reader = DatasetReader.from_params(reader_params)
    with pytest.raises(DataFileError) as error:
        list(reader.read(str(path)))
    assert str(error.value).startswith(f"{path}, line 3"), error.value
    assert problem in str(error.value)


def test_a_bad_squad_answer_names_the_file_and_the_question_id(tmp_path):
    """The official SQuAD files are one line of json: the question id is the place to look."""
    article = {"title": "t", "paragraphs": [{"context": "The cat sat.", "qas": []}]}
    question = {"id": "q7", "question": "Who sat?", "answers": [{"text": "dog", "answer_start": 4}]}
    article["paragraphs"][0]["qas"].append(question)
    path = tmp_path / "train.json"
    path.write_text(json.dumps({"version": "1.1", "data": [article]}), encoding="utf-8")
    reader = DatasetReader.from_params(_params("squad", "baseline").pop("dataset_reader"))
    expected = f"^{re.escape(str(path))}, question id q7: answer 'dog' is not at character 4"
    with pytest.raises(DataFileError, match=expected):
        list(reader.read(str(path)))


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path):
    path = tmp_path / "train.jsonl"
    good = json.dumps({"sentence1": "A dog runs.", "sentence2": "It moves.", "gold_label": "neutral"})
    path.write_bytes(good.encode() + b"\n" + good.replace("dog", "caf\xe9").encode("latin-1") + b"\n")
    reader = DatasetReader.from_params(_params("snli", "baseline").pop("dataset_reader"))
    with pytest.raises(
        DataFileError, match=rf"^{re.escape(str(path))}, line 2: bytes that are not UTF-8 \(the first at character 21\)"
    ):
        list(reader.read(str(path)))


def test_the_old_per_task_names_are_the_one_data_error():
    from elmo_tasks.probes.conll2012_words import Conll2012FormatError
    from elmo_tasks.tasks.coref.conll import ConllFormatError
    from elmo_tasks.tasks.lm.text_source import RawTextError
    from elmo_tasks.tasks.snli.reader import SnliFormatError
    from elmo_tasks.tasks.squad.reader import SquadFormatError
    from elmo_tasks.tasks.srl.props import PropsFormatError
    from elmo_tasks.tasks.srl.reader import SrlFormatError
    from elmo_tasks.tasks.sst.trees import SstTreeError

    old = [SnliFormatError, SrlFormatError, PropsFormatError, ConllFormatError, SquadFormatError, SstTreeError]
    assert all(name is DataFileError for name in old + [RawTextError, Conll2012FormatError])
    assert issubclass(DataFileError, ValueError) and not issubclass(DataFileError, ConfigurationError)


# ---- predictor inputs: PredictorInputError naming the file and line -----------------------------


class _StandInModel(Model):
    """What a Predictor needs to be built (one parameter); input checks never run a model."""

    def __init__(self) -> None:
        super().__init__(Vocabulary())
        self.weight = torch.nn.Parameter(torch.zeros(1))


PREDICTORS = {
    "ner": (NerTaggerPredictor, {"sentence": "John lives in Berlin ."}),
    "srl": (SrlPredictor, {"sentence": "The cat chased the mouse .", "verbs": [2]}),
    "coref": (CorefPredictor, {"document": "John said he would come."}),
    "squad": (SquadQaPredictor, {"question": "Who won?", "passage": "The Panthers won."}),
    "snli": (SnliPairPredictor, {"premise": "A man plays.", "hypothesis": "A man makes music."}),
    "sst5": (SstSentimentPredictor, {"sentence": "A fine film ."}),
}


def _predictor(task: str) -> JsonLinesPredictor:
    cls = PREDICTORS[task][0]
    params = _params(task, "baseline")
    reader_params = params.pop("validation_dataset_reader", None) or params.pop("dataset_reader")
    return cls(_StandInModel(), DatasetReader.from_params(reader_params))


def _input_file(task: str, directory: Path) -> Path:
    """Line 1 good, line 2 blank, line 3 without the first input key."""
    good = PREDICTORS[task][1]
    first = next(iter(PREDICTORS[task][0].input_keys))
    bad = {key: value for key, value in good.items() if key != first}
    path = directory / "input.jsonl"
    path.write_text(f"{json.dumps(good)}\n\n{json.dumps(bad)}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("task", TASKS)
def test_a_bad_input_line_is_a_predictor_input_error_naming_the_file_and_line(task, tmp_path):
    predictor = _predictor(task)
    first = next(iter(predictor.input_keys))
    path = _input_file(task, tmp_path)
    with pytest.raises(PredictorInputError) as error:
        predictor.check_input_file(str(path))
    assert str(error.value).startswith(f'{path}, line 3: no "{first}" key; expected one JSON object per line')
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(PREDICTORS[task][1]) + "\n", encoding="utf-8")
    predictor.check_input_file(str(good))  # no error


@pytest.mark.parametrize("task", TASKS)
def test_allennlp_predict_reports_the_bad_input_line_before_predicting(task, tmp_path, monkeypatch, capsys):
    """As the command builds it: the predictor reads its input file from the command line and stops there."""
    path = _input_file(task, tmp_path)
    first = next(iter(PREDICTORS[task][0].input_keys))
    monkeypatch.setattr(sys, "argv", ["allennlp", "predict", "model.tar.gz", str(path), "--batch-size", "2"])
    with pytest.raises(SystemExit) as exit_:
        _predictor(task)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f'allennlp predict: {path}, line 3: no "{first}" key; expected ') and err.count("\n") == 1, (
        err
    )
