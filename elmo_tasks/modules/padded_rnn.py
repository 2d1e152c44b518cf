"""LSTM and GRU encoders that run on the padded batch instead of a ``PackedSequence``.

AllenNLP's ``lstm`` and ``gru`` encoders pack each batch so that the RNN stops at every sequence's
end. On CPUs, PyTorch differentiates a packed RNN one time step at a time, and each step's slice
of the packed input receives a zero-filled gradient as large as the whole input, so the backward
pass grows with the square of the length: on batches of 300 tokens it is several times slower than
the same RNN on the padded batch (docs/BENCHMARKS.md, "Padded RNN encoders").

``padded_lstm`` and ``padded_gru`` compute what ``lstm`` and ``gru`` compute without packing:

- the forward direction reads the padded batch as it is: an output depends only on the inputs
  before it, so padding after a sequence's end changes none of its outputs;
- the backward direction reads every sequence reversed within its own length, so it too starts at
  the sequence's last token, and its outputs are put back in order;
- outputs at padded positions are zero, as after ``pad_packed_sequence``.

The parameters are those of one ``torch.nn.LSTM``/``GRU`` under the names AllenNLP's wrapper gives
them (``_module.weight_ih_l0``, ``_module.weight_hh_l0_reverse``, ...), created in the same order, so
a seed gives the same initial weights as ``lstm``/``gru`` and their state dicts load into each other.
"""

from typing import Callable, ClassVar, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder
from torch.func import functional_call


def reversal_index(lengths: torch.Tensor, total_length: int) -> torch.Tensor:
    """Per row, the positions that reverse its first ``length`` entries and keep the rest in place.

    The index is its own inverse: gathering twice restores the original order.
    """
    positions = torch.arange(total_length, device=lengths.device).unsqueeze(0)
    lengths = lengths.unsqueeze(1)
    return torch.where(positions < lengths, lengths - 1 - positions, positions)


def _gather_time(inputs: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``inputs[b, index[b, t]]`` for every row ``b`` and time step ``t``."""
    return inputs.gather(1, index.unsqueeze(-1).expand(-1, -1, inputs.size(-1)))


class PaddedRnnEncoder(Seq2SeqEncoder):
    """A ``Seq2SeqEncoder`` over a batch-first ``torch.nn.LSTM`` or ``GRU``, run without packing.

    Each layer and direction runs as a one-layer, one-direction RNN of the same class with the
    weights of ``module`` (``torch.func.functional_call`` on a weightless template), so PyTorch's
    own RNN kernels do the work. Dropout between layers is ``module.dropout``, as in ``module``.
    """

    def __init__(self, module: torch.nn.RNNBase) -> None:
        super().__init__(stateful=False)
        if not module.batch_first:
            raise ConfigurationError("PaddedRnnEncoder: the module must be batch_first=True")
        if getattr(module, "proj_size", 0):
            raise ConfigurationError("PaddedRnnEncoder: LSTMs with proj_size are not supported; use proj_size=0")
        self._module = module
        directions = 2 if module.bidirectional else 1
        rnn_class: Callable[..., torch.nn.RNNBase] = type(module)  # LSTM or GRU, whose constructors need no mode
        # One template per layer, on the meta device and outside the module tree: it holds no
        # weights of its own (functional_call lends it this module's) and never reaches a state dict.
        self._layer_templates: Tuple[torch.nn.RNNBase, ...] = tuple(
            rnn_class(
                input_size=module.input_size if layer == 0 else module.hidden_size * directions,
                hidden_size=module.hidden_size,
                bias=module.bias,
                batch_first=True,
                device="meta",
            )
            for layer in range(module.num_layers)
        )

    def get_input_dim(self) -> int:
        return self._module.input_size

    def get_output_dim(self) -> int:
        return self._module.hidden_size * (2 if self._module.bidirectional else 1)

    def is_bidirectional(self) -> bool:
        return self._module.bidirectional

    def _run_direction(self, layer: int, suffix: str, inputs: torch.Tensor) -> torch.Tensor:
        """One layer in one direction (``suffix`` "" or "_reverse") from a zero state, over all of ``inputs``."""
        template = self._layer_templates[layer]
        # the template's parameters are named "<kind>_l0" (e.g. weight_ih_l0); the module's "<kind>_l<layer><suffix>"
        weights = {
            name: getattr(self._module, f"{name[:-1]}{layer}{suffix}") for name, _ in template.named_parameters()
        }
        return functional_call(template, weights, (inputs,))[0]

    def forward(
        self, inputs: torch.Tensor, mask: Optional[torch.BoolTensor], hidden_state: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        if hidden_state is not None:
            raise ValueError(f"{type(self).__name__} starts every sequence from a zero state; pass no hidden_state")
        batch_size, total_length = inputs.shape[:2]
        valid = inputs.new_ones(batch_size, total_length, dtype=torch.bool) if mask is None else mask
        reverse = reversal_index(valid.sum(dim=1), total_length) if self._module.bidirectional else None
        layer_input = inputs
        for layer in range(self._module.num_layers):
            if layer > 0 and self._module.dropout > 0:
                layer_input = torch.nn.functional.dropout(layer_input, self._module.dropout, self.training)
            outputs = self._run_direction(layer, "", layer_input)
            if reverse is not None:
                backward = self._run_direction(layer, "_reverse", _gather_time(layer_input, reverse))
                outputs = torch.cat([outputs, _gather_time(backward, reverse)], dim=-1)
            layer_input = outputs
        return layer_input.masked_fill(~valid.unsqueeze(-1), 0.0)


class _PaddedTorchRnn(PaddedRnnEncoder):
    """The arguments of AllenNLP's ``lstm`` and ``gru`` encoders, the same for both: a batch-first
    ``rnn_class`` built from them."""

    rnn_class: ClassVar[Callable[..., torch.nn.RNNBase]]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ) -> None:
        batch_first = True
        super().__init__(self.rnn_class(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional))


@Seq2SeqEncoder.register("padded_lstm")
class PaddedLstmEncoder(_PaddedTorchRnn):
    """AllenNLP's ``lstm`` encoder (same arguments and parameters) run on the padded batch."""

    rnn_class = torch.nn.LSTM


@Seq2SeqEncoder.register("padded_gru")
class PaddedGruEncoder(_PaddedTorchRnn):
    """AllenNLP's ``gru`` encoder (same arguments and parameters) run on the padded batch."""

    rnn_class = torch.nn.GRU
