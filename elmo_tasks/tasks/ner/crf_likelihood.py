"""The CRF's log-likelihood for training, as AllenNLP's ``ConditionalRandomField.forward`` defines it, faster.

AllenNLP's CRF computes the log partition with a Python loop of about ten small operations per time step,
each recorded by autograd, and the gold path's score with another loop; autograd then runs back through
every step. On 64 sentences of up to 60 tokens and 17 BIOUL tags that took about 0.05 CPU s, a quarter
of a NER training step at the mini sizes (less on CoNLL's shorter batches). Here the gold score is a
few gathers, and the log partition is an autograd function: its forward pass runs the recursion
untracked, and its backward pass computes the gradients directly, as the tag and tag-pair marginals (the
forward-backward algorithm; the gradient of a log partition is the expected count of what it sums over),
with one backward recursion and no per-step graph. The value is the same to float rounding
(``tests/tasks/ner/test_crf_likelihood.py`` checks value and gradients against AllenNLP's CRF in float64).
The CRF module and its parameters stay AllenNLP's (decoding: ``viterbi.py``).
"""

from typing import Any, Optional, Tuple

import torch
from allennlp.modules.conditional_random_field import ConditionalRandomField


def crf_log_likelihood(
    crf: ConditionalRandomField, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """``crf(logits, tags, mask)``: the sum over the batch of log P(tags | logits).

    ``logits`` (batch, steps, tags), ``tags`` (batch, steps), ``mask`` (batch, steps), each sentence's
    mask a prefix that includes its first step (AllenNLP's CRF assumes the same).
    """
    mask = mask.to(torch.bool)
    start, end = _boundary_transitions(crf, logits)
    log_partition = _LogPartition.apply(logits, crf.transitions, start, end, mask)
    return (_gold_path_scores(crf, logits, tags, mask) - log_partition).sum()


def _boundary_transitions(crf: ConditionalRandomField, logits: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The start and end transition scores, zeros (constant) where the CRF has none."""
    if crf.include_start_end_transitions:
        return crf.start_transitions, crf.end_transitions
    zeros = logits.new_zeros(logits.size(-1))
    return zeros, zeros


def _gold_path_scores(
    crf: ConditionalRandomField, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """(batch,) each sentence's score of its gold tags: emissions, transitions and boundary transitions."""
    weights = mask.to(logits.dtype)
    emissions = (logits.gather(2, tags.unsqueeze(2)).squeeze(2) * weights).sum(1)
    transitions = (crf.transitions[tags[:, :-1], tags[:, 1:]] * weights[:, 1:]).sum(1)
    score = emissions + transitions
    if crf.include_start_end_transitions:
        last_tags = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        score = score + crf.start_transitions[tags[:, 0]] + crf.end_transitions[last_tags]
    return score


class _LogPartition(torch.autograd.Function):
    """(batch,) log Z of each sentence; gradients by forward-backward instead of through the recursion.

    The recursions run on probabilities rather than logs: a step is one small matrix product with the
    exponentiated transitions, a product with the step's exponentiated emissions (each shifted to a
    maximum of 0 first) and a renormalization to sum 1, whose logarithms are summed into log Z. That is a
    fifth of the work of a log-sum-exp per step, and as exact: each step's marginals come from
    renormalized scores, never from the exponential of a difference of two large logs. Where some step's
    probabilities all underflow (transitions or emissions far below the others, more than float32's
    range), the batch's gradients or value are computed in log space instead (``_log_space``).
    """

    @staticmethod
    def forward(
        ctx: Any,
        logits: torch.Tensor,
        transitions: torch.Tensor,
        start: torch.Tensor,
        end: torch.Tensor,
        mask: torch.Tensor,
    ) -> torch.Tensor:
        scaled = _Scaled(logits, transitions, start, end)
        alphas = [scaled.start * scaled.emissions[:, 0]]
        norms = [alphas[0].sum(1)]
        alphas[0] = alphas[0] / norms[0].unsqueeze(1)
        for step in range(1, logits.size(1)):
            moved = (alphas[-1] @ scaled.transitions) * scaled.emissions[:, step]
            norm = moved.sum(1)
            real = mask[:, step]
            alphas.append(torch.where(real.unsqueeze(1), moved / norm.unsqueeze(1), alphas[-1]))
            norms.append(norm)
        forward_probabilities = torch.stack(alphas, dim=1)  # a padded step repeats the last real one
        log_norms = torch.where(mask, torch.log(torch.stack(norms, dim=1)) + scaled.emission_shifts, 0.0)
        log_partition = (
            log_norms.sum(1)
            + (mask[:, 1:].sum(1) * scaled.transition_shift)
            + torch.log((forward_probabilities[:, -1] * scaled.end).sum(1))
            + scaled.boundary_shift
        )
        ctx.save_for_backward(logits, transitions, start, end, mask, forward_probabilities)
        if not torch.isfinite(log_partition).all():
            return _log_space(logits, transitions, start, end, mask).detach()
        return log_partition

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        logits, transitions, start, end, mask, forward_probabilities = ctx.saved_tensors
        scaled = _Scaled(logits, transitions, start, end)
        batch, steps, tags = forward_probabilities.shape
        betas = [scaled.end.expand(batch, tags) / scaled.end.sum()]
        for step in range(steps - 1, 0, -1):
            moved = (betas[-1] * scaled.emissions[:, step]) @ scaled.transitions.t()
            betas.append(torch.where(mask[:, step].unsqueeze(1), moved / moved.sum(1, keepdim=True), betas[-1]))
        backward_probabilities = torch.stack(betas[::-1], dim=1)
        # tag marginals: forward times backward, renormalized at each step
        tag_scores = forward_probabilities * backward_probabilities
        tag_totals = tag_scores.sum(2, keepdim=True)
        # tag-pair marginals at step t: forward(t - 1, i) * transition(i, j) * emission(t, j) * backward(t, j),
        # renormalized; summed over sentences and steps they are one matrix product, never a 4-d tensor
        previous = forward_probabilities[:, :-1]
        ahead = scaled.emissions[:, 1:] * backward_probabilities[:, 1:]
        pair_totals = ((previous @ scaled.transitions) * ahead).sum(2)
        if not (_usable(tag_totals) and _usable(pair_totals)):
            return _log_space_gradients(ctx.needs_input_grad, grad_output, logits, transitions, start, end, mask)
        scale = grad_output.unsqueeze(1)
        tag_marginals = tag_scores / tag_totals * mask.unsqueeze(2)
        needs = ctx.needs_input_grad
        transitions_gradient = None
        if needs[1]:
            pair_weights = torch.where(mask[:, 1:], scale / pair_totals, 0.0).unsqueeze(2)
            expected_pairs = (previous * pair_weights).reshape(-1, tags).t() @ ahead.reshape(-1, tags)
            transitions_gradient = scaled.transitions * expected_pairs
        end_marginals = _normalized(forward_probabilities[:, -1] * scaled.end, (1,))
        return (
            tag_marginals * scale.unsqueeze(2) if needs[0] else None,
            transitions_gradient,
            (tag_marginals[:, 0] * scale).sum(0) if needs[2] else None,
            (end_marginals * scale).sum(0) if needs[3] else None,
            None,
        )


def _usable(totals: torch.Tensor) -> bool:
    """Whether every normalizer is a positive finite number (not an underflow to 0, or a NaN from one)."""
    return bool(torch.isfinite(totals).all() and (totals > 0).all())


class _Scaled:
    """The exponentiated scores, each shifted to a maximum of 0 first, and the shifts."""

    def __init__(self, logits: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor, end: torch.Tensor) -> None:
        shifts = logits.amax(dim=2, keepdim=True)
        self.emissions = torch.exp(logits - shifts)  # (batch, steps, tags)
        self.emission_shifts = shifts.squeeze(2)
        self.transition_shift = transitions.max()
        self.transitions = torch.exp(transitions - self.transition_shift)
        start_shift, end_shift = start.max(), end.max()
        self.start = torch.exp(start - start_shift)
        self.end = torch.exp(end - end_shift)
        self.boundary_shift = start_shift + end_shift


def _normalized(values: torch.Tensor, dims: Tuple[int, ...]) -> torch.Tensor:
    return values / values.sum(dims, keepdim=True)


def _log_space(
    logits: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor, end: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """(batch,) log Z by the log-sum-exp recursion, differentiable by autograd: the slow, underflow-free way."""
    alpha = start.unsqueeze(0) + logits[:, 0]
    for step in range(1, logits.size(1)):
        moved = torch.logsumexp(alpha.unsqueeze(2) + transitions + logits[:, step].unsqueeze(1), dim=1)
        alpha = torch.where(mask[:, step].unsqueeze(1), moved, alpha)
    return torch.logsumexp(alpha + end.unsqueeze(0), dim=1)


def _log_space_gradients(
    needs: Tuple[bool, ...], grad_output: torch.Tensor, *inputs: torch.Tensor
) -> Tuple[Optional[torch.Tensor], ...]:
    """The gradients of :func:`_log_space` for the inputs that need them (mask last, never)."""
    with torch.enable_grad():
        leaves = [value.detach().requires_grad_(need) for value, need in zip(inputs[:-1], needs[:-1], strict=True)]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        logits, transitions, start, end = leaves
        log_partition = _log_space(logits, transitions, start, end, inputs[-1])
        computed = iter(torch.autograd.grad(log_partition, wanted, grad_output, allow_unused=True))
    return (*(next(computed) if leaf.requires_grad else None for leaf in leaves), None)
