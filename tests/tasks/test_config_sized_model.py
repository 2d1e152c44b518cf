"""The config constructor the task models share (elmo_tasks/tasks/config_sized_model.py): its signature is
``__init__``'s with the sized layers ``Lazy``, and a model that builds its layers wrongly is told so."""

import inspect
from typing import Any, Optional, get_args, get_origin

import pytest
from allennlp.common import Lazy
from allennlp.data import Vocabulary
from allennlp.modules import FeedForward
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding
from allennlp.nn import Activation

from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.coref.model import CorefElmo
from elmo_tasks.tasks.ner.model import ElmoCrfTagger
from elmo_tasks.tasks.snli.model import EsimElmo
from elmo_tasks.tasks.squad.model import BidafSelfAttention
from elmo_tasks.tasks.srl.model import SrlElmo
from elmo_tasks.tasks.sst.model import BiattentiveClassifier


@pytest.mark.parametrize(
    "model_class", [ElmoCrfTagger, EsimElmo, BidafSelfAttention, BiattentiveClassifier, CorefElmo, SrlElmo]
)
def test_the_config_signature_is_inits_with_the_sized_layers_lazy(model_class: Any) -> None:
    own = [
        parameter
        for parameter in list(inspect.signature(model_class.__init__).parameters.values())[1:]
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    config = inspect.signature(model_class.from_partial_objects).parameters
    assert list(config) == [parameter.name for parameter in own] + ["regularizer"]
    for parameter in own:
        read = config[parameter.name]
        assert read.default is parameter.default, parameter.name
        if parameter.name in model_class.sized_layers:
            lazy = read.annotation
            if get_origin(lazy) is not Lazy:  # Optional[Lazy[T]]
                lazy = next(member for member in get_args(lazy) if member is not type(None))
            assert get_origin(lazy) is Lazy and get_args(lazy)[0] in (
                parameter.annotation,
                *get_args(parameter.annotation),
            )
        elif parameter.name == "elmo_at_output":
            assert read.annotation is bool
        else:
            assert read.annotation == parameter.annotation, parameter.name


# The toy's layers: a class (``Lazy[Layer]`` in its config constructor).
Layer = FeedForward


class TwoLayers(ConfigSizedModel):
    """A toy model: a first layer over the embedding, and an optional second over the first."""

    sized_layers = ("first", "second")

    def __init__(
        self, vocab: Vocabulary, text_field_embedder: Any, first: Layer, second: Optional[Layer] = None
    ) -> None:
        super().__init__(vocab)
        self.text_field_embedder = text_field_embedder
        self.first = first
        self.second = second

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        first = config.build("first", input_dim=config.embedding_dim)
        config.build("second", input_dim=first.get_output_dim())


class ForgetsALayer(TwoLayers):
    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        config.build("first", input_dim=config.embedding_dim)


class BuildsAnUndeclaredLayer(TwoLayers):
    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        config.build("first", input_dim=config.embedding_dim)
        config.build("first", input_dim=config.embedding_dim)


def _layer(width: int) -> Lazy[FeedForward]:
    return Lazy(
        FeedForward,
        constructor_extras={"num_layers": 1, "hidden_dims": width, "activations": Activation.by_name("relu")()},
    )


def _arguments() -> dict:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["a", "b"], "tokens")
    embedder = BasicTextFieldEmbedder({"tokens": Embedding(embedding_dim=5, num_embeddings=vocab.get_vocab_size())})
    return {"vocab": vocab, "text_field_embedder": embedder}


def test_each_layer_is_built_for_the_width_before_it_and_an_optional_one_left_out_stays_out() -> None:
    model = TwoLayers.from_partial_objects(**_arguments(), first=_layer(3), second=_layer(2))
    assert (model.first.get_input_dim(), model.first.get_output_dim()) == (5, 3)
    assert model.second is not None and (model.second.get_input_dim(), model.second.get_output_dim()) == (3, 2)
    assert TwoLayers.from_partial_objects(**_arguments(), first=_layer(3)).second is None


@pytest.mark.parametrize(
    "model_class, message",
    [
        (ForgetsALayer, r"ForgetsALayer.size_layers left \['second'\] unbuilt"),
        (BuildsAnUndeclaredLayer, r"builds 'first', which is not one of its sized_layers .* still to build"),
    ],
)
def test_a_model_that_builds_its_layers_wrongly_is_told_which(model_class: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        model_class.from_partial_objects(**_arguments(), first=_layer(3), second=_layer(2))
