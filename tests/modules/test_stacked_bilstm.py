"""``stacked_bilstm``: the NER recipe's BiLSTM layers of different sizes with variational input dropout."""

from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

from elmo_tasks.modules.stacked_bilstm import StackedBiLstmEncoder

LENGTHS = [5, 3, 1]


def _mask() -> torch.BoolTensor:
    return torch.arange(max(LENGTHS)).unsqueeze(0) < torch.tensor(LENGTHS).unsqueeze(1)


def test_built_by_name_with_the_layers_sizes():
    encoder = Seq2SeqEncoder.from_params(
        Params({"type": "stacked_bilstm", "input_size": 10, "hidden_sizes": [200, 100], "input_dropout": 0.5})
    )
    assert isinstance(encoder, StackedBiLstmEncoder)
    assert (encoder.get_input_dim(), encoder.get_output_dim(), encoder.is_bidirectional()) == (10, 200, True)
    first, second = (layer._module for layer in encoder.layers)
    assert (first.input_size, first.hidden_size, first.bidirectional) == (10, 200, True)
    assert (second.input_size, second.hidden_size, second.bidirectional) == (400, 100, True)


def test_equals_the_layers_run_one_after_the_other_without_dropout():
    """In eval mode (no dropout) the stack is its layers chained, each an AllenNLP ``lstm`` encoder; padded
    positions come out zero."""
    torch.manual_seed(0)
    encoder = StackedBiLstmEncoder(6, [4, 3], input_dropout=0.5).eval()
    inputs, mask = torch.randn(3, 5, 6), _mask()
    expected = encoder.layers[1](encoder.layers[0](inputs, mask), mask)
    output = encoder(inputs, mask)
    assert output.shape == (3, 5, 6)
    assert torch.equal(output, expected)
    assert output[~mask].abs().sum().item() == 0.0


def test_dropout_masks_are_shared_by_a_sentences_time_steps():
    """Variational dropout: each layer's input loses the same features at every time step of a sentence,
    and different features in different sentences."""
    torch.manual_seed(1)
    encoder = StackedBiLstmEncoder(40, [16, 8], input_dropout=0.5).train()
    seen: List[torch.Tensor] = []
    for layer in encoder.layers:
        layer.register_forward_pre_hook(lambda _module, args: seen.append(args[0].detach()))
    inputs = torch.ones(3, 5, 40)
    encoder(inputs, torch.ones(3, 5, dtype=torch.bool))
    first = seen[0]
    dropped = first == 0
    assert dropped.any() and (~dropped).any()
    assert torch.equal(dropped, dropped[:, :1].expand_as(dropped))  # the same mask at every step
    assert not torch.equal(dropped[0], dropped[1])
    assert torch.allclose(first[~dropped], torch.full_like(first[~dropped], 2.0))  # kept units scaled by 1/(1-p)
    second_dropped = seen[1] == 0
    assert torch.equal(second_dropped, second_dropped[:, :1].expand_as(second_dropped))


@pytest.mark.parametrize(
    "hidden_sizes, dropout, message",
    [
        ([], 0.0, "one positive size per layer"),
        ([8, 0], 0.0, "one positive size"),
        ([8], 1.0, r"input_dropout must be in \[0, 1\)"),
    ],
)
def test_bad_settings_say_what_to_change(hidden_sizes, dropout, message):
    with pytest.raises(ConfigurationError, match=message):
        StackedBiLstmEncoder(4, hidden_sizes, input_dropout=dropout)
