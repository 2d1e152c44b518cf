"""Lee et al.'s BiLSTM (``coupled_lstm.py``): one step by hand, the directions, padding, the dropout mask per
sentence, its initialisation, a gradient check, and training lowering a loss."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder
from allennlp.nn.util import get_final_encoder_states

from elmo_tasks.tasks.coref.coupled_lstm import CoupledGateBiLstm, CoupledGateLstmCell, reversed_within_lengths
from elmo_tasks.tasks.coref.names import COUPLED_LSTM

INPUT, HIDDEN = 5, 4


def _encoder(dropout: float = 0.0, dtype: torch.dtype = torch.float32) -> CoupledGateBiLstm:
    torch.manual_seed(0)
    params = Params({"type": COUPLED_LSTM, "input_size": INPUT, "hidden_size": HIDDEN})
    encoder = Seq2SeqEncoder.from_params(params, recurrent_dropout_probability=dropout)
    assert isinstance(encoder, CoupledGateBiLstm)
    return encoder.to(dtype)


def _one_step(cell: CoupledGateLstmCell, word: torch.Tensor) -> torch.Tensor:
    """The cell's first step on ``word``, written out from Lee et al.'s formulas."""
    gates = cell.input_linearity(word) + cell.state_linearity(cell.initial_hidden[0])
    i, j, o = gates[:HIDDEN], gates[HIDDEN : 2 * HIDDEN], gates[2 * HIDDEN :]
    i = torch.sigmoid(i)
    c = (1 - i) * cell.initial_cell[0] + i * torch.tanh(j)  # the forget gate is 1 - i
    return torch.tanh(c) * torch.sigmoid(o)


def test_a_one_word_sentence_is_one_step_of_each_direction_from_the_learned_initial_state():
    encoder = _encoder().eval()
    word = torch.randn(INPUT)
    output = encoder(word.view(1, 1, INPUT), torch.ones(1, 1, dtype=torch.bool))
    assert output.shape == (1, 1, 2 * HIDDEN) and encoder.get_output_dim() == 2 * HIDDEN
    expected = torch.cat([_one_step(encoder.forward_cell, word), _one_step(encoder.backward_cell, word)])
    assert torch.allclose(output[0, 0], expected, atol=1e-6)
    assert encoder.forward_cell.initial_hidden.abs().sum() > 0  # a learned state, not zeros


def test_each_direction_reads_its_own_side_and_padding_changes_nothing():
    """The forward state at t reads tokens 0..t, the backward state tokens t..length-1; a sentence padded in
    a batch gives the states it has alone, and zeros at its padding."""
    encoder = _encoder().eval()
    torch.manual_seed(1)
    words = torch.randn(2, 6, INPUT)
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    with torch.no_grad():
        batch = encoder(words, mask)
        alone = encoder(words[1:, :4], mask[1:, :4])
        changed = words.clone()
        changed[:, 3] += 1.0  # the fourth token of both
        after = encoder(changed, mask)
    assert torch.allclose(batch[1, :4], alone[0], atol=1e-6)
    assert torch.equal(batch[1, 4:], torch.zeros(2, 2 * HIDDEN))
    forward, backward = slice(0, HIDDEN), slice(HIDDEN, 2 * HIDDEN)
    assert torch.equal(after[:, :3, forward], batch[:, :3, forward])  # before token 3: forward unchanged
    assert not torch.allclose(after[:, 3:4, forward], batch[:, 3:4, forward])
    assert torch.equal(after[0, 4:, backward], batch[0, 4:, backward])  # after token 3: backward unchanged
    assert not torch.allclose(after[:, :4, backward], batch[:, :4, backward])


def test_reading_backwards_keeps_padding_in_place():
    mask = torch.tensor([[True, True, True, False], [True, False, False, False]])
    assert reversed_within_lengths(mask).tolist() == [[2, 1, 0, 3], [0, 1, 2, 3]]


def test_the_dropout_mask_is_one_per_sentence_and_direction_for_every_step():
    """In training the recurrent state is dropped out with one (sentence, hidden) mask per direction, drawn
    forward first: the output equals each cell run with those masks; in evaluation nothing is dropped."""
    encoder = _encoder(dropout=0.5).train()
    words = torch.randn(3, 7, INPUT)
    mask = torch.ones(3, 7, dtype=torch.bool)
    torch.manual_seed(2)
    output = encoder(words, mask)
    torch.manual_seed(2)
    forward_keep, backward_keep = encoder._state_keep(words), encoder._state_keep(words)
    assert forward_keep.shape == (3, HIDDEN) and set(forward_keep.unique().tolist()) <= {0.0, 2.0}
    expected_forward = encoder.forward_cell.run(encoder.forward_cell.input_linearity(words), forward_keep)
    flipped = words.flip(1)
    expected_backward = encoder.backward_cell.run(encoder.backward_cell.input_linearity(flipped), backward_keep)
    assert torch.allclose(output, torch.cat([expected_forward, expected_backward.flip(1)], dim=-1), atol=1e-6)
    assert not torch.allclose(output, encoder.eval()(words, mask), atol=1e-3)
    assert encoder.eval()._state_keep(words) is None


def test_the_state_projection_is_block_orthonormal():
    cell = _encoder().forward_cell
    for block in cell.state_linearity.weight.split(HIDDEN, dim=0):
        assert torch.allclose(block @ block.t(), torch.eye(HIDDEN), atol=1e-5)


def test_gradients_match_finite_differences():
    """Float64 gradients of the output with respect to the inputs and every parameter, padding included."""
    encoder = _encoder(dtype=torch.float64).eval()
    words = torch.randn(2, 3, INPUT, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    names = [name for name, _ in encoder.named_parameters()]
    weights = [parameter.detach().clone().requires_grad_(True) for parameter in encoder.parameters()]

    def outputs(inputs: torch.Tensor, *values: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(encoder, dict(zip(names, values, strict=True)), (inputs, mask))

    assert len(names) == 12  # per direction: two projections with biases, two initial states
    assert torch.autograd.gradcheck(outputs, (words, *weights), eps=1e-6, atol=1e-6, fast_mode=True)


def test_training_lowers_the_loss():
    """Fitting each sentence's sum of its tokens' first feature, a target both directions must carry."""
    encoder = _encoder(dropout=0.2).train()
    readout = torch.nn.Linear(2 * HIDDEN, 1)
    optimizer = torch.optim.Adam([*encoder.parameters(), *readout.parameters()], lr=0.02)
    torch.manual_seed(3)
    words = torch.randn(16, 6, INPUT)
    mask = torch.ones(16, 6, dtype=torch.bool)
    mask[8:, 4:] = False
    target = (words[:, :, 0] * mask).sum(dim=1)
    losses = []
    for _ in range(60):
        optimizer.zero_grad()
        states = encoder(words, mask)
        prediction = readout(get_final_encoder_states(states, mask, bidirectional=True)).squeeze(-1)
        loss = ((prediction - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"hidden_size": 0}, "hidden_size must be a positive integer"),
        (
            {"hidden_size": 4, "recurrent_dropout_probability": 1.0},
            r"recurrent_dropout_probability must be in \[",
        ),
    ],
)
def test_settings_out_of_range_are_refused(settings, message):
    with pytest.raises(ConfigurationError, match=f"{COUPLED_LSTM}: {message}"):
        CoupledGateBiLstm(input_size=INPUT, **settings)


def test_it_takes_no_initial_state():
    with pytest.raises(ConfigurationError, match="learns its initial state"):
        _encoder()(torch.randn(1, 2, INPUT), torch.ones(1, 2, dtype=torch.bool), torch.zeros(1, HIDDEN))
