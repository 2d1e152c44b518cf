"""An experiment works where a user puts it (issue 55.2): copied out of the checkout, or run from another
directory, it finds the jsonnet blocks it imports (shipped in elmo_tasks/experiments) and the bundled
samples it reads (ELMO_TASKS_FIXTURES), through the real entry point."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_tasks.config_defaults import fixtures_folder
from elmo_tasks.experiments import LIBRARY
from tests.command_runs import environment_without_ours, finished
from tests.conftest import ROOT

ELMO_TASKS = str(Path(sys.executable).parent / "elmo-tasks")
TASK_BLOCKS = ["common", "coref", "ner", "snli", "squad", "srl", "sst5"]


def test_the_blocks_the_experiments_import_ship_in_the_package():
    assert sorted(path.stem for path in LIBRARY.glob("*.libsonnet")) == TASK_BLOCKS
    assert not list((ROOT / "experiments").glob("*.libsonnet"))  # one copy of each block
    package_data = (ROOT / "setup.cfg").read_text()
    assert "elmo_tasks.experiments = *.libsonnet" in package_data


def test_the_fixtures_are_named_relative_from_the_checkout_and_absolute_elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert fixtures_folder() == "fixtures"  # what records and tests name
    monkeypatch.chdir(tmp_path)
    assert fixtures_folder() == str(ROOT / "fixtures")
    (tmp_path / "fixtures").mkdir()  # a user's own folder of that name is not the bundled samples
    assert fixtures_folder() == str(ROOT / "fixtures")


@pytest.mark.slow  # a whole `allennlp train` per experiment, 10 to 30 s: in `make test-all`, out of the fast suite
@pytest.mark.parametrize("experiment", ["ner_elmo", "snli_baseline"])
def test_a_copied_experiment_trains_from_another_directory(tmp_path, experiment):
    """``elmo-tasks train`` on a copy of the experiment in an empty folder: one epoch of two batches."""
    shutil.copy(ROOT / "experiments" / f"{experiment}.jsonnet", tmp_path / "mine.jsonnet")
    env = environment_without_ours(OMP_NUM_THREADS="1", ELMO_TASKS_DATA="fixtures")
    overrides = {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 2}
    finished([ELMO_TASKS, "train", "mine.jsonnet", "-s", "run", "-o", json.dumps(overrides)], tmp_path, env)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["train_data_path"].startswith(str(ROOT / "fixtures"))
    assert (tmp_path / "run" / "model.tar.gz").is_file()


def test_the_harness_resolves_the_experiments_in_its_own_process(tmp_path):
    """``scripts/reproduce.py`` resolves every run's config itself (its fingerprint) before any command:
    from another directory, in a fresh process, the blocks are found there too."""
    script = str(ROOT / "scripts" / "reproduce.py")
    asked = ["ner", "--budget", "smoke", "--reuse-only", "--runs-dir", str(tmp_path / "runs")]
    completed = subprocess.run(
        [sys.executable, script, *asked], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "cannot resolve" not in completed.stdout and "not finished, skipped (--reuse-only)" in completed.stdout
