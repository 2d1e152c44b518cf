"""Lee et al. (2017)'s BiLSTM: an LSTM cell whose input and forget gates are coupled, with a learned initial state.

Their code's ``CustomLSTMCell`` differs from the usual LSTM (torch's, AllenNLP's) in three ways, all kept here:

- the forget gate is one minus the input gate: ``c_t = (1 - i_t) * c_{t-1} + i_t * tanh(j_t)``, and
  ``h_t = tanh(c_t) * sigmoid(o_t)``, so there are three gate blocks (i, j, o), not four;
- the initial cell and hidden states are parameters (one of each per direction), not zeros;
- its dropout acts on the recurrent state: ``h_{t-1}`` is multiplied by a dropout mask drawn once per
  sentence (shared by all its time steps) before it is projected.

The input is projected once for every time step (their ``preprocess_input``), the state at each step. The
backward direction runs each sentence from its last real token, so padding never reaches a real token's
state, and padded positions of the output are zeros. Initialisation as in their code: the input projection
Glorot-uniform, the state projection block-orthonormal (each gate's square block orthogonal), and the
biases and the initial states Glorot-uniform, TensorFlow's default for a variable given no initializer.

Registered as a ``Seq2SeqEncoder``, ``coupled_gate_lstm``: one bidirectional layer, as Lee et al. use it.
"""

import math
from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder
from allennlp.nn.initializers import block_orthogonal

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.coref.names import COUPLED_LSTM


def _glorot_uniform_(tensor: torch.Tensor, fan_in: int, fan_out: int) -> None:
    """TensorFlow's ``glorot_uniform_initializer`` with its fans (a vector's are both its length)."""
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    torch.nn.init.uniform_(tensor, -limit, limit)


class CoupledGateLstmCell(torch.nn.Module):
    """One direction: the input and state projections, three gate blocks each, and the learned initial state."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.input_linearity = torch.nn.Linear(input_size, 3 * hidden_size)
        self.state_linearity = torch.nn.Linear(hidden_size, 3 * hidden_size)
        self.initial_cell = torch.nn.Parameter(torch.empty(1, hidden_size))
        self.initial_hidden = torch.nn.Parameter(torch.empty(1, hidden_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_uniform_(self.input_linearity.weight)
        block_orthogonal(self.state_linearity.weight, [self.hidden_size, self.hidden_size])
        for bias in (self.input_linearity.bias, self.state_linearity.bias):
            _glorot_uniform_(bias, bias.numel(), bias.numel())
        for state in (self.initial_cell, self.initial_hidden):
            _glorot_uniform_(state, 1, self.hidden_size)

    def run(self, projected_inputs: torch.Tensor, state_keep: Optional[torch.Tensor]) -> torch.Tensor:
        """The hidden states, (batch, time, hidden), of sequences whose projected inputs are ``projected_inputs``
        (batch, time, 3 x hidden), each read from time 0; ``state_keep`` (batch, hidden): the dropout mask on
        the recurrent state (zeros and 1 / (1 - p)), or None."""
        batch, steps, _ = projected_inputs.shape
        cell = self.initial_cell.expand(batch, -1)
        hidden = self.initial_hidden.expand(batch, -1)
        outputs = []
        for step in range(steps):
            previous = hidden if state_keep is None else hidden * state_keep
            input_gate, candidate, output_gate = (projected_inputs[:, step] + self.state_linearity(previous)).chunk(
                3, dim=-1
            )
            input_gate = torch.sigmoid(input_gate)
            cell = (1.0 - input_gate) * cell + input_gate * torch.tanh(candidate)
            hidden = torch.tanh(cell) * torch.sigmoid(output_gate)
            outputs.append(hidden)
        return torch.stack(outputs, dim=1)


def reversed_within_lengths(mask: torch.Tensor) -> torch.Tensor:
    """For each position, the position of the same sequence read backwards from its last real token, (batch,
    time): ``length - 1 - t`` for a real token, ``t`` for padding. Applied twice it is the identity."""
    steps = mask.size(1)
    positions = torch.arange(steps, device=mask.device).unsqueeze(0)
    lengths = mask.sum(dim=1, keepdim=True)
    return torch.where(positions < lengths, lengths - 1 - positions, positions)


@Seq2SeqEncoder.register(COUPLED_LSTM)
class CoupledGateBiLstm(Seq2SeqEncoder):
    """Lee et al.'s one-layer BiLSTM (see the module docstring): output ``2 * hidden_size`` wide, the forward
    then the backward states; zeros at padded positions.

    # Parameters
    input_size : the width of the inputs (derived by the coreference model from its embedder).
    hidden_size : per direction (Lee et al.: 200).
    recurrent_dropout_probability : dropout on the recurrent state, one mask per sentence and direction
        (Lee et al.: 0.2), in training only.
    """

    def __init__(self, input_size: int, hidden_size: int, recurrent_dropout_probability: float = 0.0) -> None:
        super().__init__(stateful=False)
        positive_count(hidden_size, "hidden_size", COUPLED_LSTM)
        if not 0.0 <= recurrent_dropout_probability < 1.0:
            raise ConfigurationError(
                f"{COUPLED_LSTM}: recurrent_dropout_probability must be in [0, 1), got {recurrent_dropout_probability}"
            )
        self._input_size = input_size
        self._hidden_size = hidden_size
        self.recurrent_dropout_probability = recurrent_dropout_probability
        self.forward_cell = CoupledGateLstmCell(input_size, hidden_size)
        self.backward_cell = CoupledGateLstmCell(input_size, hidden_size)

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return 2 * self._hidden_size

    def is_bidirectional(self) -> bool:
        return True

    def _state_keep(self, inputs: torch.Tensor) -> Optional[torch.Tensor]:
        """A dropout mask per sequence on the recurrent state in training, else None."""
        if not (self.training and self.recurrent_dropout_probability > 0):
            return None
        ones = inputs.new_ones(inputs.size(0), self._hidden_size)
        return torch.nn.functional.dropout(ones, self.recurrent_dropout_probability, training=True)

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, hidden_state: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        if hidden_state is not None:
            raise ConfigurationError(f"{COUPLED_LSTM} learns its initial state: it takes no hidden_state")
        forward_states = self.forward_cell.run(self.forward_cell.input_linearity(inputs), self._state_keep(inputs))
        backwards = reversed_within_lengths(mask).unsqueeze(-1)
        reversed_inputs = inputs.gather(1, backwards.expand_as(inputs))
        reversed_states = self.backward_cell.run(
            self.backward_cell.input_linearity(reversed_inputs), self._state_keep(inputs)
        )
        backward_states = reversed_states.gather(1, backwards.expand_as(reversed_states))
        return torch.cat([forward_states, backward_states], dim=-1) * mask.unsqueeze(-1)
