"""AllenNLP's ``FeedForward`` whose first layer can be run apart from the rest.

The coreference model computes its FFNNs' first (linear) layer by parts (``mention_scores.py``,
``antecedents.py``: per token, per span, per pair) and then the rest of the network on the sum.
AllenNLP's ``FeedForward`` keeps its layers private, so this class builds the same network itself
and says so publicly: ``first_layer`` and ``after_first_layer``.

It is AllenNLP's ``FeedForward`` in every other way, so configs and archives are unchanged: the same
constructor arguments (configs give them as before; the class is not registrable, so configs name no
type), the same modules created in the same order (a seed gives the same weights, an initializer
visits the parameters in the same order) under the same names (``_activations``, ``_linear_layers``,
``_dropout``: the state dict keys of archives trained with AllenNLP's class).
"""

from typing import List, Union

import torch
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError
from allennlp.nn import Activation

from elmo_tasks.setting_checks import positive_count


class LayeredFeedForward(torch.nn.Module, FromParams):
    """``Linear`` layers, each followed by its activation and dropout, as AllenNLP's ``FeedForward``.

    # Parameters
    input_dim, num_layers, hidden_dims, activations, dropout : as in AllenNLP's ``FeedForward``
        (a single ``hidden_dims``, activation or dropout serves every layer).
    """

    def __init__(
        self,
        input_dim: int,
        num_layers: int,
        hidden_dims: Union[int, List[int]],
        activations: Union[Activation, List[Activation]],
        dropout: Union[float, List[float]] = 0.0,
    ) -> None:
        super().__init__()
        positive_count(num_layers, "num_layers", "feedforward")
        hidden_dims = hidden_dims if isinstance(hidden_dims, list) else [hidden_dims] * num_layers
        activations = activations if isinstance(activations, list) else [activations] * num_layers
        dropout = dropout if isinstance(dropout, list) else [dropout] * num_layers
        for name, values in (("hidden_dims", hidden_dims), ("activations", activations), ("dropout", dropout)):
            if len(values) != num_layers:
                raise ConfigurationError(f"feedforward: {name} lists {len(values)} values for num_layers={num_layers}")
        # AllenNLP's names and order (see the module docstring)
        self._activations = torch.nn.ModuleList(activations)
        input_dims = [input_dim] + hidden_dims[:-1]
        self._linear_layers = torch.nn.ModuleList(
            torch.nn.Linear(layer_input, layer_output)
            for layer_input, layer_output in zip(input_dims, hidden_dims, strict=True)
        )
        self._dropout = torch.nn.ModuleList(torch.nn.Dropout(p=value) for value in dropout)
        self.input_dim = input_dim
        self.output_dim = hidden_dims[-1]

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    @property
    def first_layer(self) -> torch.nn.Linear:
        """The first linear layer, whose output callers may compute by parts of its input."""
        return self._linear_layers[0]  # type: ignore[return-value]  # why: ModuleList items are typed Module

    def after_first_layer(self, first_layer_output: torch.Tensor) -> torch.Tensor:
        """The network's output given the first linear layer's output (before its activation)."""
        hidden = self._dropout[0](self._activations[0](first_layer_output))
        layers = zip(self._linear_layers[1:], self._activations[1:], self._dropout[1:], strict=True)
        for layer, activation, dropout in layers:
            hidden = dropout(activation(layer(hidden)))
        return hidden

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.after_first_layer(self.first_layer(inputs))
