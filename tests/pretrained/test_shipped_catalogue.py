"""The models the package ships (elmo_tasks/pretrained/TASK/), against the committed run records they were
made from: the metrics they show are their records', the run is the best of its records by validation, and
the card says so. Nothing here trains or loads a model: a later run recorded without shipping again, or a
card edited by hand, fails here."""

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from elmo_tasks.bilm.references import PACKAGE_ROOT
from elmo_tasks.pretrained.catalogue import shipped_models
from tests.conftest import ROOT

SHIPPED = shipped_models(PACKAGE_ROOT / "pretrained")
RECORDS = ROOT / "docs" / "results" / "records"


def _committed_records(model: Any) -> List[Dict[str, Any]]:
    """The committed records of the shipped model's task, variant and budget that used the same biLM and
    data split (SQuAD's other cross-validation folds are other test sets: never compared)."""
    facts = model.facts
    shipped = json.loads((model.folder / "record.json").read_text(encoding="utf-8"))
    folder = RECORDS / facts["budget"] / facts["task"] / facts["variant"]
    records = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))]
    return [
        record
        for record in records
        if record["bilm_weights_sha256"] == facts["bilm_weights_sha256"] and record["split"] == shipped["split"]
    ]


def test_the_package_ships_at_least_the_ner_model():
    assert "ner" in {model.name for model in SHIPPED}


@pytest.mark.parametrize("model", SHIPPED, ids=[model.name for model in SHIPPED])
def test_a_shipped_model_shows_its_records_metrics(model):
    facts = model.facts
    record = json.loads((model.folder / "record.json").read_text(encoding="utf-8"))
    committed = RECORDS / facts["budget"] / facts["task"] / facts["variant"] / f"{facts['run_name']}.json"
    # the record shipped beside the model is the committed one, whole
    assert json.loads(committed.read_text(encoding="utf-8")) == record
    assert (record["task"], record["variant"], record["run_name"], record["seed"]) == (
        facts["task"],
        facts["variant"],
        facts["run_name"],
        facts["seed"],
    )
    assert facts["validation"] == record["best_validation"]
    test_value = record["test_metrics"]["test"][facts["metric"]] * facts["scale"]
    assert facts["test_as_recorded"] == pytest.approx(test_value, abs=1e-9)
    assert facts["best_epoch"] == record["best_epoch"]
    assert facts["bilm_weights_sha256"] == record["bilm_weights_sha256"]
    assert facts["archive_bytes"] == model.archive.stat().st_size


@pytest.mark.parametrize("model", SHIPPED, ids=[model.name for model in SHIPPED])
def test_a_shipped_model_is_its_tasks_best_run_by_validation_among_the_committed_records(model):
    facts = model.facts
    committed = {record["run_name"]: record["best_validation"] for record in _committed_records(model)}
    assert {entry["run_name"]: entry["validation"] for entry in facts["chosen_from"]} == committed
    assert committed[facts["run_name"]] == max(committed.values())


@pytest.mark.parametrize("model", SHIPPED, ids=[model.name for model in SHIPPED])
def test_a_shipped_models_card_names_its_metrics_and_run(model):
    facts = model.facts
    card = model.card.read_text(encoding="utf-8")
    assert f"elmo_tasks:pretrained/{model.name}" in card
    assert f"{facts['test']:.2f}" in card and f"{facts['validation']:.2f}" in card
    assert facts["bilm_weights_sha256"] in card
    assert "not a production model" in card


def test_every_shipped_folder_is_listed():
    """A folder of the catalogue with a model but no ``shipped.json`` (a copy by hand) would not be listed."""
    folders = [entry for entry in (PACKAGE_ROOT / "pretrained").iterdir() if (entry / "model.tar.gz").is_file()]
    assert sorted(entry.name for entry in folders) == sorted(model.name for model in SHIPPED)
    assert all(isinstance(model.folder, Path) for model in SHIPPED)


@pytest.mark.parametrize("model", SHIPPED, ids=[model.name for model in SHIPPED])
def test_a_shipped_models_card_is_what_its_record_and_facts_write(model):
    """The card is written from ``record.json`` and ``shipped.json``; a card that differs was edited by hand
    or written by an older card writer, and shipping again would change it."""
    from elmo_tasks.reproduction.model_card import card_text

    record = json.loads((model.folder / "record.json").read_text(encoding="utf-8"))
    assert model.card.read_text(encoding="utf-8") == card_text(record, model.facts)


def test_a_cards_python_example_stays_formatted_however_long_its_input(tmp_path):
    """``make lint`` runs ``ruff format --check`` over the package, cards' code blocks included: a card
    written with a long example input must already be in ruff's layout (the SQuAD card once was not)."""
    import shutil
    import subprocess
    import sys

    from elmo_tasks.reproduction.model_card import card_text

    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).is_file():
        pytest.skip("ruff is not installed (it is in requirements/test.txt)")
    squad = next((model for model in SHIPPED if model.name == "squad"), None)
    if squad is None:
        pytest.skip("the SQuAD model, whose example input is the longest, is not shipped")
    record = json.loads((squad.folder / "record.json").read_text(encoding="utf-8"))
    card = tmp_path / "MODEL_CARD.md"
    card.write_text(card_text(record, squad.facts), encoding="utf-8")
    result = subprocess.run(
        [ruff, "format", "--check", "--line-length", "120", str(card)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
