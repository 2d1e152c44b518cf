"""What a run's settings are made of (budgets, variants, fingerprints), the command line, and the one
rule that decides whether a run directory is trained, resumed or restarted."""

import ast
import json
from pathlib import Path
from typing import Set

import pytest

from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import RunFailed
from elmo_tasks.reproduction.cli import json_object, parse_args
from elmo_tasks.reproduction.decide import Step, training_step
from elmo_tasks.reproduction.notes import shipped_bilm_names, task_notes
from elmo_tasks.reproduction.plan import Plan
from elmo_tasks.reproduction.records import finished_run_record
from elmo_tasks.reproduction.task_table import TASKS
from tests.conftest import ROOT, experiment_config

# Optional constructor arguments an override may add (every other overridden key must already exist);
# ESIM's attention_dropout is in SNLI's `full` ELMo config only, and its input-and-output analysis sets it.
ADDED_KEYS = {"fixed_layer_weights", "batches_per_epoch", "attention_dropout"}


def test_the_config_fingerprint_ignores_the_seeds_only():
    config = {"random_seed": 1, "numpy_seed": 2, "pytorch_seed": 3, "trainer": {"num_epochs": 4}}
    reseeded = {**config, "random_seed": 11, "numpy_seed": 12, "pytorch_seed": 13}
    assert configs.config_fingerprint(config) == configs.config_fingerprint(reseeded)
    longer = {**config, "trainer": {"num_epochs": 5}}
    assert configs.config_fingerprint(config) != configs.config_fingerprint(longer)


def test_the_bilm_fingerprint_follows_the_weights_file_content(tmp_path, monkeypatch):
    weights = tmp_path / "weights.hdf5"
    weights.write_bytes(b"first biLM")
    monkeypatch.setenv("ELMO_WEIGHTS", str(weights))
    first = configs.bilm_weights_sha256()
    assert first == configs.bilm_weights_sha256() and len(first) == 16
    weights.write_bytes(b"second biLM, same path")
    assert configs.bilm_weights_sha256() != first
    monkeypatch.setenv("ELMO_WEIGHTS", str(tmp_path / "missing.hdf5"))
    with pytest.raises(RunFailed, match="missing.hdf5"):
        configs.bilm_weights_sha256()


def test_overrides_must_be_a_json_object():
    assert json_object('{"trainer.num_epochs": 2}') == {"trainer.num_epochs": 2}
    for bad in ("[1, 2]", "{not json"):
        with pytest.raises(Exception, match="--overrides"):
            json_object(bad)


