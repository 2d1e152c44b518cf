"""The private PyTorch operators of ``elmo_tasks/bilm/torch_private.py`` still behave as relied on.

A failure here means a PyTorch upgrade changed them: fix the adapter, nothing else uses them."""

import pytest
import torch

ADAPTER = "elmo_tasks/bilm/torch_private.py"


def _adapter():
    try:
        from elmo_tasks.bilm import torch_private
    except (AttributeError, RuntimeError) as error:  # torch.ops raises these for a missing operator/overload
        pytest.fail(f"{ADAPTER} no longer imports with torch {torch.__version__}: {error}; replace the operator there")
    return torch_private


def _check(found: torch.Tensor, expected: torch.Tensor, what: str) -> None:
    if not torch.allclose(found, expected, rtol=1e-12, atol=1e-12):
        pytest.fail(f"{ADAPTER}: {what} no longer computes the derivative it relies on with torch {torch.__version__}")


def test_sigmoid_backward_writes_the_sigmoid_derivative_into_grad_input():
    adapter = _adapter()
    grad, value = torch.randn(2, 3, 8, dtype=torch.float64), torch.rand(2, 3, 8, dtype=torch.float64)
    target = torch.zeros(2, 3, 16, dtype=torch.float64)
    returned = adapter.sigmoid_backward(grad, value, grad_input=target[..., 8:])
    _check(target[..., 8:], grad * value * (1 - value), "sigmoid_backward (aten.sigmoid_backward.grad_input)")
    assert torch.equal(target[..., :8], torch.zeros(2, 3, 8, dtype=torch.float64)), (
        f"{ADAPTER}: wrote outside grad_input"
    )
    _check(returned, target[..., 8:], "sigmoid_backward's return value")


def test_tanh_backward_returns_or_writes_the_tanh_derivative():
    adapter = _adapter()
    grad, value = torch.randn(4, 5, dtype=torch.float64), torch.rand(4, 5, dtype=torch.float64) * 2 - 1
    expected = grad * (1 - value * value)
    _check(adapter.tanh_backward(grad, value), expected, "tanh_backward (aten.tanh_backward.default)")
    target = torch.zeros(4, 10, dtype=torch.float64)
    adapter.tanh_backward(grad, value, grad_input=target[:, 5:])
    _check(target[:, 5:], expected, "tanh_backward into grad_input (aten.tanh_backward.grad_input)")


def test_the_derivatives_match_autograd_in_float32():
    """The biLM trains in float32: the kernels must give autograd's own numbers, bit for bit."""
    adapter = _adapter()
    x, grad = torch.randn(64, requires_grad=True), torch.randn(64)
    for function, backward in ((torch.sigmoid, adapter.sigmoid_backward), (torch.tanh, adapter.tanh_backward)):
        y = function(x)
        (expected,) = torch.autograd.grad(y, x, grad)
        found = backward(grad, y.detach(), grad_input=torch.empty(64))
        if not torch.equal(found, expected):
            pytest.fail(f"{ADAPTER}: {backward.__name__} differs from autograd's with torch {torch.__version__}")
