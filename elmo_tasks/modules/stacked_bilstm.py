"""A stack of BiLSTM layers of different sizes, with variational dropout on each layer's input.

The ELMo paper's NER tagger (appendix A.7) has two BiLSTM layers, "the first with 200 hidden units
and the second with 100", and "variational dropout is added to the input of both biLSTM layers".
AllenNLP's ``lstm`` encoder gives every layer one size and drops out between layers with a fresh
mask per time step; its ``stacked_bidirectional_lstm`` runs its LSTM steps in Python, several times
slower on a CPU. ``stacked_bilstm`` puts one AllenNLP ``lstm`` encoder (torch's packed LSTM) per layer
behind AllenNLP's ``InputVariationalDropout`` (one mask per sequence, shared by its time steps).
"""

from typing import List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.input_variational_dropout import InputVariationalDropout
from allennlp.modules.seq2seq_encoders.pytorch_seq2seq_wrapper import LstmSeq2SeqEncoder
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder


@Seq2SeqEncoder.register("stacked_bilstm")
class StackedBiLstmEncoder(Seq2SeqEncoder):
    """BiLSTM layers of ``hidden_sizes`` (per direction), each reading the one below through
    variational dropout of rate ``input_dropout`` (the first reads the embedded tokens through it).

    The output is the top layer's forward and backward states, ``2 * hidden_sizes[-1]`` wide; padded
    positions are zero.
    """

    def __init__(self, input_size: int, hidden_sizes: List[int], input_dropout: float = 0.0) -> None:
        super().__init__(stateful=False)
        if not hidden_sizes or any(size < 1 for size in hidden_sizes):
            raise ConfigurationError(
                f"stacked_bilstm: hidden_sizes must list one positive size per layer, got {hidden_sizes!r}"
            )
        if not 0.0 <= input_dropout < 1.0:
            raise ConfigurationError(f"stacked_bilstm: input_dropout must be in [0, 1), got {input_dropout}")
        self._input_size = input_size
        self._hidden_sizes = list(hidden_sizes)
        self.input_dropout = InputVariationalDropout(input_dropout)
        layers = []
        layer_input = input_size
        for size in hidden_sizes:
            layers.append(LstmSeq2SeqEncoder(layer_input, size, bidirectional=True))
            layer_input = 2 * size
        self.layers = torch.nn.ModuleList(layers)

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return 2 * self._hidden_sizes[-1]

    def is_bidirectional(self) -> bool:
        return True

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, hidden_state: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        if hidden_state is not None:
            raise ConfigurationError("stacked_bilstm is not stateful: it takes no initial hidden_state")
        layer_output = inputs
        for layer in self.layers:
            layer_output = layer(self.input_dropout(layer_output), mask)
        return layer_output
