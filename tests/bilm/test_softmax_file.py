import numpy as np
import pytest
import torch

from elmo_tasks.bilm.softmax_file import read_softmax, write_softmax


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_written_softmax_reads_back_as_float32_with_its_tokens(tmp_path, dtype):
    weight = torch.randn(5, 3, requires_grad=True)
    bias = torch.randn(5)
    tokens = ["@@PADDING@@", "@@UNKNOWN@@", "<S>", "</S>", "Zürich"]
    path = str(tmp_path / "softmax.npz")
    write_softmax(path, weight, bias, tokens, dtype)
    read_weight, read_bias, read_tokens = read_softmax(path)
    assert read_tokens == tokens
    assert read_weight.dtype == read_bias.dtype == torch.float32
    expected_weight = weight.detach().numpy().astype(dtype).astype(np.float32)
    assert np.array_equal(read_weight.numpy(), expected_weight)
    assert np.array_equal(read_bias.numpy(), bias.numpy().astype(dtype).astype(np.float32))
    with np.load(path) as stored:
        assert stored["weight"].dtype == np.dtype(dtype)
