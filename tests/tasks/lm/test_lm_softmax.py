"""Sampled vs exact softmax: hand-checkable identities and the untrained-model sanity check."""

import math

import torch
from torch.nn import functional as F

from elmo_tasks.tasks.lm.softmax import LmSoftmax


def _softmax(vocab=7, dim=5, **kwargs) -> LmSoftmax:
    torch.manual_seed(0)
    layer = LmSoftmax(vocab, dim, **kwargs)
    with torch.no_grad():
        layer.bias.normal_()
    return layer


def test_exact_nll_is_cross_entropy_without_the_padding_class():
    layer = _softmax(num_samples=3)
    hidden, targets = torch.randn(4, 5), torch.tensor([1, 2, 6, 3])
    logits = hidden @ layer.weight[1:].T + layer.bias[1:]  # class 0 (padding) cannot be predicted
    expected = F.cross_entropy(logits, targets - 1, reduction="none")
    assert torch.allclose(layer.exact_nll(hidden, targets, chunk=3), expected, atol=1e-6)


def test_sampled_nll_equals_exact_when_every_class_is_sampled_once():
    # uniform proposal, S = number of real classes, each drawn once: expected counts are all 1,
    # so the correction vanishes and removing the accidental hit leaves exactly the full softmax.
    layer = _softmax(num_samples=6, sampler="uniform")
    hidden, targets = torch.randn(4, 5), torch.tensor([1, 2, 6, 3])
    sampled = layer.sampled_nll(hidden, targets, samples=torch.arange(1, 7))
    assert torch.allclose(sampled, layer.exact_nll(hidden, targets), atol=1e-5)


def test_sampled_nll_by_hand_with_correction_and_accidental_hit():
    layer = _softmax(num_samples=2, sampler="uniform")
    hidden, target, samples = torch.randn(1, 5), torch.tensor([4]), torch.tensor([4, 2])
    logit = lambda k: float((hidden[0] @ layer.weight[k] + layer.bias[k]).detach()) - math.log(2 / 6)  # noqa: E731
    # the sample equal to the target is dropped: candidates are the target and class 2
    expected = -(logit(4) - math.log(math.exp(logit(4)) + math.exp(logit(2))))
    assert abs(float(layer.sampled_nll(hidden, target, samples)[0].detach()) - expected) < 1e-5


def test_log_uniform_proposal_is_a_zipf_distribution_over_real_classes():
    q = _softmax(vocab=50, num_samples=8)._log_q.exp()
    assert q[0] == 0 and abs(float(q.sum()) - 1) < 1e-6
    assert torch.all(q[1:-1] > q[2:])  # decreasing with rank (frequent words first)
    # rank r (0-based among real classes) has probability log((r+2)/(r+1)) / log(V'+1)
    assert abs(float(q[1]) - math.log(2) / math.log(50)) < 1e-6
    samples = _softmax(vocab=50, num_samples=4000).sample()
    assert samples.min() >= 1 and samples.max() <= 49


def _one_column_per_draw(layer: LmSoftmax, hidden, targets, samples):
    """The textbook sampled softmax: one logit column per draw, accidental hits removed."""
    log_expected = math.log(layer.num_samples) + layer._log_q
    true = (hidden * layer.weight[targets]).sum(-1) + layer.bias[targets] - log_expected[targets]
    sampled = F.linear(hidden, layer.weight[samples], layer.bias[samples]) - log_expected[samples]
    sampled = sampled.masked_fill(targets.unsqueeze(1) == samples.unsqueeze(0), float("-inf"))
    return -F.log_softmax(torch.cat([true.unsqueeze(1), sampled], dim=1), dim=1)[:, 0]


def test_distinct_classes_with_draw_counts_give_the_same_loss_and_gradients():
    layer = _softmax(vocab=30, num_samples=40)
    hidden, targets = torch.randn(12, 5), torch.randint(1, 30, (12,))
    samples = layer.sample()
    assert samples.unique().numel() < samples.numel()  # log-uniform draws repeat frequent classes
    assert (targets.unsqueeze(1) == samples).any()  # and hit some targets
    ours = layer.sampled_nll(hidden, targets, samples)
    (grad_ours,) = torch.autograd.grad(ours.sum(), layer.weight)
    reference = _one_column_per_draw(layer, hidden, targets, samples)
    (grad_reference,) = torch.autograd.grad(reference.sum(), layer.weight)
    assert torch.allclose(ours, reference, atol=1e-5)
    assert torch.allclose(grad_ours, grad_reference, atol=1e-5)