def test_a_budget_is_required_and_tasks_and_variants_must_exist(capsys):
    for argv, message in (
        (["ner"], "the following arguments are required: --budget"),
        (["ner", "--budget", "tiny"], "argument --budget: invalid choice: 'tiny'"),
        (["pos", "--budget", "smoke"], "unknown task(s) ['pos']"),
        (["ner", "--budget", "smoke", "--variants", "elmo_output"], "unknown variant(s) ['elmo_output']"),
    ):
        with pytest.raises(SystemExit) as stop:
            parse_args(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("task", list(TASKS))
def test_every_budget_and_analysis_override_names_a_key_of_the_config(task):
    spec = TASKS[task]
    for budget_name, budget in spec.budgets.items():
        for variant_name, variant in spec.variants(budget_name, analyses=True).items():
            config = experiment_config(Path(variant.config).stem, budget.data, **budget.env)
            for dotted in {**budget.overrides, **variant.overrides}:
                *parents, leaf = dotted.split(".")
                node = config
                for part in parents:
                    assert part in node, (budget_name, variant_name, dotted)
                    node = node[part]
                assert leaf in node or leaf in ADDED_KEYS, (budget_name, variant_name, dotted)


def test_every_task_has_its_notes_and_they_are_keyed_by_budgets():
    for task in TASKS:
        notes = task_notes(task)
        assert notes.title, task
        for kept in (notes.trained_on, notes.notes, notes.diagnosis_notes):
            assert set(kept) <= set(TASKS[task].budgets), task  # budgets the task has
        if notes.diagnosis_notes:  # notes on diagnosis runs only for a task that has such variants
            assert any(analysis.table == "diagnosis" for analysis in TASKS[task].analyses.values()), task
    assert all(len(sha) == 16 for sha in shipped_bilm_names())


def test_small_sample_shares_get_their_budgets_extra_epochs_and_patience():
    args, _ = parse_args(["srl", "snli", "--budget", "mini", "--sample-efficiency"])
    plan = Plan(args)
    srl, snli = plan.variants("srl"), plan.variants("snli")
    one_percent = plan.settings("srl", srl["baseline_sample0.01"], None)["overrides"]
    assert (one_percent["trainer.num_epochs"], one_percent["trainer.patience"]) == (150, 20)
    ten_percent = plan.settings("srl", srl["elmo_sample0.1"], None)["overrides"]
    assert (ten_percent["trainer.num_epochs"], ten_percent["trainer.patience"]) == (30, 4)  # the budget's patience
    assert plan.settings("srl", srl["elmo"], None)["overrides"]["trainer.num_epochs"] == 60  # the budget's own cap
    full = plan.settings("snli", snli["elmo"], None)["overrides"]
    settings = plan.settings("snli", snli["elmo_sample0.1"], None)
    # a tenth of the pairs: ten times the full runs' epochs and patience, the same number of updates
    assert (full["trainer.num_epochs"], full["trainer.patience"]) == (20, 3)
    assert (settings["overrides"]["trainer.num_epochs"], settings["overrides"]["trainer.patience"]) == (200, 30)
    # the rate is halved after about one full epoch's updates without improvement, as in the full runs
    assert settings["overrides"]["trainer.learning_rate_scheduler.patience"] == 9
    assert "trainer.learning_rate_scheduler.patience" not in full
    assert settings["train_share"] == 0.1
    three_tenths = plan.settings("snli", snli["baseline_sample0.3"], None)["overrides"]
    assert (three_tenths["trainer.num_epochs"], three_tenths["trainer.patience"]) == (67, 10)
    assert three_tenths["trainer.learning_rate_scheduler.patience"] == 2
    assert settings["overrides"]["train_data_path"].endswith("snli_1.0_dev.jsonl.gz#train#sample=0.1")


def test_the_paper_budgets_snli_shares_train_a_full_epochs_batches_per_epoch():
    args, _ = parse_args(["snli", "--budget", "paper", "--sample-efficiency"])
    plan = Plan(args)
    variants = plan.variants("snli")
    tiny = plan.settings("snli", variants["elmo_sample0.001"], None)["overrides"]
    assert tiny["data_loader.batches_per_epoch"] == 17193  # 550,152 pairs in batches of 32
    # the recipe's epochs and patience (the experiment file's 75 and 5), counted in updates
    assert "trainer.num_epochs" not in tiny and "trainer.patience" not in tiny
    assert "data_loader.batches_per_epoch" not in plan.settings("snli", variants["elmo"], None)["overrides"]


def test_analysis_seeds_limits_only_the_analysis_variants():
    args, tasks = parse_args(["ner", "--budget", "mini", "--analyses", "--analysis-seeds", "1"])
    runs = Plan(args).jobs(tasks)
    analyses = set(TASKS["ner"].analyses)
    assert analyses and sorted(k for _, name, k, _ in runs if name == "elmo") == [0, 1, 2]
    assert sorted(name for _, name, k, _ in runs if name in analyses) == sorted(analyses)
    assert all(k == 0 for _, name, k, _ in runs if name in analyses)
    args, tasks = parse_args(["ner", "--budget", "mini", "--analyses"])
    assert len(Plan(args).jobs(tasks)) == 3 * (2 + len(analyses))


def test_other_folds_are_runs_of_their_own_directories(tmp_path):
    args, tasks = parse_args(["squad", "--budget", "mini", "--splits", "all", "--runs-dir", str(tmp_path)])
    plan = Plan(args)
    names = [plan.paths(job).run_dir.relative_to(tmp_path).as_posix() for job in plan.jobs(tasks)]
    assert names[:2] == ["squad/baseline/seed0", "squad/elmo/seed0"] and "squad/elmo/fold4of4-seed2" in names
    assert len(names) == len(set(names)) == 4 * 3 * 2
    fold = plan.settings("squad", plan.variants("squad")["baseline"], "3/4")
    assert fold["env"]["ELMO_TASKS_FOLD"] == "3/4"
    default = plan.settings("squad", plan.variants("squad")["baseline"], "1/4")
    assert "ELMO_TASKS_FOLD" not in default["env"]  # the default fold needs no variable
    assert default["config_sha256"] != fold["config_sha256"]  # it trains on other articles


def test_the_training_step_of_a_directory(tmp_path):
    run_dir = tmp_path / "seed0"
    assert training_step(run_dir, same=True, finished=False) is Step.TRAIN  # nothing there yet
    run_dir.mkdir()
    assert training_step(run_dir, same=False, finished=False) is Step.RESTART  # other settings: -f
    assert training_step(run_dir, same=True, finished=False) is Step.RESTART  # same settings, no checkpoint
    (run_dir / "model_state_e0_b0.th").write_bytes(b"")
    assert training_step(run_dir, same=True, finished=False) is Step.RESUME
    assert training_step(run_dir, same=False, finished=True) is Step.RESTART  # finished, but with other settings
    assert training_step(run_dir, same=True, finished=True) is Step.DONE
    assert (Step.RESUME.flags, Step.RESTART.flags, Step.TRAIN.flags, Step.DONE.flags) == (["--recover"], ["-f"], [], [])


def test_a_run_directory_is_finished_once_evaluated_and_recorded_with_the_same_settings(tmp_path):
    settings = {"config": "experiments/snli_elmo.jsonnet", "data": "full", "overrides": {"trainer.num_epochs": 8}}
    settings.update(env={}, config_sha256="0123456789abcdef")
    record = {"variant": "elmo", "value": 61.5, **settings}
    (tmp_path / "record.json").write_text(json.dumps(record))
    assert finished_run_record(tmp_path, settings) is None  # no test metrics yet: not finished
    (tmp_path / "test_metrics.json").write_text("{}")
    assert finished_run_record(tmp_path, settings) == record
    nine_epochs = {**settings, "overrides": {"trainer.num_epochs": 9}, "config_sha256": "fedcba9876543210"}
    assert finished_run_record(tmp_path, nine_epochs) is None
    # Overrides written otherwise that resolve to the same config (a setting moved between the experiment
    # file and the budget's overrides) are the same run.
    moved = {**settings, "overrides": {"trainer.num_epochs": 8, "trainer.optimizer.lr": 0.001}}
    assert finished_run_record(tmp_path, moved) == record
    assert finished_run_record(tmp_path, {**settings, "data": "fixtures"}) is None
    assert finished_run_record(tmp_path, {**settings, "bilm_weights_sha256": "555c6764f6f2cab4"}) is None


# What the tasks' specs are written with (elmo_tasks/tasks/<task>/spec.py), and all of the harness they import.
SPEC_VOCABULARY = {"elmo_tasks.reproduction." + name for name in ("specs", "task_table", "notes")}
SPEC_VOCABULARY_IMPORTS = {*SPEC_VOCABULARY, "elmo_tasks.reproduction.allennlp_runs"}


def _harness_imports(path: Path, at_module_level: bool = False) -> Set[str]:
    """The modules of elmo_tasks.reproduction that ``path`` imports (``from X import Y``: X.Y where that is one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body if at_module_level else ast.walk(tree):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module] if module != "elmo_tasks.reproduction" else [f"{module}.{a.name}" for a in node.names]
        found.update(name for name in names if name.startswith("elmo_tasks.reproduction"))
    return found


def test_nothing_else_in_the_package_imports_the_harness():
    """The AllenNLP plugin (and so every `allennlp` command) stays as light as before: no module of
    elmo_tasks outside the harness imports it, but the tasks' specs and their registry, which import only
    the vocabulary specs are written with; that imports no more of the harness, and neither does importing
    the package."""
    importers = {}
    for path in (ROOT / "elmo_tasks").rglob("*.py"):
        if "reproduction" not in path.relative_to(ROOT / "elmo_tasks").parts:
            imported = _harness_imports(path)
            if imported:
                importers[str(path.relative_to(ROOT))] = imported
    specs = {name for name in importers if name.endswith("/spec.py") or name == "elmo_tasks/tasks/registry.py"}
    assert set(importers) == specs and len(specs) >= 7, importers
    assert set().union(*importers.values()) <= SPEC_VOCABULARY, importers
    for name in SPEC_VOCABULARY:
        assert _harness_imports(ROOT / f"{name.replace('.', '/')}.py") <= SPEC_VOCABULARY_IMPORTS, name
    assert _harness_imports(ROOT / "elmo_tasks/reproduction/__init__.py", at_module_level=True) == set()


def test_only_the_committed_records_write_the_committed_report(tmp_path):
    """A comparison kept out of the committed records (another algorithm, a trial) reports beside its runs."""
    committed = Plan(parse_args(["sst5", "--budget", "mini"])[0])
    assert committed.results == ROOT / "docs" / "RESULTS.md"
    elsewhere = ["--runs-dir", str(tmp_path / "runs"), "--records-dir", str(tmp_path / "runs" / "records")]
    trial = Plan(parse_args(["sst5", "--budget", "mini", *elsewhere])[0])
    assert trial.results == tmp_path / "runs" / "RESULTS.md"
    chosen = Plan(parse_args(["sst5", "--budget", "mini", *elsewhere, "--results", str(tmp_path / "r.md")])[0])
    assert chosen.results == tmp_path / "r.md"


def test_paths_given_relative_to_another_directory_stay_in_that_directory(tmp_path, monkeypatch):
    """The commands run from the repository's root, so a relative ``--runs-dir`` given elsewhere must not
    move there (the training would go to the root and the harness look for it in the caller's directory)."""
    monkeypatch.chdir(tmp_path)
    plan = Plan(parse_args(["sst5", "--budget", "smoke", "--runs-dir", "mine", "--results", "report.md"])[0])
    assert plan.runs_dir == tmp_path / "mine" and plan.records_dir == tmp_path / "mine" / "records"
    assert plan.results == tmp_path / "report.md"
    assert plan.paths(plan.jobs(["sst5"])[0]).run_dir == tmp_path / "mine" / "sst5" / "baseline" / "seed0"


def test_files_inside_the_repository_are_named_from_its_root_so_records_travel(tmp_path):
    from elmo_tasks.reproduction.allennlp_runs import ROOT
    from elmo_tasks.reproduction.plan import from_root

    assert from_root(ROOT / "runs" / "mini" / "snli" / "bilm_finetuned") == Path("runs/mini/snli/bilm_finetuned")
    assert from_root(tmp_path / "elmo") == tmp_path / "elmo"  # outside it: as given


def test_where_the_data_lies_is_not_a_setting(monkeypatch):
    """The same run whether the data folder is named relative, absolute or lies elsewhere altogether: the
    committed records (made with ``../shared/data``) are then the runs a reader's harness reuses, not runs it
    trains again (issue found 2026-12-01: every record was marked † and retrained). Another folder's name
    in a path that only starts like the data folder's is still a setting."""
    fingerprints, finetuning, train_paths = set(), [], set()
    for root in ("../shared/data", str((ROOT / "../shared/data").resolve()), "/elsewhere/elmo-data/"):
        monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", root)
        plan = Plan(parse_args(["snli", "--budget", "mini"])[0])
        settings = plan.settings("snli", plan.variants("snli")["elmo"], None)
        fingerprints.add(settings["config_sha256"])
        finetuning.append(plan.finetuning_recipe("snli"))
        config = configs.resolved_config(settings["config"], settings["data"], settings["overrides"], settings["env"])
        train_paths.add(config["train_data_path"])
    assert len(train_paths) == 3  # the configs do name three folders (the check below would be empty otherwise)
    assert len(fingerprints) == 1
    assert finetuning[0] == finetuning[1] == finetuning[2]
    assert finetuning[0]["text"] == "$ELMO_TASKS_SHARED_DATA/snli/snli_1.0_dev.jsonl.gz#train"
    other = {"train_data_path": "/elsewhere/elmo-data-2/snli/train.jsonl"}
    assert configs.config_fingerprint(other, "/elsewhere/elmo-data") != configs.config_fingerprint(
        {"train_data_path": "/elsewhere/elmo-data/snli/train.jsonl"}, "/elsewhere/elmo-data"
    )


def test_a_path_named_from_the_data_folder_is_read_from_where_the_data_lies(monkeypatch):
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", "/data/elmo/")
    named = configs.paths_from_data_root({"a": ["/data/elmo/ner/eng.train", "/data/elmo2/x"], "b": 3})
    assert named == {"a": ["$ELMO_TASKS_SHARED_DATA/ner/eng.train", "/data/elmo2/x"], "b": 3}
    assert configs.in_data_root(named["a"][0]) == "/data/elmo/ner/eng.train"
    assert configs.in_data_root("runs/word_vectors/v.txt") == "runs/word_vectors/v.txt"
    assert configs.paths_from_data_root("/x/y", "/") == "/x/y"  # the file system's root names no data folder


def test_a_data_folder_named_shared_data_with_a_trailing_slash_is_the_same_setting(monkeypatch):
    fingerprints = set()
    for root in ("../shared/data", str((ROOT / "../shared/data").resolve()) + "/"):
        monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", root)
        plan = Plan(parse_args(["ner", "--budget", "mini"])[0])
        fingerprints.add(plan.settings("ner", plan.variants("ner")["baseline"], None)["config_sha256"])
    assert len(fingerprints) == 1
