"""A SIGKILL (or a power cut) while AllenNLP writes a checkpoint: ``--recover`` resumes from the newest whole one.

The kill is real: a forked copy of this process saves a checkpoint holding an object whose pickling
SIGKILLs that copy, in the model state or in the training state, after an earlier checkpoint was saved
whole. This process then resumes as ``allennlp train --recover`` does (``Checkpointer.load_checkpoint``);
AllenNLP's own ``find_latest_checkpoint`` (``__wrapped__``) is the negative control. The slow test does the
same through the real ``allennlp train``, with a checkpoint cut short as a kill would leave it.
"""

import json
import logging
import os
import signal
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, Optional

import pytest
import torch
from allennlp.training.checkpointer import Checkpointer, TrainerCheckpoint

from elmo_tasks.whole_checkpoints import install_whole_checkpoints, is_whole_torch_file
from tests.command_runs import finished
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
WARNING_SOURCE = "elmo_tasks.whole_checkpoints"


class KilledWhilePickled:
    """SIGKILLs the process that pickles it: a kill in the instant ``torch.save`` writes."""

    def __reduce__(self):
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("SIGKILL did not end the process")


def _trainer(epoch: int, killed_in: Optional[str] = None) -> SimpleNamespace:
    """What ``save_checkpoint`` asks a trainer for: weights and a training state telling ``epoch``, one of
    them (``"model_state"`` or ``"trainer_state"``) holding a :class:`KilledWhilePickled` if ``killed_in``."""
    states: Dict[str, Dict[str, Any]] = {
        "model_state": {"weight": torch.full((4,), float(epoch))},
        "trainer_state": {"epochs_completed": epoch, "batches_in_epoch_completed": 0},
    }
    if killed_in is not None:
        states[killed_in]["killer"] = KilledWhilePickled()
    state = TrainerCheckpoint(**states)
    return SimpleNamespace(get_checkpoint_state=lambda: state)


def _killed_while_saving(folder: Path, epoch: int, where: str) -> None:
    """A fork of this process saves checkpoint ``epoch`` with the killer in ``where`` and dies of SIGKILL."""
    trainer = _trainer(epoch, killed_in=where)
    child = os.fork()
    if child == 0:  # the copy: never returns into pytest
        try:
            Checkpointer(str(folder)).save_checkpoint(trainer)
        finally:
            os._exit(3)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


def _names(folder: Path):
    return sorted(path.name for path in folder.iterdir())


@pytest.fixture(autouse=True)
def _installed():
    install_whole_checkpoints()  # where every command starts (conftest's start_command did it too)


