"""The ELMo TokenEmbedder: our biLM plus one or more scalar mixes of its layers.

``ELMo_k = gamma * sum_j softmax(w)_j * h_k,j`` (optionally layer-normalising each layer
first), followed by dropout. Several mixes (``num_output_representations``) share ONE biLM
pass; the first is returned by ``forward``. A model that wants ELMo at its output as well gets
the others with :func:`elmo_at_output` (once, in ``__init__``) and
:meth:`ElmoTokenEmbedder.take_representations` (right after each embedding call).
"""
import logging
import math
from typing import Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.scalar_mix import ScalarMix
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from elmo_tasks.bilm.archived import load_model_bilm
from elmo_tasks.modules.layer_cache import LayerCache
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE

logger = logging.getLogger(__name__)


@TokenEmbedder.register("fast_elmo")
class ElmoTokenEmbedder(TokenEmbedder):
    """ELMo from an ``options.json`` + hdf5 weight file in the original format.

    # Parameters
    options_file, weight_file : the biLM (``weight_file=None`` gives random weights, for tests);
        paths or ``elmo_tasks:`` package references; both default to the small biLM that ships
        with elmo-tasks (elmo_tasks/pretrained).
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
    serialization_dir : passed by AllenNLP (not set in configs): the biLM's options are kept
        there, and read back from an archive, see :mod:`elmo_tasks.bilm.archived`.
    """

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
        serialization_dir: Optional[str] = None,
    ) -> None:
        super().__init__()
        if num_output_representations < 1:
            raise ValueError("num_output_representations must be at least 1")
        if scalar_mix_parameters is not None and fixed_layer_weights is not None:
            raise ValueError("give scalar_mix_parameters or fixed_layer_weights, not both")
        self.bilm = load_model_bilm(options_file, weight_file, serialization_dir, stateful=stateful)
        self.requires_grad = requires_grad
        for parameter in self.bilm.parameters():
            parameter.requires_grad_(requires_grad)
        num_layers = self.bilm.num_layers
        if fixed_layer_weights is not None:
            scalar_mix_parameters = _log_weights(fixed_layer_weights, num_layers)
        if scalar_mix_parameters is not None and len(scalar_mix_parameters) != num_layers:
            raise ValueError(f"the biLM has {num_layers} layers but {len(scalar_mix_parameters)} mixing weights were given")
        for k in range(num_output_representations):
            mix = ScalarMix(
                num_layers,
                do_layer_norm=do_layer_norm,
                initial_scalar_parameters=scalar_mix_parameters,
                trainable=scalar_mix_parameters is None,
            )
            self.add_module(f"scalar_mix_{k}", mix)
        self.num_output_representations = num_output_representations
        self.do_layer_norm = do_layer_norm
        self.dropout = torch.nn.Dropout(dropout)
        use_cache = cache_size_mb > 0 and not requires_grad and not stateful
        self.cache = LayerCache(cache_size_mb) if use_cache else None
        self._last_pass: Optional[List[torch.Tensor]] = None
        # Sentences the biLM has encoded through the cache (a count for tests and benchmarks).
        self.sentences_run = 0

    def get_output_dim(self) -> int:
        return self.bilm.output_dim

    def forward(self, elmo_tokens: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """``elmo_tokens``: ``(batch, tokens, 50)`` character ids from the ``elmo_characters`` indexer."""
        layers, mask = self._bilm_layers(elmo_tokens)
        representations = []
        for k in range(self.num_output_representations):
            mix: ScalarMix = getattr(self, f"scalar_mix_{k}")
            mixed = mix(layers, mask) if self.do_layer_norm else mix(layers)
            representations.append(self.dropout(mixed))
        self._last_pass = representations
        return representations[0]

    def take_representations(self) -> List[torch.Tensor]:
        """Every output representation of the most recent ``forward`` call, handed over once.

        Call it right after embedding a text field (e.g. ``text_field_embedder(premise)``): the
        list holds ``num_output_representations`` tensors of the same pass, ``[0]`` being what
        ``forward`` returned. A second call without a new pass raises, so a model can never read
        the representations of another sentence by mistake.
        """
        if self._last_pass is None:
            raise RuntimeError(
                "take_representations() needs a new ELMo pass: call it right after embedding a text "
                "field, once per embedding call"
            )
        representations, self._last_pass = self._last_pass, None
        return representations

    def _bilm_layers(self, char_ids: torch.Tensor):
        if self.requires_grad:
            output = self.bilm(char_ids)
            return output.layers, output.mask
        if self.cache is None:
            with torch.no_grad():
                output = self.bilm(char_ids)
            return output.layers, output.mask
        return self._cached_layers(char_ids)

    def _cached_layers(self, char_ids: torch.Tensor):
        mask = (char_ids > 0).any(dim=-1)
        lengths = mask.sum(dim=1).tolist()
        keys = self.cache.keys(char_ids, lengths)
        found = [self.cache.get(key) for key in keys]
        # Rows with the same sentence (e.g. one per SRL predicate) share one biLM pass.
        missing: Dict[bytes, List[int]] = {}
        for row, value in enumerate(found):
            if value is None:
                missing.setdefault(keys[row], []).append(row)
        if missing:
            first_rows = [rows[0] for rows in missing.values()]
            index = torch.tensor(first_rows, device=char_ids.device)
            unique = char_ids.index_select(0, index)
            longest = max(lengths[row] for row in first_rows)
            with torch.no_grad():
                output = self.bilm(unique[:, :longest])
            self.sentences_run += len(first_rows)
            stacked = torch.stack(output.layers)  # (layers, rows, tokens, dim)
            for slot, (key, rows) in enumerate(missing.items()):
                value = stacked[:, slot, : lengths[rows[0]]]
                for row in rows:
                    found[row] = value
                self.cache.put(key, value.clone())
        num_layers, dim = self.bilm.num_layers, self.bilm.output_dim
        batch, tokens = mask.shape
        out = char_ids.new_zeros((num_layers, batch, tokens, dim), dtype=torch.float32)
        for row, value in enumerate(found):
            out[:, row, : lengths[row]] = value
        return list(out.unbind(0)), mask


def _log_weights(weights: List[float], num_layers: int) -> List[float]:
    if len(weights) != num_layers or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(f"fixed_layer_weights needs {num_layers} non-negative weights, not all zero; got {weights}")
    total = sum(weights)
    return [math.log(w / total) if w > 0 else -1e4 for w in weights]


def find_elmo_embedder(module: torch.nn.Module) -> Optional[ElmoTokenEmbedder]:
    """The ElmoTokenEmbedder inside ``module`` (e.g. a TextFieldEmbedder), or None."""
    for child in module.modules():
        if isinstance(child, ElmoTokenEmbedder):
            return child
    return None


def elmo_at_output(text_field_embedder: torch.nn.Module, model_name: str) -> ElmoTokenEmbedder:
    """The ``fast_elmo`` embedder whose second mix a model adds at its output (Peters et al.
    2018, section 3.3: ELMo at the input and at the output of the task RNN).

    Checked here, once, for every model: the embedder must exist and have
    ``num_output_representations >= 2`` (mix 0 for the input, mix 1 for the output). After each
    ``text_field_embedder(...)`` call the model reads ``take_representations()[1]``.
    """
    elmo = find_elmo_embedder(text_field_embedder)
    found = "no 'fast_elmo' embedder" if elmo is None else f"num_output_representations={elmo.num_output_representations}"
    if elmo is None or elmo.num_output_representations < 2:
        raise ConfigurationError(
            f"{model_name}: elmo_at_output=true needs a 'fast_elmo' token embedder in text_field_embedder "
            f"with num_output_representations >= 2 (one mix for the input, one for the output); found "
            f"{found}. Set num_output_representations: 2, or elmo_at_output: false."
        )
    return elmo
