"""``--recover`` after a stop between an epoch's checkpoint and its ``best.th`` (AllenNLP writes them in that
order): the restored epoch's ``best.th`` is written again, so the run archives its best model
(elmo_tasks/whole_checkpoints.py). Found as an intermittent failure of tests/faults/test_training_signals.py."""

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from elmo_tasks.allennlp_internals import resumed_at_the_end_of_its_best_epoch as resumed_at_best
from elmo_tasks.whole_checkpoints import _write_best_model
from tests.command_runs import finished
from tests.conftest import ROOT

BIN = Path(sys.executable).parent


def _tracker(best_so_far: bool, validations: int):
    return SimpleNamespace(is_best_so_far=lambda: best_so_far, state_dict=lambda: {"epoch_number": validations})


def _trainer(tmp_path, epochs=2, batches=0, best_so_far=True, validations=2, **more):
    fields = dict(
        _serialization_dir=str(tmp_path),
        _start_after_epochs_completed=epochs,
        _start_after_batches_in_epoch_completed=batches,
        _ddp_wrapped_model=None,
        _primary=True,
        _metric_tracker=_tracker(best_so_far, validations),
        _moving_average=None,
        _best_model_filename=None,
        model=torch.nn.Linear(2, 1),
    )
    fields.update(more)
    trainer = SimpleNamespace(**fields)
    trainer._save_model_state = lambda path: torch.save(trainer.model.state_dict(), path)
    return trainer


def test_only_the_end_of_a_validated_best_epoch_is_written_again(tmp_path):
    assert resumed_at_best(_trainer(tmp_path))
    assert not resumed_at_best(_trainer(tmp_path, batches=3))  # mid-epoch: not that epoch's model
    assert not resumed_at_best(_trainer(tmp_path, best_so_far=False))
    assert not resumed_at_best(_trainer(tmp_path, validations=1))  # the last epoch was not validated
    assert not resumed_at_best(_trainer(tmp_path, epochs=0, validations=0))  # a fresh start
    assert not resumed_at_best(_trainer(tmp_path, _primary=False))


def test_the_best_model_is_written_whole_and_named(tmp_path):
    trainer = _trainer(tmp_path)
    _write_best_model(trainer)
    assert sorted(os.listdir(tmp_path)) == ["best.th"]
    assert trainer._best_model_filename == str(tmp_path / "best.th")
    saved = torch.load(tmp_path / "best.th")
    assert all(torch.equal(saved[name], value) for name, value in trainer.model.state_dict().items())


@pytest.mark.slow  # two short trainings on the fixtures, each in a fresh `elmo-tasks` process
def test_recover_after_a_stop_before_best_th_archives_the_checkpointed_best_model(tmp_path):
    """One epoch trained and checkpointed; ``best.th`` gone as a stop in that window leaves it. ``--recover``
    (nothing left to train) must archive, with ``best.th`` the epoch's checkpointed model."""
    run_dir = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("ELMO_TASKS_DATA", None)  # the fixtures
    train = [str(BIN / "elmo-tasks"), "train", "experiments/ner_baseline.jsonnet", "-s", str(run_dir)]
    finished([*train, "-o", '{"trainer.num_epochs": 1}'], ROOT, env)
    checkpoints = sorted(run_dir.glob("model_state_e*.th"))
    assert checkpoints, sorted(os.listdir(run_dir))
    checkpointed = torch.load(checkpoints[-1])
    for name in ("best.th", "metrics.json", "model.tar.gz"):
        (run_dir / name).unlink()
    finished([*train, "-o", '{"trainer.num_epochs": 1}', "--recover"], ROOT, env)
    assert (run_dir / "model.tar.gz").exists() and (run_dir / "metrics.json").exists()
    best = torch.load(run_dir / "best.th")
    assert best.keys() == checkpointed.keys()
    assert all(torch.equal(best[name], checkpointed[name]) for name in best)