@pytest.mark.parametrize(
    "where, left, moved",
    [
        # killed in the model state: its file cut short (empty here), no training state at all
        ("model_state", ["model_state_e2_b0.th"], ["model_state_e2_b0.th.cut-short"]),
        # killed in the training state: a whole model state without its other half
        (
            "trainer_state",
            ["model_state_e2_b0.th", "training_state_e2_b0.th"],
            ["model_state_e2_b0.th.unpaired", "training_state_e2_b0.th.cut-short"],
        ),
    ],
)
def test_a_checkpoint_killed_while_written_is_moved_aside_and_recover_resumes_from_the_whole_one(
    tmp_path, caplog, monkeypatch, where, left, moved
):
    checkpointer = Checkpointer(str(tmp_path))
    checkpointer.save_checkpoint(_trainer(1))
    _killed_while_saving(tmp_path, 2, where)
    whole_e1 = ["model_state_e1_b0.th", "training_state_e1_b0.th"]
    assert _names(tmp_path) == sorted(whole_e1 + left)
    assert not all(is_whole_torch_file(str(tmp_path / name)) for name in left)

    # negative control: AllenNLP's own choice is the broken pair, which its load_checkpoint cannot read
    allennlps_own = Checkpointer.find_latest_checkpoint.__wrapped__
    assert allennlps_own(checkpointer) == (str(tmp_path / left[0]), str(tmp_path / "training_state_e2_b0.th"))
    with monkeypatch.context() as unwrapped:
        unwrapped.setattr(Checkpointer, "find_latest_checkpoint", allennlps_own)
        with pytest.raises(EOFError):  # the file cut short is empty: the kill came while torch.save pickled
            checkpointer.load_checkpoint()

    with caplog.at_level(logging.WARNING, logger=WARNING_SOURCE):
        resumed = checkpointer.load_checkpoint()  # what --recover calls
    assert resumed is not None
    assert resumed.trainer_state["epochs_completed"] == 1
    assert torch.equal(resumed.model_state["weight"], torch.full((4,), 1.0))
    assert _names(tmp_path) == sorted(whole_e1 + moved)  # moved aside under telling names, nothing deleted
    [line] = [record.getMessage() for record in caplog.records if record.name == WARNING_SOURCE]
    for name in left:
        assert name in line
    assert "resuming from model_state_e1_b0.th and training_state_e1_b0.th (after 1 epoch)" in line

    # the epoch trained again is written, not skipped because a file of its name is there
    checkpointer.save_checkpoint(_trainer(2))
    assert torch.equal(torch.load(tmp_path / "model_state_e2_b0.th")["weight"], torch.full((4,), 2.0))
    assert torch.load(tmp_path / "training_state_e2_b0.th")["epochs_completed"] == 2
    assert checkpointer.find_latest_checkpoint() == (
        str(tmp_path / "model_state_e2_b0.th"),
        str(tmp_path / "training_state_e2_b0.th"),
    )


def _cut(path: Path, keep: int) -> None:
    """``path`` replaced by a new file of its first ``keep`` bytes (a new file: ``best.th`` may be a hard link)."""
    contents = path.read_bytes()
    path.unlink()
    path.write_bytes(contents[:keep])


