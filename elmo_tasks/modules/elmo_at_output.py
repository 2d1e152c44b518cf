"""ELMo at a task model's output as well as its input, from one biLM pass (Peters et al. 2018, section 3.3).

The ``fast_elmo`` embedder inside a model's ``text_field_embedder`` can compute several independent
mixes of one biLM pass (``num_output_representations``). Mix 0 is what the embedder contributes to
the embedded text (ELMo at the input); a model that also adds ELMo at the output of its task RNN
needs mix 1 of the same pass. :meth:`ElmoAtOutput.embed` returns both, so the model's ``forward``
shows where each goes:

    # from_partial_objects, once: checks the embedder (config: `elmo_at_output: true`)
    elmo_at_output = ElmoAtOutput.for_model(elmo_at_output, text_field_embedder, "my_model")
    # forward: one biLM pass (embed_text is text_field_embedder(tokens), None without ELMo at the output)
    embedded, output_elmo = embed_text(self.text_field_embedder, self._elmo_at_output, tokens)
    ...
    encoded = torch.cat([self.encoder(embedded, mask), output_elmo], dim=-1)

``embed`` runs the biLM once (:meth:`ElmoTokenEmbedder.representations`) and hands the mixes to
the text field embedder, whose ``fast_elmo`` embedder returns mix 0 instead of running the biLM
again (AllenNLP's ``BasicTextFieldEmbedder`` passes keyword arguments on to the token embedders
whose ``forward`` takes them). Everything else in the text field embedder (word vectors, the
character CNN, the order of the concatenation) is as in a plain ``text_field_embedder(tokens)``
call, and nothing is kept between calls. The configs keep the ELMo embedder where every experiment
has it (``model.text_field_embedder.token_embedders.elmo``), so its parameters, regularizer regex
and overrides are those of ELMo at the input.
"""

from typing import Dict, List, Optional, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors
from allennlp.modules import TextFieldEmbedder
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder

from elmo_tasks.allennlp_internals import token_embedders
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder


class ElmoAtOutput:
    """The ``fast_elmo`` embedder of ``text_field_embedder``, read at the model's output too.

    Checked once, here: ``text_field_embedder`` is a ``basic`` text field embedder with exactly one
    ``fast_elmo`` embedder, which has ``num_output_representations >= 2`` (mix 0 for the input, mix 1
    for the output). Not a torch module: the embedder's parameters belong to the text field embedder
    alone, so a model's state dict lists them once.
    """

    def __init__(self, text_field_embedder: TextFieldEmbedder, model_name: str) -> None:
        self.text_field_embedder = text_field_embedder
        self.indexer_name, self.elmo = _the_elmo_embedder(text_field_embedder, model_name)

    @classmethod
    def for_model(
        cls, choice: Union[bool, "ElmoAtOutput", None], text_field_embedder: TextFieldEmbedder, model_name: str
    ) -> Optional["ElmoAtOutput"]:
        """What a model's ``elmo_at_output`` argument asks for: None for false, an ElmoAtOutput built
        here for true, or the one given (``from_partial_objects`` builds it once and passes it on), which
        must read the model's own ``text_field_embedder``: a biLM pass must serve input and output."""
        if isinstance(choice, ElmoAtOutput):
            if choice.text_field_embedder is not text_field_embedder:
                raise ConfigurationError(
                    f"{model_name}: elmo_at_output reads another text_field_embedder than the model's; build it "
                    f"with ElmoAtOutput(text_field_embedder, {model_name!r}) from the model's own"
                )
            return choice
        return cls(text_field_embedder, model_name) if choice else None

    def get_output_dim(self) -> int:
        """The width ELMo adds at the output: one mix (the biLM's width, or ``projection_dim``)."""
        return self.elmo.get_output_dim()

    def embed(self, text: TextFieldTensors) -> Tuple[torch.Tensor, torch.Tensor]:
        """``text_field_embedder(text)`` and ELMo's output mix of the same biLM pass, ``(batch, tokens, dim)``."""
        representations = self.elmo.representations(_elmo_tokens(text[self.indexer_name]))
        embedded = self.text_field_embedder(text, elmo_representations=representations)
        return embedded, representations[1]


