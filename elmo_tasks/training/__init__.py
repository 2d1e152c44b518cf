"""Training pieces AllenNLP 2.10 lacks or breaks on the torch this project runs (2.14): importing this package
(our plugin does) registers them."""

from elmo_tasks.training.fused_adam import FusedAdamOptimizer
from elmo_tasks.training.reduce_on_plateau import ReduceOnPlateauScheduler

__all__ = ["FusedAdamOptimizer", "ReduceOnPlateauScheduler"]
