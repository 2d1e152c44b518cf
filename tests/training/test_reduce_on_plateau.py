"""``reduce_lr_on_plateau`` from a config with AllenNLP's ``reduce_on_plateau`` arguments (``verbose`` included),
on the torch this project runs, where AllenNLP's own class fails."""

import pytest
import torch
from allennlp.common import Params
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

import elmo_tasks.plugin  # noqa: F401
from elmo_tasks.training import ReduceOnPlateauScheduler


def _scheduler(**arguments):
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.0004)
    params = Params({"type": "reduce_lr_on_plateau", **arguments})
    return optimizer, LearningRateScheduler.from_params(params=params, optimizer=optimizer)


def test_the_name_gives_our_class_and_allennlps_name_keeps_its_own():
    assert LearningRateScheduler.by_name("reduce_lr_on_plateau") is ReduceOnPlateauScheduler
    assert LearningRateScheduler.by_name("reduce_on_plateau") is not ReduceOnPlateauScheduler


@pytest.mark.parametrize("verbose", [False, True])
def test_the_rate_is_halved_after_each_epoch_without_improvement(verbose):
    optimizer, scheduler = _scheduler(mode="max", factor=0.5, patience=0, verbose=verbose)
    rates = []
    for accuracy in (0.50, 0.60, 0.55, 0.58, 0.70, 0.70):  # improves, improves, no, no, improves, no
        scheduler.step(accuracy)
        rates.append(optimizer.param_groups[0]["lr"])
    assert rates == pytest.approx([0.0004, 0.0004, 0.0002, 0.0001, 0.0001, 0.00005])


def test_a_loss_waits_for_patience_epochs():
    optimizer, scheduler = _scheduler(mode="min", factor=0.1, patience=2)
    for loss in (1.0, 1.1, 1.2):
        scheduler.step(loss)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.0004)  # two epochs without improvement: waiting
    scheduler.step(1.3)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.00004)
