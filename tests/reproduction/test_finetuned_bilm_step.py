"""The biLM fine-tuning as a step of a budget's Table 1 runs (issue 55.4): the paper's best SNLI model read a
biLM first fine-tuned on SNLI's training text (appendix A.1), so the paper budget's SNLI ``elmo`` runs
fine-tune it first and record the fine-tuning command like any other of their commands."""

from dataclasses import replace
from pathlib import Path

import pytest

from elmo_tasks.reproduction import main
from elmo_tasks.reproduction.cli import parse_args
from elmo_tasks.reproduction.plan import Plan, from_root
from elmo_tasks.reproduction.records import load_records
from elmo_tasks.reproduction.task_table import TASKS
from tests.conftest import ROOT


def _settings(budget: str, variant: str) -> dict:
    plan = Plan(parse_args(["snli", "--budget", budget])[0])
    return plan.settings("snli", plan.variants("snli")[variant], None)


def test_the_paper_budgets_snli_elmo_reads_the_biLM_fine_tuned_on_its_training_text():
    assert TASKS["snli"].budgets["paper"].finetuned_bilm_variants == ("elmo",)
    plan = Plan(parse_args(["snli", "--budget", "paper"])[0])
    settings = _settings("paper", "elmo")
    export = from_root(plan.finetuned_bilm_dir("snli") / "run" / "elmo")
    assert settings["env"]["ELMO_WEIGHTS"] == str(export / "weights.hdf5")
    assert settings["env"]["ELMO_OPTIONS"] == str(export / "options.json")
    recipe = settings["bilm_finetuning"]
    assert recipe["text"].endswith("snli_1.0_train.jsonl") and recipe["overrides"] == {"trainer.num_epochs": 1}
    # The baseline reads no biLM; the mini budget's Table 1 ELMo runs keep the shipped biLM.
    assert "bilm_finetuning" not in _settings("paper", "baseline")
    assert _settings("paper", "baseline")["env"].get("ELMO_WEIGHTS") != str(export / "weights.hdf5")
    assert "bilm_finetuning" not in _settings("mini", "elmo")


@pytest.mark.slow
def test_a_budget_that_fine_tunes_for_its_elmo_runs_fine_tunes_first_and_records_it(tmp_path, monkeypatch):
    """End to end at the smoke budget: the elmo run's first command fine-tunes, its ELMo reads the export."""
    from elmo_tasks.bilm.references import resolve_bilm_file
    from elmo_tasks.config_defaults import DEFAULTS

    shipped = Path(resolve_bilm_file(DEFAULTS["ELMO_WEIGHTS"])).parent  # has the softmax the fine-tuning continues
    monkeypatch.setenv("ELMO_OPTIONS", str(shipped / "options.json"))
    monkeypatch.setenv("ELMO_WEIGHTS", str(shipped / "weights.hdf5"))
    budgets = dict(TASKS["snli"].budgets)
    budgets["smoke"] = replace(budgets["smoke"], finetuned_bilm_variants=("elmo",))
    monkeypatch.setitem(TASKS, "snli", replace(TASKS["snli"], budgets=budgets))
    runs = tmp_path / "runs"
    assert main(["snli", "--budget", "smoke", "--runs-dir", str(runs), "--variants", "elmo", "--in-process"]) == 0
    (record,) = load_records(runs / "records")
    export = runs / "snli" / "bilm_finetuned" / "run" / "elmo"
    assert " train experiments/bilm_finetune.jsonnet " in record["commands"][0]
    assert " train experiments/snli_elmo.jsonnet " in record["commands"][1]
    assert record["env"]["ELMO_WEIGHTS"] == str(export / "weights.hdf5")
    embedder = record["config_resolved"]["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    assert embedder["weight_file"] == str(export / "weights.hdf5")
    assert record["bilm_finetuning"]["text"] == "fixtures/snli/train.jsonl"


def test_the_fine_tuning_texts_are_read_from_wherever_the_data_folder_lies(tmp_path, monkeypatch):
    """The recipe names its texts from ``$ELMO_TASKS_SHARED_DATA`` (a setting, the same wherever the data lies);
    the step reads them from the folder ELMO_TASKS_SHARED_DATA names today, here one outside the checkout."""
    from elmo_tasks.reproduction.finetune import _write_texts

    data = tmp_path / "my data"
    (data / "snli").mkdir(parents=True)
    (data / "snli" / "snli_1.0_train.jsonl").write_text((ROOT / "fixtures" / "snli" / "train.jsonl").read_text())
    (data / "snli" / "snli_1.0_dev.jsonl").write_text((ROOT / "fixtures" / "snli" / "dev.jsonl").read_text())
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", str(data))
    recipe = Plan(parse_args(["snli", "--budget", "paper"])[0]).finetuning_recipe("snli")
    assert recipe["text"] == "$ELMO_TASKS_SHARED_DATA/snli/snli_1.0_train.jsonl"
    texts = _write_texts("snli", recipe, tmp_path)
    assert texts["text"].read_text().strip() and texts["validation_text"].read_text().strip()
