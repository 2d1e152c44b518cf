"""``padded_lstm``/``padded_gru`` compute what AllenNLP's packed ``lstm``/``gru`` compute: the same
outputs and gradients from the same parameters, which a seed makes the same."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders import PytorchSeq2SeqWrapper, Seq2SeqEncoder

import elmo_tasks.plugin  # noqa: F401  (registers the encoders)
from elmo_tasks.modules.padded_rnn import PaddedGruEncoder, PaddedRnnEncoder, reversal_index

# a full row, a short one, an empty one, and one that ends inside the batch's padding
LENGTHS = [9, 3, 0, 6]


def _encoder_pair(kind: str, **arguments):
    """Ours and AllenNLP's, built from the same seed: their parameters must come out equal."""
    built = []
    for name in (f"padded_{kind}", kind):
        torch.manual_seed(0)
        built.append(Seq2SeqEncoder.from_params(Params({"type": name, "input_size": 7, "hidden_size": 5, **arguments})))
    return built


def _outputs_and_gradients(encoder: Seq2SeqEncoder, inputs: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor):
    inputs = inputs.detach().requires_grad_()
    encoder.zero_grad()
    outputs = encoder(inputs, mask)
    (outputs * weights).sum().backward()
    return outputs.detach(), [inputs.grad] + [parameter.grad for parameter in encoder.parameters()]


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("num_layers,bidirectional", [(1, True), (2, True), (1, False), (2, False)])
def test_outputs_and_gradients_equal_the_packed_encoders(kind, num_layers, bidirectional):
    ours, allennlp_encoder = _encoder_pair(kind, num_layers=num_layers, bidirectional=bidirectional)
    assert isinstance(allennlp_encoder, PytorchSeq2SeqWrapper)
    assert list(ours.state_dict()) == list(allennlp_encoder.state_dict())
    for name, value in allennlp_encoder.state_dict().items():
        assert torch.equal(ours.state_dict()[name], value), name
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(4, 11, 7, generator=generator)  # two columns of padding beyond the longest row
    mask = torch.arange(11).unsqueeze(0) < torch.tensor(LENGTHS).unsqueeze(1)
    weights = torch.randn(4, 11, ours.get_output_dim(), generator=generator)

    our_outputs, our_gradients = _outputs_and_gradients(ours, inputs, mask, weights)
    their_outputs, their_gradients = _outputs_and_gradients(allennlp_encoder, inputs, mask, weights)

    assert our_outputs.shape == their_outputs.shape == (4, 11, 5 * (2 if bidirectional else 1))
    torch.testing.assert_close(our_outputs, their_outputs, atol=1e-6, rtol=1e-5)
    assert our_outputs[~mask].abs().sum() == 0  # zeros where the packed encoder gives zeros
    for ours_gradient, their_gradient in zip(our_gradients, their_gradients, strict=True):
        torch.testing.assert_close(ours_gradient, their_gradient, atol=1e-5, rtol=1e-5)
    assert ours.get_output_dim() == allennlp_encoder.get_output_dim()
    assert ours.get_input_dim() == allennlp_encoder.get_input_dim() == 7
    assert ours.is_bidirectional() == bidirectional


def test_the_backward_direction_starts_at_each_sequence_end():
    """A row's outputs do not change when its padding does (it would, read from the batch's end)."""
    ours, _ = _encoder_pair("gru", bidirectional=True)
    inputs = torch.randn(2, 6, 7)
    mask = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])
    other_padding = inputs.clone()
    other_padding[1, 3:] = torch.randn(3, 7)
    torch.testing.assert_close(ours(inputs, mask), ours(other_padding, mask), atol=0, rtol=0)


def test_without_a_mask_every_position_counts():
    ours, allennlp_encoder = _encoder_pair("lstm", bidirectional=True)
    inputs = torch.randn(3, 5, 7)
    torch.testing.assert_close(ours(inputs, None), allennlp_encoder(inputs, None), atol=1e-6, rtol=1e-5)


def test_reversal_index_reverses_within_each_length_and_is_its_own_inverse():
    index = reversal_index(torch.tensor([4, 1, 0]), 5)
    assert index.tolist() == [[3, 2, 1, 0, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4]]
    assert torch.equal(index.gather(1, index), torch.arange(5).expand(3, 5))


def test_unsupported_settings_are_configuration_errors():
    with pytest.raises(ConfigurationError, match="batch_first"):
        PaddedRnnEncoder(torch.nn.GRU(3, 2))
    with pytest.raises(ConfigurationError, match="proj_size"):
        PaddedRnnEncoder(torch.nn.LSTM(3, 4, proj_size=2, batch_first=True))
    with pytest.raises(ValueError, match="hidden_state"):
        PaddedGruEncoder(3, 2)(torch.randn(1, 2, 3), None, hidden_state=torch.zeros(1, 1, 2))
