"""elmo_tasks.whole_checkpoints: a SIGTERM while AllenNLP writes a checkpoint waits until both files are whole.

The signal is sent from inside the pickling of the model state, the moment the reproduction harness's
stop could land in; AllenNLP's own ``save_checkpoint`` is the negative control.
"""

import os
import signal
from types import SimpleNamespace

import pytest
import torch
from allennlp.training.checkpointer import Checkpointer, TrainerCheckpoint

from elmo_tasks.whole_checkpoints import install_whole_checkpoints, signals_deferred


class Stopped(Exception):
    """What the test's SIGTERM handler raises, as ``allennlp train``'s raises ``SigTermReceived``."""


class SignalWhilePickled:
    """Sends SIGTERM to this process when ``torch.save`` pickles it, then pickles as ``0``."""

    def __reduce__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        return (int, (0,))


def _trainer(epoch: int) -> SimpleNamespace:
    state = TrainerCheckpoint(
        model_state={"weight": torch.arange(4.0), "signal": SignalWhilePickled()},
        trainer_state={"epochs_completed": epoch, "batches_in_epoch_completed": 0},
    )
    return SimpleNamespace(get_checkpoint_state=lambda: state)


def _raise_stopped(_signum, _frame):
    raise Stopped()


@pytest.fixture
def sigterm_raises():
    earlier = signal.signal(signal.SIGTERM, _raise_stopped)
    yield
    signal.signal(signal.SIGTERM, earlier)


def _files(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".th"))


def test_allennlps_own_checkpoint_is_cut_short_by_the_signal(tmp_path, sigterm_raises):
    """Negative control: AllenNLP's save, unwrapped, stops inside the model state's file."""
    install_whole_checkpoints()
    allennlps_own = Checkpointer.save_checkpoint.__wrapped__
    with pytest.raises(Stopped):
        allennlps_own(Checkpointer(str(tmp_path)), _trainer(1))
    # the model state cut short (or absent), its training state never written
    assert "training_state_e1_b0.th" not in _files(tmp_path)


def test_a_checkpoint_is_written_whole_and_the_stop_follows(tmp_path, sigterm_raises):
    install_whole_checkpoints()
    checkpointer = Checkpointer(str(tmp_path))
    with pytest.raises(Stopped):
        checkpointer.save_checkpoint(_trainer(2))
    assert _files(tmp_path) == ["model_state_e2_b0.th", "training_state_e2_b0.th"]
    model_state = torch.load(tmp_path / "model_state_e2_b0.th", weights_only=False)
    assert torch.equal(model_state["weight"], torch.arange(4.0)) and model_state["signal"] == 0
    assert torch.load(tmp_path / "training_state_e2_b0.th")["epochs_completed"] == 2
    # what --recover reads
    assert checkpointer.find_latest_checkpoint() == (
        str(tmp_path / "model_state_e2_b0.th"),
        str(tmp_path / "training_state_e2_b0.th"),
    )
    assert signal.getsignal(signal.SIGTERM) is _raise_stopped  # the earlier handler is back


def test_no_signal_means_no_stop_and_the_handlers_come_back():
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    with signals_deferred():
        pass
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_installing_twice_wraps_each_method_once():
    install_whole_checkpoints()
    saving, finding = Checkpointer.save_checkpoint, Checkpointer.find_latest_checkpoint
    install_whole_checkpoints()
    assert Checkpointer.save_checkpoint is saving and Checkpointer.find_latest_checkpoint is finding
    assert not hasattr(saving.__wrapped__, "__wrapped__") and not hasattr(finding.__wrapped__, "__wrapped__")
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    restoring = GradientDescentTrainer._maybe_restore_checkpoint
    install_whole_checkpoints()
    assert GradientDescentTrainer._maybe_restore_checkpoint is restoring
    assert not hasattr(restoring.__wrapped__, "__wrapped__")