@pytest.mark.parametrize("cut", ["empty", "half", "all but the last byte", "zeros at the end"])
def test_every_way_a_kill_or_power_cut_leaves_a_file_is_seen(tmp_path, cut):
    checkpointer = Checkpointer(str(tmp_path))
    for epoch in (1, 2):
        checkpointer.save_checkpoint(_trainer(epoch))
    newest = tmp_path / "model_state_e2_b0.th"
    size = newest.stat().st_size
    if cut == "zeros at the end":  # the length written, the data not (a power cut before the disk had it)
        contents = newest.read_bytes()
        newest.write_bytes(contents[: size // 2] + bytes(size - size // 2))
    else:
        _cut(newest, {"empty": 0, "half": size // 2, "all but the last byte": size - 1}[cut])
    assert not is_whole_torch_file(str(newest))
    assert checkpointer.find_latest_checkpoint() == (
        str(tmp_path / "model_state_e1_b0.th"),
        str(tmp_path / "training_state_e1_b0.th"),
    )
    assert "model_state_e2_b0.th.cut-short" in _names(tmp_path)
    assert "training_state_e2_b0.th.unpaired" in _names(tmp_path)


def test_whole_checkpoints_are_left_alone_and_no_warning_is_given(tmp_path, caplog):
    checkpointer = Checkpointer(str(tmp_path))
    for epoch in (1, 2):
        checkpointer.save_checkpoint(_trainer(epoch))
    before = _names(tmp_path)
    with caplog.at_level(logging.WARNING, logger=WARNING_SOURCE):
        assert checkpointer.find_latest_checkpoint() == Checkpointer.find_latest_checkpoint.__wrapped__(checkpointer)
    assert _names(tmp_path) == before
    assert not [record for record in caplog.records if record.name == WARNING_SOURCE]
    assert is_whole_torch_file(str(tmp_path / "training_state_e2_b0.th"))
    assert not is_whole_torch_file(str(tmp_path / "model_state_e9_b0.th"))  # missing


def test_with_no_whole_checkpoint_left_training_starts_over_and_earlier_names_are_not_overwritten(tmp_path, caplog):
    (tmp_path / "model_state_e1_b0.th").write_bytes(b"PK\x03\x04")
    (tmp_path / "model_state_e1_b0.th.cut-short").write_bytes(b"moved aside by an earlier --recover")
    with caplog.at_level(logging.WARNING, logger=WARNING_SOURCE):
        assert Checkpointer(str(tmp_path)).load_checkpoint() is None
    assert (tmp_path / "model_state_e1_b0.th.cut-short").read_bytes() == b"moved aside by an earlier --recover"
    assert (tmp_path / "model_state_e1_b0.th.cut-short.1").read_bytes() == b"PK\x03\x04"
    [line] = [record.getMessage() for record in caplog.records if record.name == WARNING_SOURCE]
    assert "model_state_e1_b0.th to model_state_e1_b0.th.cut-short.1" in line
    assert line.endswith("no whole checkpoint is left there, so training starts from the first epoch")


def test_a_newer_training_state_without_its_model_state_is_moved_aside(tmp_path):
    """AllenNLP finds checkpoints by their model state, and would skip writing this training state again."""
    checkpointer = Checkpointer(str(tmp_path))
    for epoch in (1, 2):
        checkpointer.save_checkpoint(_trainer(epoch))
    (tmp_path / "model_state_e2_b0.th").unlink()
    assert checkpointer.find_latest_checkpoint() == (
        str(tmp_path / "model_state_e1_b0.th"),
        str(tmp_path / "training_state_e1_b0.th"),
    )
    assert _names(tmp_path) == ["model_state_e1_b0.th", "training_state_e1_b0.th", "training_state_e2_b0.th.unpaired"]


def test_a_folder_that_does_not_exist_yet_has_no_checkpoint(tmp_path):
    assert Checkpointer(str(tmp_path / "not yet")).find_latest_checkpoint() is None


@pytest.mark.slow  # about a minute: two AllenNLP trainings of 2 epochs on the fixtures
def test_allennlp_train_recover_resumes_from_the_whole_epoch_after_a_checkpoint_cut_short(tmp_path):
    run_dir = tmp_path / "run"
    command = [
        str(BIN / "allennlp"),
        "train",
        "experiments/ner_baseline.jsonnet",
        "-s",
        str(run_dir),
        "-o",
        '{"trainer.num_epochs": 2, "trainer.patience": null}',
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("ELMO_TASKS_DATA", None)  # the fixtures
    finished(command, ROOT, env)
    # as a kill in the instant the last epoch's training state was written leaves the run
    newest = run_dir / "training_state_e2_b0.th"
    _cut(newest, newest.stat().st_size // 2)
    (run_dir / "metrics.json").unlink()
    (run_dir / "model.tar.gz").unlink()
    # negative control: AllenNLP's own choice, which its --recover would load
    checkpointer = Checkpointer(str(run_dir))
    assert Checkpointer.find_latest_checkpoint.__wrapped__(checkpointer)[1] == str(newest)

    recovered = finished([*command, "--recover"], ROOT, env)
    assert "Traceback" not in recovered.stderr
    # AllenNLP logs warnings to the terminal (stdout) and to out.log in the run's folder
    for log in (recovered.stdout, (run_dir / "out.log").read_text(encoding="utf-8")):
        [line] = [line for line in log.splitlines() if "elmo_tasks.whole_checkpoints" in line]
        assert (
            "moved model_state_e2_b0.th to model_state_e2_b0.th.unpaired, "
            "training_state_e2_b0.th to training_state_e2_b0.th.cut-short" in line
        )
        assert "resuming from model_state_e1_b0.th and training_state_e1_b0.th (after 1 epoch)" in line
    # the second epoch was trained again and checkpointed whole; the run finished with its archive
    assert is_whole_torch_file(str(run_dir / "model_state_e2_b0.th"))
    assert is_whole_torch_file(str(newest))
    assert json.loads((run_dir / "metrics.json").read_text())["epoch"] == 1
    with tarfile.open(run_dir / "model.tar.gz") as archive:
        assert "weights.th" in archive.getnames()
