"""AllenNLP's alternating LSTM with He et al. (2017)'s variational dropout: one mask per sentence and layer on
the layer's output, which is also the state its next step reads.

The ELMo paper's SRL baseline (appendix A.5) is "an exact reimplementation" of He et al. (2017), whose
code (luheng/deep_srl, ``HighwayLSTMLayer``) draws one dropout mask per sentence for each layer and
multiplies it into the step's output ``h`` before ``h`` is both emitted to the layer above and fed back
into the next step. AllenNLP's ``AugmentedLSTMCell`` multiplies the same kind of mask into the state
it reads at the start of each step only, so the layer above reads the undropped outputs. The two
agree outside training, and inside training on what each step reads back; they differ in what the
next layer reads. The mask is AllenNLP's (kept units scaled by 1/(1-p) in training), where the code
scales the outputs by 1-p at test time instead: the same network, up to a rescaling of the weights
that read the outputs.

``variational_alternating_lstm`` takes ``alternating_lstm``'s arguments and builds the same layers (same
parameter names, same initialisation, state dicts load into each other), plus ``drop_layer_outputs``:
true (the default) runs He et al.'s scheme, false runs AllenNLP's own forward unchanged.
"""

from typing import List, Optional, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.augmented_lstm import AugmentedLstm
from allennlp.modules.seq2seq_encoders.pytorch_seq2seq_wrapper import PytorchSeq2SeqWrapper
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder
from allennlp.modules.stacked_alternating_lstm import StackedAlternatingLstm
from allennlp.nn.util import get_dropout_mask
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

#: (hidden state, memory), each (layers or 1, batch, hidden_size), as torch's LSTMs return them.
StatePair = Tuple[torch.Tensor, torch.Tensor]

NAME = "variational_alternating_lstm"


def run_layer_dropping_outputs(
    layer: AugmentedLstm, inputs: PackedSequence, state: Optional[StatePair] = None
) -> Tuple[PackedSequence, StatePair]:
    """One ``AugmentedLstm`` layer in its direction, its dropout mask (one per sentence, drawn once) applied
    to each step's output, which is what the layer emits and what its next step reads.

    The layer's own cell computes each step, given no mask (the state it reads is already dropped out).
    Padded steps leave the state as it was (a backward layer starts in the padding) and packing drops
    their outputs. Returns the packed outputs and the final (state, memory), each (1, batch, hidden_size),
    as ``AugmentedLstm.forward`` does.
    """
    sequences, lengths = pad_packed_sequence(inputs, batch_first=True)
    batch_size, total_steps, _ = sequences.size()
    if state is None:
        hidden = sequences.new_zeros(batch_size, layer.lstm_dim)
        memory = sequences.new_zeros(batch_size, layer.lstm_dim)
    else:
        hidden, memory = state[0].squeeze(0), state[1].squeeze(0)
    dropout_mask = (
        get_dropout_mask(layer.recurrent_dropout_probability, hidden)
        if layer.training and layer.recurrent_dropout_probability > 0.0
        else None
    )
    in_sentence = torch.arange(total_steps, device=sequences.device)[None, :] < lengths.to(sequences.device)[:, None]
    steps = range(total_steps) if layer.go_forward else range(total_steps - 1, -1, -1)
    outputs_in_step_order: List[torch.Tensor] = []
    for step in steps:
        output, new_memory = layer.cell(sequences[:, step], (hidden, memory))
        if dropout_mask is not None:
            output = output * dropout_mask
        real = in_sentence[:, step].unsqueeze(1)
        hidden = torch.where(real, output, hidden)
        memory = torch.where(real, new_memory, memory)
        outputs_in_step_order.append(output)
    if not layer.go_forward:
        outputs_in_step_order.reverse()
    outputs = torch.stack(outputs_in_step_order, dim=1)
    return pack_padded_sequence(outputs, lengths, batch_first=True), (hidden.unsqueeze(0), memory.unsqueeze(0))


class OutputDroppingAlternatingLstm(StackedAlternatingLstm):
    """``StackedAlternatingLstm`` whose layers, in training with ``drop_layer_outputs``, drop out their
    outputs with their per-sentence mask (``run_layer_dropping_outputs``); otherwise AllenNLP's forward.

    Outside training, or with no recurrent dropout, both schemes compute the same thing, so AllenNLP's
    forward runs then too.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        recurrent_dropout_probability: float = 0.0,
        use_highway: bool = True,
        use_input_projection_bias: bool = True,
        drop_layer_outputs: bool = True,
    ) -> None:
        if not 0.0 <= recurrent_dropout_probability < 1.0:
            raise ConfigurationError(
                f"{NAME}: recurrent_dropout_probability must be in [0, 1), got {recurrent_dropout_probability}"
            )
        super().__init__(
            input_size,
            hidden_size,
            num_layers,
            recurrent_dropout_probability=recurrent_dropout_probability,
            use_highway=use_highway,
            use_input_projection_bias=use_input_projection_bias,
        )
        self.drop_layer_outputs = drop_layer_outputs
        self.recurrent_dropout_probability = recurrent_dropout_probability

    def forward(
        self, inputs: PackedSequence, initial_state: Optional[StatePair] = None
    ) -> Tuple[Union[torch.Tensor, PackedSequence], StatePair]:
        if not (self.drop_layer_outputs and self.training and self.recurrent_dropout_probability > 0.0):
            return super().forward(inputs, initial_state)
        if initial_state is None:
            layer_states: List[Optional[StatePair]] = [None] * self.num_layers
        elif initial_state[0].size(0) != self.num_layers:
            raise ConfigurationError(
                f"{NAME}: the initial state has {initial_state[0].size(0)} layers, expected one per layer "
                f"({self.num_layers}): (num_layers, batch, hidden_size) state and memory tensors"
            )
        else:
            layer_states = list(zip(initial_state[0].split(1, 0), initial_state[1].split(1, 0), strict=True))
        output: PackedSequence = inputs
        final_hidden, final_memory = [], []
        for layer, layer_state in zip(self.lstm_layers, layer_states, strict=True):
            output, (hidden, memory) = run_layer_dropping_outputs(layer, output, layer_state)
            final_hidden.append(hidden)
            final_memory.append(memory)
        return output, (torch.cat(final_hidden, 0), torch.cat(final_memory, 0))


@Seq2SeqEncoder.register(NAME)
class VariationalAlternatingLstmEncoder(PytorchSeq2SeqWrapper):
    """``alternating_lstm`` (the same arguments, parameters and initialisation) with ``drop_layer_outputs``:
    true (the default), He et al. (2017)'s dropout, each layer's per-sentence mask on its output too;
    false, AllenNLP's, the mask on the state each step reads back only.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        recurrent_dropout_probability: float = 0.0,
        use_highway: bool = True,
        use_input_projection_bias: bool = True,
        drop_layer_outputs: bool = True,
        stateful: bool = False,
    ) -> None:
        module = OutputDroppingAlternatingLstm(
            input_size=input_size,
            hidden_size=hidden_size,
            num_layers=num_layers,
            recurrent_dropout_probability=recurrent_dropout_probability,
            use_highway=use_highway,
            use_input_projection_bias=use_input_projection_bias,
            drop_layer_outputs=drop_layer_outputs,
        )
        super().__init__(module=module, stateful=stateful)
