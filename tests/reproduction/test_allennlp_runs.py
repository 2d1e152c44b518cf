"""A run trained inside the harness's process reads the run's variables without touching the process (its
environment, working directory, ``sys.argv`` and logging stay as they were); paths the caller gives from
another directory reach the commands, which run from the repository's root."""

import json
import logging
import os
import sys

import pytest

from elmo_tasks.reproduction.allennlp_runs import ALLENNLP, ROOT, RunFailed, env_paths_from_caller, run_allennlp

ONE_EPOCH = json.dumps({"trainer": {"num_epochs": 1}})


def _train_command(run_dir) -> list:
    return [ALLENNLP, "train", "experiments/sst5_baseline.jsonnet", "-s", str(run_dir), "-o", ONE_EPOCH]


def test_an_in_process_run_gives_back_the_logging_it_replaced(tmp_path, capsys):
    root = logging.getLogger()
    handlers_before, level_before = list(root.handlers), root.level
    log = tmp_path / "train.log"
    run_allennlp({"ELMO_TASKS_DATA": "fixtures"}, _train_command(tmp_path / "run"), log, in_process=True)
    assert "Epoch" in log.read_text() or "epoch" in log.read_text()  # allennlp train did log into the run's log
    assert root.handlers == handlers_before and root.level == level_before
    # The run's log file is closed now; a later log line must not go there (nor fail on it).
    logging.getLogger("elmo_tasks.test").warning("a line after the run")
    assert "Logging error" not in capsys.readouterr().err
    assert "a line after the run" not in log.read_text()


def test_an_in_process_run_reads_the_runs_variables_and_leaves_the_process_as_it_was(tmp_path, monkeypatch):
    monkeypatch.delenv("ELMO_TASKS_SEED", raising=False)  # set by the run only
    monkeypatch.setenv("ELMO_TASKS_DATA", "full")  # the run's own value wins over the process's
    environment, cwd, argv = dict(os.environ), os.getcwd(), list(sys.argv)
    root, progress = logging.getLogger(), logging.getLogger("tqdm")  # allennlp train gives both its handlers
    handlers, progress_handlers = list(root.handlers), list(progress.handlers)
    params_logger = logging.getLogger("allennlp.common.params")
    monkeypatch.setattr(params_logger, "disabled", False)  # on at the start, so the last line can fail
    env = {"ELMO_TASKS_DATA": "fixtures", "ELMO_TASKS_SEED": "7"}
    run_dir = tmp_path / "run"
    run_allennlp(env, _train_command(run_dir), tmp_path / "train.log", in_process=True)
    config = json.loads((run_dir / "config.json").read_text())
    assert config["random_seed"] == 7 and config["train_data_path"] == "fixtures/sst/train.txt"
    assert config["trainer"]["num_epochs"] == 1  # the -o overrides
    output = tmp_path / "test_metrics.json"
    evaluate = [ALLENNLP, "evaluate", str(run_dir / "model.tar.gz"), "fixtures/sst/test.txt", "--output-file"]
    run_allennlp(env, [*evaluate, str(output)], tmp_path / "evaluate.log", in_process=True)
    assert "accuracy" in json.loads(output.read_text())
    assert dict(os.environ) == environment and os.getcwd() == cwd and sys.argv == argv
    assert root.handlers == handlers and progress.handlers == progress_handlers
    assert not params_logger.disabled  # allennlp evaluate turns it off for its own run only


def test_an_in_process_run_from_another_directory_fails_and_says_where_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RunFailed, match=f"not the repository's root {ROOT}: run from there, or without --in-process"):
        run_allennlp({}, _train_command(tmp_path / "run"), tmp_path / "train.log", in_process=True)
    assert not (tmp_path / "run").exists()


def test_a_command_line_the_parser_refuses_fails_the_run_with_its_message_in_the_log(tmp_path):
    log = tmp_path / "train.log"
    with pytest.raises(RunFailed, match="exit 2"):
        run_allennlp({}, [ALLENNLP, "train", "experiments/sst5_baseline.jsonnet"], log, in_process=True)
    assert "the following arguments are required: -s/--serialization-dir" in log.read_text()


def test_relative_paths_in_the_environment_mean_the_callers_directory(tmp_path, monkeypatch):
    (tmp_path / "my_data").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", "my_data")
    monkeypatch.setenv("ELMO_WEIGHTS", "elmo_tasks:pretrained/bilm_small/weights.hdf5")  # a reference, no path
    monkeypatch.setenv("ELMO_TASKS_WORD_VECTORS", "not_there.txt")  # as given: the run's error names it
    monkeypatch.setenv("BILM_START", str(tmp_path))
    env_paths_from_caller()
    assert not os.path.isabs(os.environ["ELMO_TASKS_SHARED_DATA"])  # records keep naming paths from the root
    assert (ROOT / os.environ["ELMO_TASKS_SHARED_DATA"]).resolve() == (tmp_path / "my_data").resolve()
    assert os.environ["ELMO_WEIGHTS"] == "elmo_tasks:pretrained/bilm_small/weights.hdf5"
    assert os.environ["ELMO_TASKS_WORD_VECTORS"] == "not_there.txt"
    assert os.environ["BILM_START"] == str(tmp_path)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ELMO_TASKS_SHARED_DATA", "fixtures")
    env_paths_from_caller()
    assert os.environ["ELMO_TASKS_SHARED_DATA"] == "fixtures"  # from the root: unchanged


def test_without_an_allennlp_script_beside_python_the_command_starts_as_python_m_allennlp(monkeypatch):
    from elmo_tasks.reproduction import allennlp_runs

    command = [ALLENNLP, "evaluate", "model.tar.gz", "test.txt"]
    assert allennlp_runs.launched(command) == command  # the virtual environment's script, as set up
    monkeypatch.setattr(allennlp_runs, "ALLENNLP", "/nowhere/bin/allennlp")
    moved = ["/nowhere/bin/allennlp", "evaluate", "model.tar.gz", "test.txt"]
    assert allennlp_runs.launched(moved) == [sys.executable, "-m", "allennlp", "evaluate", "model.tar.gz", "test.txt"]
