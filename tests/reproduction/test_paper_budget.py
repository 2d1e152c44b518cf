"""The `paper` budget: the paper's word vectors through ELMO_TASKS_WORD_VECTORS, and its epochs,
patience and sizes as overrides of keys the experiments really have."""

import json
from typing import Any, Dict

import _jsonnet
import pytest

from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.experiments import LIBRARY
from elmo_tasks.reproduction.task_table import GLOVE_DIR, TASKS
from tests.conftest import ROOT

PAPER_VECTORS = {
    "squad": "glove.840B.300d.txt",
    "snli": "glove.840B.300d.txt",
    "srl": "glove.6B.100d.txt",
    "coref": "glove.840B.300d.txt",
    "ner": "glove.6B.50d.txt",
    "sst5": "glove.840B.300d.txt",
}


def _value(config: Dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        config = config[key]
    return config


@pytest.mark.parametrize("task", sorted(PAPER_VECTORS))
def test_the_paper_budget_names_the_papers_vectors_and_overrides_real_keys(task):
    budget = TASKS[task].budgets["paper"]
    assert budget.data == "full" and budget.seeds == 5
    assert budget.env["ELMO_TASKS_WORD_VECTORS"] == str(GLOVE_DIR / PAPER_VECTORS[task])
    for variant, config in TASKS[task].configs.items():
        env = {**DEFAULTS, "ELMO_TASKS_DATA": "full", **budget.env}
        resolved = json.loads(_jsonnet.evaluate_file(str(ROOT / config), ext_vars=env, jpathdir=[str(LIBRARY)]))
        tokens = resolved["model"]["text_field_embedder"]["token_embedders"]["tokens"]
        assert tokens["pretrained_file"] == budget.env["ELMO_TASKS_WORD_VECTORS"], variant
        for key, value in budget.overrides.items():
            assert _value(resolved, key) != value, f"{task} {variant}: {key} already is {value}"


# The audit's section of each task in docs/PAPER.md, by the start of its heading.
AUDIT_SECTIONS = {
    "squad": "### SQuAD",
    "snli": "### SNLI",
    "srl": "### SRL",
    "coref": "### Coreference",
    "ner": "### NER",
    "sst5": "### SST-5",
}


def _audit_row(task: str, setting: str) -> list:
    """The cells of the row ``setting`` in the task's audit table of docs/PAPER.md."""
    text = (ROOT / "docs" / "PAPER.md").read_text()
    section = text.split(AUDIT_SECTIONS[task], 1)[1].split("\n### ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith(f"| {setting} |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_audit_gives_the_mini_budgets_epoch_cap_and_patience(task):
    # columns: setting, paper, allennlp-models, ours `paper`, ours `mini`, why it differs
    overrides = TASKS[task].budgets["mini"].overrides
    assert _audit_row(task, "epochs")[4].startswith(f"at most {overrides['trainer.num_epochs']}")
    assert _audit_row(task, "patience")[4].split(" ")[0] == str(overrides["trainer.patience"])
