"""crf_log_likelihood against AllenNLP's ConditionalRandomField: the same value and gradients."""

import pytest
import torch
from allennlp.modules.conditional_random_field import ConditionalRandomField

from elmo_tasks.tasks.ner import crf_likelihood
from elmo_tasks.tasks.ner.crf_likelihood import crf_log_likelihood

TAGS = 7


def _batch(lengths, dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    steps = max(lengths)
    logits = torch.randn(len(lengths), steps, TAGS, generator=generator, dtype=dtype) * 3
    tags = torch.randint(0, TAGS, (len(lengths), steps), generator=generator)
    mask = torch.arange(steps).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return logits, tags, mask


def _crf(include_start_end: bool, dtype=torch.float64, seed=1) -> ConditionalRandomField:
    torch.manual_seed(seed)
    crf = ConditionalRandomField(TAGS, include_start_end_transitions=include_start_end).to(dtype)
    with torch.no_grad():  # AllenNLP starts the boundary transitions at zero: make them matter
        for parameter in _trained(crf):
            parameter.normal_(0, 2)
    return crf


def _trained(crf: ConditionalRandomField):
    """The CRF's trained parameters (its constraint mask is a parameter that is not)."""
    return [parameter for parameter in crf.parameters() if parameter.requires_grad]


def _value_and_gradients(compute, crf, logits, tags, mask):
    crf.zero_grad()
    logits = logits.clone().requires_grad_(True)
    value = compute(crf, logits, tags, mask)
    (value * 0.7).backward()  # a gradient other than 1 reaches the function's backward pass
    # a parameter a one-step batch never uses has no gradient in AllenNLP's CRF: zero here
    gradients = [logits.grad] + [
        torch.zeros_like(parameter) if parameter.grad is None else parameter.grad for parameter in _trained(crf)
    ]
    return value.detach(), gradients


@pytest.mark.parametrize("include_start_end", [False, True])
@pytest.mark.parametrize("lengths", [[5, 1, 3, 5], [1], [9, 9], [12, 2, 7, 1, 11]])
def test_value_and_gradients_equal_allennlps_crf(include_start_end, lengths):
    crf = _crf(include_start_end)
    batch = _batch(lengths)
    ours, our_gradients = _value_and_gradients(crf_log_likelihood, crf, *batch)
    theirs, their_gradients = _value_and_gradients(
        lambda module, logits, tags, mask: module(logits, tags, mask), crf, *batch
    )
    assert torch.allclose(ours, theirs, rtol=0, atol=1e-10), (ours, theirs)
    assert len(our_gradients) == len(their_gradients) == (4 if include_start_end else 2)
    for our_gradient, their_gradient in zip(our_gradients, their_gradients, strict=True):
        assert torch.allclose(our_gradient, their_gradient, rtol=0, atol=1e-10)


def test_padding_gets_no_gradient_and_changes_nothing():
    crf = _crf(True)
    logits, tags, mask = _batch([4, 2])
    value, (logit_gradient, *_) = _value_and_gradients(crf_log_likelihood, crf, logits, tags, mask)
    assert torch.count_nonzero(logit_gradient[1, 2:]) == 0
    changed = logits.clone()
    changed[1, 2:] = 1e4  # large scores on padded steps must not leak into the value
    changed_tags = tags.clone()
    changed_tags[1, 2:] = 0
    again, _ = _value_and_gradients(crf_log_likelihood, crf, changed, changed_tags, mask)
    assert torch.allclose(value, again, rtol=0, atol=1e-10)


def test_float32_agrees_with_allennlps_crf_to_rounding():
    crf = _crf(False, dtype=torch.float32)
    batch = _batch([40, 33, 12, 3, 40], dtype=torch.float32)
    ours, our_gradients = _value_and_gradients(crf_log_likelihood, crf, *batch)
    theirs, their_gradients = _value_and_gradients(
        lambda module, logits, tags, mask: module(logits, tags, mask), crf, *batch
    )
    assert torch.allclose(ours, theirs, rtol=1e-6, atol=0)
    for our_gradient, their_gradient in zip(our_gradients, their_gradients, strict=True):
        assert torch.allclose(our_gradient, their_gradient, rtol=1e-4, atol=1e-5)


def test_a_wrong_gradient_would_be_seen():
    """Negative control: the comparison above notices a gradient that is off by a little."""
    crf = _crf(True)
    batch = _batch([5, 3])
    _, our_gradients = _value_and_gradients(crf_log_likelihood, crf, *batch)
    _, their_gradients = _value_and_gradients(
        lambda module, logits, tags, mask: module(logits, tags, mask), crf, *batch
    )
    assert not torch.allclose(our_gradients[1] * (1 + 1e-8), their_gradients[1], rtol=0, atol=1e-10)


@pytest.mark.parametrize("extreme, falls_back", [("transitions", True), ("emissions", False)])
def test_scores_far_apart_give_allennlps_value_and_gradients(monkeypatch, extreme, falls_back):
    """Transitions that make every probability of a step underflow in float32 (scores 200 apart) are
    computed in log space, and emissions 1e4 apart need not be (each step's are shifted to their
    maximum): either way the value and gradients are AllenNLP's, finite."""
    log_space_calls = []
    log_space = crf_likelihood._log_space
    monkeypatch.setattr(crf_likelihood, "_log_space", lambda *inputs: log_space_calls.append(1) or log_space(*inputs))
    crf = _crf(True, dtype=torch.float32)
    logits, tags, mask = _batch([6, 4], dtype=torch.float32)
    with torch.no_grad():
        if extreme == "transitions":  # step 0 must be tag 0, step 2 tag 3, and leaving tag 0 costs 200
            crf.transitions[0] = -200.0
            crf.transitions[0, 0] = 0.0
            logits[:, 0] = -300.0
            logits[:, 0, 0] = 0.0
            logits[:, 2] = -300.0
            logits[:, 2, 3] = 0.0
        else:
            logits[:, 1] = -1e4 * torch.arange(TAGS, dtype=torch.float32)
    ours, our_gradients = _value_and_gradients(crf_log_likelihood, crf, logits, tags, mask)
    assert bool(log_space_calls) == falls_back
    theirs, their_gradients = _value_and_gradients(
        lambda module, logits, tags, mask: module(logits, tags, mask), crf, logits, tags, mask
    )
    assert torch.isfinite(ours) and torch.allclose(ours, theirs, rtol=1e-6, atol=0)
    for our_gradient, their_gradient in zip(our_gradients, their_gradients, strict=True):
        assert torch.isfinite(our_gradient).all()
        assert torch.allclose(our_gradient, their_gradient, rtol=1e-4, atol=1e-5)
