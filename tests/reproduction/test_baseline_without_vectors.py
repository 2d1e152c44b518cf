"""The recipe baseline without pretrained word vectors (issue 55: why our NER baseline trails the paper's):
a diagnosis variant of the baseline config that reads no word vectors, planned and recorded like every
run, and its row under the report's recipe table."""

import dataclasses
import shlex
from pathlib import Path
from typing import Any, List, Optional

import pytest

from elmo_tasks.config_defaults import DEFAULTS
from elmo_tasks.reproduction import configs, main
from elmo_tasks.reproduction.cli import parse_args
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.records import RECORD_VERSION, load_records, save_record
from elmo_tasks.reproduction.report_recipe import paired_difference, recipe_diagnosis_table, recipe_section
from elmo_tasks.reproduction.specs import WordVectorRecipe
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.word_vectors import VECTORS_VARIABLE
from tests.conftest import ROOT

VARIANT = "baseline_no_vectors"
RECIPE_RECORDS = ROOT / "docs" / "results" / "records" / "recipe"


def _plan(*asked: str) -> Plan:
    args, _ = parse_args(list(asked))
    return Plan(args)


def _pretrained_files(config: dict) -> List[Any]:
    """The word embedder's ``pretrained_file`` and the vocabulary's ``pretrained_files`` of a resolved config,
    where set."""
    embedder = config["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    vocabulary = config.get("vocabulary", {})
    return [found for found in (embedder.get("pretrained_file"), vocabulary.get("pretrained_files")) if found]


def test_the_lead_s_command_plans_one_baseline_run_without_vectors():
    args, tasks = parse_args(["ner", "--budget", "recipe", "--variants", VARIANT, "--only-seeds", "0"])
    plan = Plan(args)
    assert [tuple(job) for job in plan.jobs(tasks)] == [("ner", VARIANT, 0, None)]  # no --analyses needed
    settings = plan.settings("ner", plan.variants("ner")[VARIANT], None)
    assert settings["config"] == TASKS["ner"].configs["baseline"] and settings["data"] == "full"
    assert settings["env"][VECTORS_VARIABLE] == ""  # the command shows it empty, whatever the caller's shell sets
    assert "word_vectors" not in settings and "bilm_weights_sha256" not in settings  # nothing built, no biLM
    resolved = configs.resolved_config(settings["config"], "full", settings["overrides"], settings["env"])
    assert _pretrained_files(resolved) == []
    assert configs.config_fingerprint(resolved) == settings["config_sha256"]
    baseline = plan.settings("ner", plan.variants("ner")["baseline"], None)
    assert baseline["word_vectors"]["file"] == baseline["env"][VECTORS_VARIABLE]  # the recipe's baseline reads ours
    assert settings["config_sha256"] != baseline["config_sha256"]
    # the budget's overrides and the same experiment file: the vectors are all that differs
    assert settings["overrides"] == baseline["overrides"]


def test_the_command_in_reproducing_md_plans_that_run():
    (line,) = [
        line for line in (ROOT / "docs" / "REPRODUCING.md").read_text().splitlines() if f"--variants {VARIANT}" in line
    ]
    words = shlex.split(line)
    assert words[:2] == ["ELMO_TASKS_SHARED_DATA=/path/to/data", "OMP_NUM_THREADS=1"]  # the user names their folder
    asked = words[words.index("scripts/reproduce.py") + 1 :]
    args, tasks = parse_args(asked)
    assert [tuple(job) for job in Plan(args).jobs(tasks)] == [("ner", VARIANT, 0, None)]


def test_it_is_a_diagnosis_variant_that_the_analyses_include():
    jobs = _plan("ner", "--budget", "recipe", "--analyses", "--only-seeds", "0").jobs(["ner"])
    assert ("ner", VARIANT, 0, None) in [tuple(job) for job in jobs]
    assert VARIANT not in [job.variant for job in _plan("ner", "--budget", "recipe").jobs(["ner"])]
    analysis = TASKS["ner"].analyses[VARIANT]
    assert analysis.table == "diagnosis" and analysis.config == "baseline" and not analysis.reads_word_vectors


def test_the_paper_budget_s_glove_is_not_read_either():
    plan = _plan("ner", "--budget", "paper", "--variants", VARIANT)
    settings = plan.settings("ner", plan.variants("ner")[VARIANT], None)
    assert plan.settings("ner", plan.variants("ner")["baseline"], None)["env"][VECTORS_VARIABLE].endswith(".txt")
    assert settings["env"][VECTORS_VARIABLE] == "" and "word_vectors" not in settings


def test_naming_the_variant_leaves_every_other_run_as_it_was():
    for budget in ("smoke", "mini", "recipe", "paper"):
        alone = _plan("ner", "--budget", budget)
        beside = _plan("ner", "--budget", budget, "--variants", VARIANT, "baseline", "elmo")
        for name in ("baseline", "elmo"):
            first = alone.settings("ner", alone.variants("ner")[name], None)
            assert beside.settings("ner", beside.variants("ner")[name], None) == first, (budget, name)


def test_the_committed_recipe_runs_keep_their_settings(monkeypatch):
    """The recipe's baseline and ELMo records are still the runs the harness plans today (the variant changed
    no fingerprint): a config edited on purpose since, which retrains them, fails here too; then rerun them."""
    monkeypatch.setenv("ELMO_OPTIONS", DEFAULTS["ELMO_OPTIONS"])  # the recipe runs read the shipped biLM
    monkeypatch.setenv("ELMO_WEIGHTS", DEFAULTS["ELMO_WEIGHTS"])
    records = [r for r in load_records(RECIPE_RECORDS) if r["variant"] in ("baseline", "elmo")]
    if not records:
        pytest.skip("no recipe records committed yet")
    plan = _plan("ner", "--budget", "recipe")
    for record in records:
        settings = plan.settings(record["task"], plan.variants(record["task"])[record["variant"]], None)
        for key in ("config", "data", "env", "word_vectors", "config_sha256"):  # the biLM is replaced in place
            assert record.get(key) == settings.get(key), (record["variant"], record["run_name"], key)


def _with_vectors_that_cannot_be_built(monkeypatch, tmp_path: Path) -> None:
    """NER's smoke budget as if it built word vectors from a corpus that is not there: a run that read
    them would fail before training."""
    spec = TASKS["ner"]
    absent = WordVectorRecipe(corpus=str(tmp_path / "no_corpus.txt"), directory=str(tmp_path / "vectors"))
    smoke = dataclasses.replace(spec.budgets["smoke"], word_vectors=absent)
    monkeypatch.setitem(TASKS, "ner", dataclasses.replace(spec, budgets={**spec.budgets, "smoke": smoke}))


def test_a_smoke_run_of_it_builds_and_reads_no_vectors_and_records_none(tmp_path, monkeypatch):
    _with_vectors_that_cannot_be_built(monkeypatch, tmp_path)
    runs = tmp_path / "runs"
    assert main(["ner", "--budget", "smoke", "--variants", VARIANT, "--runs-dir", str(runs), "--in-process"]) == 0
    (record,) = load_records(runs / "records")
    assert record["variant"] == VARIANT and record["config"] == "experiments/ner_baseline.jsonnet"
    assert "word_vectors" not in record and "word_vectors_built" not in record
    assert record["env"][VECTORS_VARIABLE] == ""
    train = record["commands"][0]  # the training command, as run: the variable empty, the baseline config
    assert f"{VECTORS_VARIABLE}= " in train and " train experiments/ner_baseline.jsonnet " in train
    assert _pretrained_files(record["config_resolved"]) == []
    assert not (tmp_path / "vectors").exists()


def _record(variant: str, seed: int, test: float, validation: float, curve: List[float], env: Optional[dict] = None):
    return {
        "task": "ner",
        "variant": variant,
        "seed_index": seed,
        "value": test,
        "best_validation": validation,
        "best_epoch": curve.index(max(curve)),
        "validation_curve": curve,
        "env": env if env is not None else {VECTORS_VARIABLE: ""},
    }


OURS = {"word_vectors": {"options": {"algorithm": "word2vec", "dim": 50, "lowercase": True}}}


def _baseline(seed: int, test: float, validation: float, curve: List[float]) -> dict:
    return {**_record("baseline", seed, test, validation, curve, env={VECTORS_VARIABLE: "vectors.txt"}), **OURS}


def test_the_report_row_under_the_recipe_table_from_a_synthetic_record():
    curve = [80.0 + epoch for epoch in range(12)]  # 12 epochs: 1, 5 and 10 reached, 20 and 40 not
    records = [_baseline(0, 88.0, 92.5, [*curve[:-1], 92.5]), _baseline(1, 87.5, 92.0, [*curve[:-1], 92.0])]
    records.append(_record(VARIANT, 0, 86.0, 91.0, [*curve[:-1], 91.0]))
    lines = recipe_diagnosis_table(records)
    header = next(line for line in lines if line.startswith("| Task |"))
    assert "Validation at epochs 1, 5, 10, 20, 40" in header
    config_row, variant_row = (line for line in lines if line.startswith("| NER |"))
    assert config_row == (
        "| NER | baseline (as configured) | ours: word2vec 50-d lowercased | 92.25 ± 0.35 | 12/12, 12/12 "
        "| 80.00 / 84.00 / 89.00 / – / – | 87.75 ± 0.35 | 2 |  |"
    )
    assert variant_row == (
        "| NER | no pretrained word vectors | none | 91.00 | 12/12 | 80.00 / 84.00 / 89.00 / – / – | 86.00 | 1 "
        "| -1.50 / -2.00 (1 seed) |"
    )


def test_the_difference_pairs_seeds():
    config = [_baseline(0, 88.0, 92.0, [92.0]), _baseline(1, 90.0, 94.0, [94.0])]
    assert paired_difference([_record(VARIANT, 1, 89.0, 93.5, [93.5])], config) == "-0.50 / -1.00 (1 seed)"
    assert paired_difference([_record(VARIANT, 2, 89.0, 93.5, [93.5])], config) == "no seed in common"


def _saved(records_dir: Path, record: dict) -> None:
    """``record`` with the other fields a record holds, saved where the harness keeps it."""
    run_name = f"seed{record['seed_index']}"
    test_metrics = {"test": {"f1-measure-overall": record["value"] / 100}}
    full = {"record_version": RECORD_VERSION, "run_name": run_name, "metric": "f1-measure-overall", **record}
    save_record({**full, "test_metrics": test_metrics, "layer_weights": {}}, records_dir)


def test_the_section_has_the_rows_only_once_the_variant_has_a_record(tmp_path):
    records_dir = tmp_path / "recipe"
    _saved(records_dir, _baseline(0, 88.0, 92.5, [91.0, 92.5]))
    without = recipe_section(records_dir)
    assert any(line.startswith("| NER | F1 | 90.15 | 92.22 | 88.00 | – | – | 1 / 0 |") for line in without)
    assert without[-1].startswith("| SST-5 | accuracy | 51.4 | 54.7 | – | – | – | not run yet | – |")  # its end
    assert recipe_diagnosis_table(load_records(records_dir)) == []
    _saved(records_dir, _record(VARIANT, 0, 86.0, 91.0, [90.0, 91.0]))
    lines = recipe_section(records_dir)
    assert lines[: len(without)] == without
    assert lines[-1].startswith("| NER | no pretrained word vectors | none | 91.00 | 2/2 |")
    assert lines[-1].endswith("| -1.50 / -2.00 (1 seed) |")
