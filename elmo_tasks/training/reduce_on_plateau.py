"""``reduce_lr_on_plateau``: AllenNLP's ``reduce_on_plateau`` scheduler, working on torch 2.14.

AllenNLP 2.10 passes ``verbose`` to torch's ``ReduceLROnPlateau``, which torch 2.14 no longer takes, so a
config naming ``reduce_on_plateau`` (allennlp-models' ESIM configs, for one) fails with a TypeError before
training begins. This class takes AllenNLP's arguments under a name of its own (our plugin never writes
over one of AllenNLP's names): change the ``type`` and nothing else. ``verbose`` is still accepted and does
nothing (torch no longer prints the reductions).
"""

from typing import List, Literal, Union

import torch
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.learning_rate_schedulers.learning_rate_scheduler import (
    _PyTorchLearningRateSchedulerWithMetricsWrapper,
)

NAME = "reduce_lr_on_plateau"


@LearningRateScheduler.register(NAME)
class ReduceOnPlateauScheduler(_PyTorchLearningRateSchedulerWithMetricsWrapper):
    """Multiplies the learning rate by ``factor`` once the validation metric has not improved for ``patience``
    epochs (``mode``: ``max`` for a metric to raise, ``min`` for a loss)."""

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        mode: Literal["min", "max"] = "min",
        factor: float = 0.1,
        patience: int = 10,
        verbose: bool = False,
        threshold_mode: Literal["rel", "abs"] = "rel",
        threshold: float = 1e-4,
        cooldown: int = 0,
        min_lr: Union[float, List[float]] = 0,
        eps: float = 1e-8,
    ) -> None:
        del verbose  # accepted for AllenNLP's configs; torch 2.14's ReduceLROnPlateau has no such argument
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer=optimizer,
            mode=mode,
            factor=factor,
            patience=patience,
            threshold_mode=threshold_mode,
            threshold=threshold,
            cooldown=cooldown,
            min_lr=min_lr,
            eps=eps,
        )
        # AllenNLP's wrapper is typed for torch's _LRScheduler, which ReduceLROnPlateau is not (AllenNLP's own
        # reduce_on_plateau passes it the same way: the wrapper only calls step() and state_dict()).
        super().__init__(scheduler)  # type: ignore[arg-type]
