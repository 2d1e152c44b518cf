"""The ELMo TokenEmbedder: our biLM plus one or more scalar mixes of its layers.

``ELMo_k = gamma * sum_j softmax(w)_j * h_k,j`` (optionally layer-normalising each layer
first), followed by dropout and an optional linear projection. Several mixes
(``num_output_representations``) share ONE biLM pass: :meth:`ElmoTokenEmbedder.representations`
returns them all, ``forward`` the first. A model that wants ELMo at its output as well gets both
mixes of one pass from :class:`elmo_tasks.modules.elmo_at_output.ElmoAtOutput`.
"""

import logging
import math
from typing import List, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from elmo_tasks.bilm import BiLM
from elmo_tasks.bilm.archived import load_model_bilm
from elmo_tasks.modules.elmo_mixes import ElmoMixes, words_to_cache
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE

logger = logging.getLogger(__name__)


def load_elmo_bilm(
    options_file: str, weight_file: Optional[str], stateful: bool, serialization_dir: Optional[str] = None
) -> BiLM:
    """The one place where ELMo modules turn ``options_file``/``weight_file`` into a biLM.

    A URL (as in allennlp-models' configs) goes through AllenNLP's download cache, as it does
    with AllenNLP's own ELMo; package references (``elmo_tasks:pretrained/...``) and local paths
    go through :func:`elmo_tasks.bilm.archived.load_model_bilm`, which keeps the options with a
    trained model so that its archive survives a move.
    """
    options_file = cached_path(options_file) if "://" in options_file else options_file
    weight_file = cached_path(weight_file) if weight_file is not None and "://" in weight_file else weight_file
    return load_model_bilm(options_file, weight_file, serialization_dir, stateful=stateful)


