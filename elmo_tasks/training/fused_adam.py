"""``fused_adam``: AllenNLP's ``adam`` with torch's fused kernel, one update over all parameters at once.

AllenNLP 2.10's ``adam`` builds ``torch.optim.Adam`` without ``fused``, so on the CPU torch updates the
parameters one tensor at a time, several small operations each. The fused kernel (torch 2.4 and later, on
the CPU and on CUDA) does the same arithmetic in one pass; the results equal ``adam``'s up to float
rounding (tests/training/test_fused_adam.py). The arguments are ``adam``'s: change the ``type`` only.
"""

from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.training.optimizers import Optimizer, make_parameter_groups

NAME = "fused_adam"


@Optimizer.register(NAME)
class FusedAdamOptimizer(Optimizer, torch.optim.Adam):
    """Adam (Kingma and Ba, 2015) as ``adam`` computes it, with ``fused=True``."""

    def __init__(
        self,
        model_parameters: List[Tuple[str, torch.nn.Parameter]],
        parameter_groups: Optional[List[Tuple[List[str], Dict[str, Any]]]] = None,
        lr: float = 0.001,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-08,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ) -> None:
        super().__init__(
            params=make_parameter_groups(model_parameters, parameter_groups),
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            fused=True,
        )