def embed_text(
    text_field_embedder: TextFieldEmbedder, elmo_at_output: Optional[ElmoAtOutput], text: TextFieldTensors
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """A model's embedded ``text`` and, when it has ELMo at its output, ELMo's output mix of the same
    biLM pass (None without): the one way every model with ``elmo_at_output`` embeds its text."""
    if elmo_at_output is None:
        return text_field_embedder(text), None
    return elmo_at_output.embed(text)


def output_dim(elmo_at_output: Optional[ElmoAtOutput]) -> int:
    """The width ELMo adds at a model's output: one mix, or 0 without ELMo at the output."""
    return elmo_at_output.get_output_dim() if elmo_at_output is not None else 0


def _the_elmo_embedder(text_field_embedder: TextFieldEmbedder, model_name: str) -> Tuple[str, ElmoTokenEmbedder]:
    """The indexer name and the ``fast_elmo`` embedder of a text field embedder, or a ConfigurationError
    that says what to change."""
    advice = "Set num_output_representations: 2 on its one fast_elmo embedder, or elmo_at_output: false."
    if not isinstance(text_field_embedder, BasicTextFieldEmbedder):
        raise ConfigurationError(
            f"{model_name}: elmo_at_output=true needs a 'basic' text_field_embedder (token_embedders), not "
            f"{type(text_field_embedder).__name__}. {advice}"
        )
    embedders = token_embedders(text_field_embedder)
    elmo: List[Tuple[str, ElmoTokenEmbedder]] = [
        (name, embedder) for name, embedder in sorted(embedders.items()) if isinstance(embedder, ElmoTokenEmbedder)
    ]
    if len(elmo) == 1 and elmo[0][1].num_output_representations >= 2:
        return elmo[0]
    if not elmo:
        found = "no 'fast_elmo' embedder"
    elif len(elmo) > 1:
        found = f"{len(elmo)} of them ({', '.join(name for name, _ in elmo)})"
    else:
        found = f"num_output_representations={elmo[0][1].num_output_representations}"
    raise ConfigurationError(
        f"{model_name}: elmo_at_output=true needs a 'fast_elmo' token embedder in text_field_embedder "
        f"with num_output_representations >= 2 (one mix for the input, one for the output); found {found}. "
        f"{advice}"
    )


def _elmo_tokens(tensors: Dict[str, torch.Tensor]) -> torch.Tensor:
    """The character ids among an indexer's tensors (``elmo_tokens`` from ``elmo_characters``)."""
    if "elmo_tokens" in tensors:
        return tensors["elmo_tokens"]
    if len(tensors) == 1:  # BasicTextFieldEmbedder takes a single tensor whatever its name
        return next(iter(tensors.values()))
    raise ConfigurationError(
        f"ELMo at the output needs the character ids of the 'elmo_characters' indexer ('elmo_tokens'); "
        f"the indexer gave {sorted(tensors)}"
    )


def accept_state_dicts_with_elmo_twice(model: torch.nn.Module) -> None:
    """Lets ``model`` load archives written before :class:`ElmoAtOutput`, which held the ELMo embedder
    as a second submodule ``_elmo`` too: their state dicts list its tensors twice, once under
    ``_elmo.`` (dropped here: the same tensors are read from the text field embedder's keys)."""

    def drop_second_copy(
        _model: torch.nn.Module, state_dict: Dict[str, torch.Tensor], prefix: str, *args: object
    ) -> None:
        for key in [key for key in state_dict if key.startswith(prefix + "_elmo.")]:
            del state_dict[key]

    model.register_load_state_dict_pre_hook(drop_second_copy)
