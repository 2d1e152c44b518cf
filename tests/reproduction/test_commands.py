"""A run trained inside the harness's process leaves the process's logging as it found it."""

import json
import logging

from elmo_tasks.reproduction.commands import ALLENNLP, run_allennlp


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
