"""The exact negative log-likelihood of target rows under a full softmax, computed in cache-sized blocks.

Each token's normaliser needs every logit of the vocabulary (50,003 for the shipped biLM): that product
and one ``exp`` per logit are most of the cost of ``bilm-perplexity``. The logits are made and used a
block of rows by a block of words at a time, so a block stays in the CPU caches, and each block goes
through few passes: the product into a reused buffer, the bias, one shift, ``exp`` in place and
a row sum. The shift of every block is the row's largest logit in its first block (``logsumexp``'s own
trick, without a maximum pass over each block). A logit in a later block that exceeds the shift by so
much that ``exp`` overflows float32 (about 88) sends that block's rows through the safe path: the
block's own maximum, the running sum rescaled. Terms that underflow to zero are below float32's
resolution next to the ``exp(0) = 1`` of the row's first-block maximum, so nothing measurable is lost.
"""

from typing import Optional, Tuple

import torch


def exact_nll(
    hidden: torch.Tensor,
    rows: torch.Tensor,
    weight: torch.Tensor,
    weight_t: torch.Tensor,
    bias: torch.Tensor,
    rows_per_block: int = 256,
    words_per_block: int = 4096,
) -> torch.Tensor:
    """``-log softmax(hidden @ weight.T + bias)[rows]`` for every row of ``hidden`` ``(n, dim)``.

    ``weight`` ``(vocab, dim)`` and its contiguous transpose ``weight_t`` ``(dim, vocab)`` (one read
    per target row, one per vocabulary block), ``bias`` ``(vocab,)``, ``rows`` ``(n,)`` the target
    rows. Returns ``(n,)`` in ``hidden``'s dtype.
    """
    out = hidden.new_empty(hidden.shape[0])
    vocab = weight_t.shape[1]
    buffer = hidden.new_empty(min(rows_per_block, hidden.shape[0]), min(words_per_block, vocab))
    for start in range(0, hidden.shape[0], rows_per_block):
        block_hidden = hidden[start : start + rows_per_block]
        target_rows = rows[start : start + rows_per_block]
        log_normaliser = _log_normaliser(block_hidden, weight_t, bias, words_per_block, buffer)
        target_logit = (block_hidden * weight[target_rows]).sum(dim=1) + bias[target_rows]
        out[start : start + rows_per_block] = log_normaliser - target_logit
    return out


def _log_normaliser(
    hidden: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor, words_per_block: int, buffer: torch.Tensor
) -> torch.Tensor:
    """``logsumexp`` over the whole vocabulary of each row of ``hidden``, a block of words at a time."""
    rows = hidden.shape[0]
    shift: Optional[torch.Tensor] = None
    total: Optional[torch.Tensor] = None
    for first in range(0, weight_t.shape[1], words_per_block):
        words = weight_t[:, first : first + words_per_block]
        logits = buffer[:rows, : words.shape[1]]
        torch.mm(hidden, words, out=logits)
        logits.add_(bias[first : first + words_per_block])
        if shift is None:
            shift = logits.amax(dim=1, keepdim=True)
        logits.sub_(shift).exp_()
        block_sum = logits.sum(dim=1)
        overflowed = ~torch.isfinite(block_sum)
        if bool(overflowed.any()):
            shift, total = _rescaled(hidden, words, bias[first : first + words_per_block], shift, overflowed, total)
        else:
            total = block_sum if total is None else total.add_(block_sum)
    assert shift is not None and total is not None, "the vocabulary has at least one word"
    return total.log_().add_(shift.squeeze(1))


def _rescaled(
    hidden: torch.Tensor,
    words: torch.Tensor,
    block_bias: torch.Tensor,
    shift: torch.Tensor,
    overflowed: torch.Tensor,
    total: Optional[torch.Tensor],
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The safe path for a block whose logits overflowed ``exp`` in some rows: for those rows, the shift
    becomes the block's maximum and the earlier sum is rescaled to it. Returns the new shift and, for every
    row, the sum over the earlier blocks and this one (relative to the new shift)."""
    logits = torch.addmm(block_bias, hidden, words)
    new_shift = torch.where(overflowed.unsqueeze(1), torch.maximum(shift, logits.amax(dim=1, keepdim=True)), shift)
    block_sum = (logits - new_shift).exp_().sum(dim=1)
    if total is not None:
        block_sum = block_sum + total * (shift - new_shift).squeeze(1).exp()
    return new_shift, block_sum
