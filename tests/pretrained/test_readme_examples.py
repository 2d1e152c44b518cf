"""The README's prediction examples (issue 57): one ``echo '{...}' | allennlp predict elmo_tasks:pretrained/NAME``
line for every model the package ships, each naming that model's predictor and giving an input it answers.
The lines are run in-process through ``Predictor.from_path`` on the same name, which is what ``allennlp
predict`` does with them (one input: ``predict_json``); the whole command, from another directory, is the
slow test in test_shipped_models.py."""

import json
import re
from typing import Any, Callable, Dict, List, Tuple

import pytest

from elmo_tasks.pretrained.catalogue import ROOT_VARIABLE, shipped_models
from tests.conftest import ROOT

EXAMPLE = re.compile(
    r"^echo '(?P<input>\{.*\})' \| "
    r"allennlp predict elmo_tasks:pretrained/(?P<name>\w+) - --predictor (?P<predictor>\w+)$",
    re.MULTILINE,
)

# What each task's answer must hold for the example to show something (an empty answer would pass a
# check of the keys alone).
SHOWS_SOMETHING: Dict[str, Callable[[Dict[str, Any]], bool]] = {
    "ner": lambda output: any(tag != "O" for tag in output["tags"]),
    "sst5": lambda output: bool(output["label"]),
    "squad": lambda output: bool(output["answer"].strip()),
    "snli": lambda output: output["label"] in {"entailment", "neutral", "contradiction"},
    "srl": lambda output: any("B-V" in verb["tags"] for verb in output["verbs"]),
    "coref": lambda output: bool(output["clusters"]),
}


def readme_examples() -> List[Tuple[str, str, Dict[str, Any]]]:
    """(model name, predictor, input) of each example line in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(m["name"], m["predictor"], json.loads(m["input"])) for m in EXAMPLE.finditer(text)]


def test_every_shipped_model_has_one_readme_example_naming_its_predictor(monkeypatch):
    monkeypatch.delenv(ROOT_VARIABLE, raising=False)  # the package's own catalogue
    examples = readme_examples()
    shipped = {model.name: model.facts["predictor"] for model in shipped_models()}
    assert sorted(name for name, _, _ in examples) == sorted(shipped)
    for name, predictor, _ in examples:
        assert predictor == shipped[name], name


@pytest.mark.parametrize("name, predictor, example", readme_examples(), ids=lambda value: str(value)[:12])
def test_a_readme_example_gets_an_answer_from_the_shipped_model(name, predictor, example, monkeypatch):
    monkeypatch.delenv(ROOT_VARIABLE, raising=False)
    from allennlp.predictors import Predictor

    output = Predictor.from_path(f"elmo_tasks:pretrained/{name}", predictor).predict_json(example)
    assert SHOWS_SOMETHING[name](output), (name, output)
