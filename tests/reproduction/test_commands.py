"""A run trained inside the harness's process leaves the process's logging as it found it; paths the caller
gives from another directory reach the commands, which run from the repository's root."""

import json
import logging
import os

from elmo_tasks.reproduction.commands import ALLENNLP, ROOT, env_paths_from_caller, run_allennlp


def test_an_in_process_run_gives_back_the_logging_it_replaced(tmp_path, capsys):
    root = logging.getLogger()
    handlers_before, level_before = list(root.handlers), root.level
    log = tmp_path / "train.log"
    overrides = json.dumps({"trainer": {"num_epochs": 1}})
    command = [ALLENNLP, "train", "experiments/sst5_baseline.jsonnet", "-s", str(tmp_path / "run"), "-o", overrides]
    run_allennlp({"ELMO_TASKS_DATA": "fixtures"}, command, log, in_process=True)
    assert "Epoch" in log.read_text() or "epoch" in log.read_text()  # allennlp train did log into the run's log
    assert root.handlers == handlers_before and root.level == level_before
    # The run's log file is closed now; a later log line must not go there (nor fail on it).
    logging.getLogger("elmo_tasks.test").warning("a line after the run")
    assert "Logging error" not in capsys.readouterr().err
    assert "a line after the run" not in log.read_text()


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
