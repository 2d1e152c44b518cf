"""LayeredFeedForward is AllenNLP's FeedForward (same weights from a seed, same state dict keys, same
outputs), with its first layer reachable, so archives trained with AllenNLP's class load unchanged."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import FeedForward
from allennlp.nn import Activation

from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward

ARGUMENTS = {"input_dim": 7, "num_layers": 3, "hidden_dims": [6, 5, 4], "activations": ["relu", "prelu", "tanh"]}


def _both(dropout: float = 0.0):
    built = []
    for cls in (FeedForward, LayeredFeedForward):
        torch.manual_seed(1)
        built.append(cls.from_params(Params({**ARGUMENTS, "dropout": dropout})))
    return built


def test_same_parameters_in_the_same_order_under_the_same_names():
    theirs, ours = _both()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, want), (_, got) in zip(theirs.named_parameters(), ours.named_parameters(), strict=True):
        assert torch.equal(got, want), name
    assert ours.load_state_dict(theirs.state_dict()) is not None
    assert (ours.get_input_dim(), ours.get_output_dim()) == (7, 4)


def test_same_outputs_and_dropout_draws_and_the_first_layer_apart():
    theirs, ours = _both(dropout=0.3)
    inputs = torch.randn(3, 7)
    torch.manual_seed(4)
    expected = theirs(inputs)
    torch.manual_seed(4)
    assert torch.equal(ours(inputs), expected)
    torch.manual_seed(4)
    assert torch.equal(ours.after_first_layer(ours.first_layer(inputs)), expected)


def test_wrong_lengths_say_which_setting():
    relu = Activation.by_name("relu")()
    with pytest.raises(ConfigurationError, match="hidden_dims lists 1 values for num_layers=2"):
        LayeredFeedForward(3, 2, [4], relu)
    with pytest.raises(ConfigurationError, match="num_layers must be a positive integer, got 0"):
        LayeredFeedForward(3, 0, 4, relu)
