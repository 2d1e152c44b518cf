"""``fused_adam``: the same updates as AllenNLP's ``adam``, to float rounding, from the same config keys."""

import torch
from allennlp.common import Params
from allennlp.training.optimizers import Optimizer

from elmo_tasks.training.fused_adam import FusedAdamOptimizer


def _trained_weights(optimizer_type: str) -> list:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(7, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    params = Params({"type": optimizer_type, "lr": 0.01, "betas": [0.8, 0.99], "weight_decay": 0.01})
    optimizer = Optimizer.from_params(model_parameters=list(model.named_parameters()), params=params)
    initial = [p.detach().clone() for p in model.parameters()]
    inputs, targets = torch.randn(16, 7), torch.randn(16, 3)
    for _ in range(10):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        optimizer.step()
    trained = [p.detach().clone() for p in model.parameters()]
    moved = max((after - before).abs().max().item() for after, before in zip(trained, initial, strict=True))
    assert moved > 0.01  # the steps moved the weights: equal results below are not untouched values
    return trained, optimizer


def test_fused_adam_updates_as_adam_does():
    plain, plain_optimizer = _trained_weights("adam")
    fused, fused_optimizer = _trained_weights("fused_adam")
    assert isinstance(fused_optimizer, FusedAdamOptimizer) and fused_optimizer.defaults["fused"]
    assert not plain_optimizer.defaults.get("fused")
    for left, right in zip(plain, fused, strict=True):
        torch.testing.assert_close(left, right, rtol=1e-5, atol=1e-6)