@TokenEmbedder.register("fast_elmo")
class ElmoTokenEmbedder(TokenEmbedder, ElmoMixes):
    """ELMo from an ``options.json`` + hdf5 weight file in the original format.

    # Parameters
    options_file, weight_file : the biLM (``weight_file=None`` gives random weights, for tests);
        both default to the small biLM that ships with elmo-tasks (elmo_tasks/pretrained).
    dropout : applied to each output representation.
    do_layer_norm : layer-normalise each biLM layer before mixing.
    num_output_representations : independent mixes over one biLM pass.
    requires_grad : fine-tune the biLM with the task (otherwise it is frozen).
    scalar_mix_parameters : fixed, untrainable pre-softmax mixing weights (gamma fixed at 1).
    fixed_layer_weights : the same, given as plain weights, e.g. ``[0, 0, 1]`` (top layer only)
        or ``[1, 1, 1]`` (plain average); normalised to sum to one.
    stateful : carry LSTM states from batch to batch like the original (default: stateless).
    cache_size_mb : memory budget of the exact per-sentence cache of biLM layers, used only
        when the biLM is frozen and stateless (0 turns it off).
    projection_dim : if given, a trainable linear map of every output representation to this
        width (AllenNLP's ``projection_dim``).
    vocab_to_cache : words whose context-free token vectors are computed once (the character
        CNN and highway layers are skipped for them): a vocabulary namespace such as
        ``"tokens"``, or a list of words. Any other word takes the character path, so the
        output is the same with or without it. Ignored while fine-tuning (``requires_grad``).
    layer_norm_style : where ``do_layer_norm`` takes its statistics: ``"bilm_tf"`` (the real
        tokens, as the original bilm-tf) or ``"allennlp"`` (boundary tokens included, as
        AllenNLP's ELMo); see elmo_tasks/modules/elmo_mixes.py.
    serialization_dir : passed by AllenNLP (not set in configs): the biLM's options are kept
        there, and read back from an archive, see :mod:`elmo_tasks.bilm.archived`.
    """

    bilm: BiLM  # always ours (built from options_file/weight_file)

    def __init__(
        self,
        options_file: str = SMALL_OPTIONS_REFERENCE,
        weight_file: Optional[str] = SMALL_WEIGHT_REFERENCE,
        dropout: float = 0.5,
        do_layer_norm: bool = False,
        num_output_representations: int = 1,
        requires_grad: bool = False,
        scalar_mix_parameters: Optional[List[float]] = None,
        fixed_layer_weights: Optional[List[float]] = None,
        stateful: bool = False,
        cache_size_mb: float = 1024,
        projection_dim: Optional[int] = None,
        vocab_to_cache: Union[str, List[str], None] = None,
        layer_norm_style: str = "bilm_tf",
        vocab: Optional[Vocabulary] = None,
        serialization_dir: Optional[str] = None,
    ) -> None:
        super().__init__()
        if scalar_mix_parameters is not None and fixed_layer_weights is not None:
            raise ConfigurationError("give scalar_mix_parameters or fixed_layer_weights, not both")
        self._serialization_dir = serialization_dir
        bilm = self._build_bilm(options_file, weight_file, stateful)
        if fixed_layer_weights is not None:
            scalar_mix_parameters = _log_weights(fixed_layer_weights, bilm.num_layers)
        self._setup_bilm(bilm, requires_grad)
        self._setup_mixes(num_output_representations, do_layer_norm, dropout, scalar_mix_parameters, layer_norm_style)
        self._setup_caches(words_to_cache(vocab_to_cache, vocab), cache_size_mb)
        self.projection = torch.nn.Linear(bilm.output_dim, projection_dim) if projection_dim else None

    def _build_bilm(self, options_file: str, weight_file: Optional[str], stateful: bool) -> BiLM:
        return load_elmo_bilm(options_file, weight_file, stateful, self._serialization_dir)

    def get_output_dim(self) -> int:
        return self.projection.out_features if self.projection is not None else self.bilm.output_dim

    def representations(self, elmo_tokens: torch.Tensor) -> List[torch.Tensor]:
        """Every output representation (``num_output_representations`` mixes, after dropout and any
        projection) of one biLM pass over ``elmo_tokens``, each ``(..., tokens, dim)``."""
        representations, _ = self._representations(elmo_tokens)
        if self.projection is not None:
            representations = [self.projection(r) for r in representations]
        return representations

    def forward(
        self,
        elmo_tokens: torch.Tensor,
        word_inputs: Optional[torch.Tensor] = None,
        elmo_representations: Optional[List[torch.Tensor]] = None,
    ) -> torch.Tensor:
        """The first representation: ``(batch, tokens, dim)`` for ``elmo_tokens`` of shape ``(batch, tokens,
        50)``, the character ids of the ``elmo_characters`` indexer (or ``(batch, texts, tokens, 50)`` for a
        list of texts per instance).

        ``elmo_representations``: :meth:`representations` of these very ``elmo_tokens``, computed by the
        caller (``ElmoAtOutput.embed``, which needs the other mixes of the same pass too); given, the biLM
        does not run again. ``word_inputs`` (AllenNLP's word ids for ``vocab_to_cache``) is accepted and
        not needed: the cached words are found from their characters.
        """
        if elmo_representations is None:
            return self.representations(elmo_tokens)[0]
        given, expected = tuple(elmo_representations[0].shape[:-1]), tuple(elmo_tokens.shape[:-1])
        if len(elmo_representations) != self.num_output_representations or given != expected:
            raise ValueError(
                f"elmo_representations must be this embedder's {self.num_output_representations} representations "
                f"of these elmo_tokens, shaped {expected} + (dim,); got {len(elmo_representations)} shaped {given}"
            )
        return elmo_representations[0]


def _log_weights(weights: List[float], num_layers: int) -> List[float]:
    if len(weights) != num_layers or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ConfigurationError(
            f"fixed_layer_weights needs {num_layers} non-negative weights, not all zero; got {weights}"
        )
    total = sum(weights)
    return [math.log(w / total) if w > 0 else -1e4 for w in weights]


def find_elmo_embedder(module: torch.nn.Module) -> Optional[ElmoTokenEmbedder]:
    """The ElmoTokenEmbedder inside ``module`` (e.g. a TextFieldEmbedder), or None."""
    for child in module.modules():
        if isinstance(child, ElmoTokenEmbedder):
            return child
    return None
