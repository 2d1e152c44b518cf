"""``exact_nll``: the full softmax's NLL in blocks equals a float64 ``log_softmax``, also where a later
block's logits overflow ``exp`` against the first block's shift (the safe path)."""

import pytest
import torch

from elmo_tasks.bilm.exact_nll import exact_nll


def _reference(hidden, rows, weight, bias):
    logits = hidden.double() @ weight.double().t() + bias.double()
    return -torch.log_softmax(logits, dim=1)[torch.arange(hidden.shape[0]), rows]


def _softmax(vocab, dim, seed):
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(vocab, dim, generator=generator)
    bias = torch.randn(vocab, generator=generator)
    return weight, bias, generator


@pytest.mark.parametrize("rows_per_block,words_per_block", [(7, 128), (64, 1000), (1, 997)])
def test_blocks_give_the_float64_log_softmax(rows_per_block, words_per_block):
    weight, bias, generator = _softmax(1000, 16, seed=0)
    hidden = torch.randn(50, 16, generator=generator)
    rows = torch.randint(0, 1000, (50,), generator=generator)
    ours = exact_nll(hidden, rows, weight, weight.t().contiguous(), bias, rows_per_block, words_per_block)
    assert ours.dtype == torch.float32 and ours.shape == (50,)
    assert torch.allclose(ours.double(), _reference(hidden, rows, weight, bias), atol=1e-4, rtol=1e-6)


def test_a_later_block_far_above_the_first_takes_the_safe_path():
    """Rows 0 and 3 meet, in their third and fifth blocks, logits about 150 and 300 above anything in
    their first block (``exp`` of the difference overflows float32); the other rows do not."""
    weight, bias, generator = _softmax(640, 8, seed=1)
    hidden = torch.randn(6, 8, generator=generator)
    direction = hidden[0] / hidden[0].norm()
    weight[300] = direction * 150.0 / hidden[0].norm()  # logit of row 0 at word 300: about 150
    weight[600] = hidden[3] * 300.0 / hidden[3].norm() ** 2  # row 3 at word 600: 300
    rows = torch.tensor([300, 5, 600, 600, 300, 17])
    first_block_max = (hidden @ weight[:128].t() + bias[:128]).amax(dim=1)
    full_max = (hidden @ weight.t() + bias).amax(dim=1)
    assert (full_max - first_block_max)[[0, 3]].min() > 100  # the fast path alone would overflow there
    ours = exact_nll(hidden, rows, weight, weight.t().contiguous(), bias, rows_per_block=4, words_per_block=128)
    assert torch.isfinite(ours).all()
    assert torch.allclose(ours.double(), _reference(hidden, rows, weight, bias), atol=1e-4, rtol=1e-6)
