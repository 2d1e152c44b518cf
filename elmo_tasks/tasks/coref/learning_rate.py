"""Lee et al. (2017)'s learning-rate schedule: the rate decays by a factor every fixed number of updates.

e2e-coref (Lee et al.'s code) multiplies Adam's rate by 0.999 every 100 updates, in steps
(TensorFlow's ``exponential_decay`` with ``staircase=True``), one update being one document.
AllenNLP's ``exponential`` scheduler steps once per epoch only, so its decay per update would depend
on how many documents an epoch has; ``staircase_exponential`` counts updates, as Lee et al. do.
"""

from typing import List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.training.learning_rate_schedulers import LearningRateScheduler


@LearningRateScheduler.register("staircase_exponential")
class StaircaseExponentialLR(LearningRateScheduler):
    """The rate of update n (counted from 1) is the optimizer's rate times
    ``decay_rate ** ((n - 1) // decay_steps)``: constant for ``decay_steps`` updates, then one step down.

    The rate depends on the update count alone (AllenNLP's trainer passes it to ``step_batch`` before
    each update), so a run recovered from a checkpoint goes on with the rate it had.
    """

    def __init__(
        self, optimizer: torch.optim.Optimizer, decay_rate: float, decay_steps: int, last_epoch: int = -1
    ) -> None:
        if not 0.0 < decay_rate <= 1.0 or decay_steps < 1:
            raise ConfigurationError(
                f"staircase_exponential needs 0 < decay_rate <= 1 and decay_steps >= 1, got {decay_rate} and "
                f"{decay_steps}"
            )
        self.decay_rate = decay_rate
        self.decay_steps = decay_steps
        self.update = 0  # the update whose rate was set last (0: none yet)
        super().__init__(optimizer, last_epoch=last_epoch)

    def step(self, metric: Optional[float] = None) -> None:
        """An epoch's end changes nothing: the rate follows the updates."""

    def step_batch(self, batch_num_total: Optional[int] = None) -> None:
        """Sets the rate of update ``batch_num_total`` (the trainer calls this before the update)."""
        self.update = self.update + 1 if batch_num_total is None else batch_num_total
        for group, value in zip(self.optimizer.param_groups, self.get_values(), strict=True):
            group[self.param_group_field] = value

    def get_values(self) -> List[float]:
        factor = self.decay_rate ** (max(self.update - 1, 0) // self.decay_steps)
        return [base * factor for base in self.base_values]
