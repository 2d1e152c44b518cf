"""A finished biLM training run made into one that crashed during an epoch, for the ``--recover``
tests of ``test_lm_training.py`` (one process) and ``test_lm_distributed.py`` (two workers)."""

import shutil
from pathlib import Path


def interrupted_copy(finished_run: Path, copy: Path, crashed_epoch: int) -> None:
    """Copies ``finished_run`` to ``copy`` as a crash during ``crashed_epoch`` (from 0) leaves it: that
    epoch's checkpoint (named after the epochs done, ``*_e<crashed_epoch + 1>_b0.th``) and metrics,
    and the run's final metrics, archive and exported biLM never got written. ``best.th`` is left as
    it was: what a crash leaves there depends on the epochs before."""
    shutil.copytree(finished_run, copy)
    for name in (
        f"model_state_e{crashed_epoch + 1}_b0.th",
        f"training_state_e{crashed_epoch + 1}_b0.th",
        f"metrics_epoch_{crashed_epoch}.json",
        "metrics.json",
        "model.tar.gz",
    ):
        (copy / name).unlink(missing_ok=True)
    shutil.rmtree(copy / "elmo")
