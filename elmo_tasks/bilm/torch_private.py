"""The one place the biLM uses a PyTorch interface that is not public: autograd's fused derivative kernels.

``ProjectedLstmLoop`` (``lstm_time_loop.py``) writes its own backward pass, and the derivatives of
sigmoid and tanh given the forward outputs are exactly what autograd's ``sigmoid_backward`` and
``tanh_backward`` ATen operators compute: ``grad * y * (1 - y)`` and ``grad * (1 - y * y)`` in one
kernel, written into a slice of the packed gate gradient (their ``grad_input`` overloads) without
a temporary. PyTorch has no public function for either; the elementwise formulas would give the same
numbers up to float rounding but several temporaries per step, and change the trained weights' bits.

Relied on (checked by ``tests/bilm/test_torch_private.py``, whose failure names this module): the
operators ``torch.ops.aten.sigmoid_backward`` and ``torch.ops.aten.tanh_backward`` exist, take
``(grad_output, output)``, and their ``.grad_input`` overloads write into ``grad_input=``. If an upgrade
breaks that, replace the three functions here (e.g. by the elementwise formulas), nothing else.
"""

from typing import Optional

import torch

_SIGMOID_BACKWARD_INTO = torch.ops.aten.sigmoid_backward.grad_input
_TANH_BACKWARD = torch.ops.aten.tanh_backward.default
_TANH_BACKWARD_INTO = torch.ops.aten.tanh_backward.grad_input


def sigmoid_backward(grad: torch.Tensor, sigmoid_value: torch.Tensor, grad_input: torch.Tensor) -> torch.Tensor:
    """``grad * s * (1 - s)`` for ``s = sigmoid(x)``, written into ``grad_input`` (also returned)."""
    return _SIGMOID_BACKWARD_INTO(grad, sigmoid_value, grad_input=grad_input)


def tanh_backward(
    grad: torch.Tensor, tanh_value: torch.Tensor, grad_input: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """``grad * (1 - t * t)`` for ``t = tanh(x)``: a new tensor, or written into ``grad_input``."""
    if grad_input is None:
        return _TANH_BACKWARD(grad, tanh_value)
    return _TANH_BACKWARD_INTO(grad, tanh_value, grad_input=grad_input)
