"""What ``fast_elmo`` and ``Elmo`` share: one biLM pass, its caches, and the scalar mixes.

The pass keeps the sentence-boundary positions until the end, because AllenNLP's layer norm
takes its statistics over them and ``keep_sentence_boundaries`` returns them. Inputs with
extra leading dimensions (a list of texts per instance, ``num_wrapping_dims``) are flattened
to ``(rows, tokens, chars)`` before the pass and reshaped after it.

Layer-norm statistics (``do_layer_norm``), one named choice, ``layer_norm_style``:

* ``"bilm_tf"``: mean and variance over the real tokens only, as the original bilm-tf does
  (its ``weight_layers`` normalises with the mask that ``BidirectionalLanguageModel`` returns
  after removing ``<S>``/``</S>``);
* ``"allennlp"``: over the real tokens and both boundary positions, as AllenNLP's ``Elmo``
  does (it mixes before removing the boundaries).

Either way the statistics are one mean and one variance per layer over the whole batch, and
padded positions of the output are zero.
"""

import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.modules.scalar_mix import ScalarMix

from elmo_tasks.bilm import BiLM
from elmo_tasks.bilm.word_cache import WordVectorCache
from elmo_tasks.modules.allennlp_state import (
    convert_allennlp_state,
    is_allennlp_bilm_state,
)
from elmo_tasks.modules.layer_cache import LayerCache
from elmo_tasks.setting_checks import positive_count

logger = logging.getLogger(__name__)

LAYER_NORM_STYLES = ("bilm_tf", "allennlp")


def words_to_cache(vocab_to_cache: Union[str, Sequence[str], None], vocab: Optional[Vocabulary]) -> Optional[List[str]]:
    """``vocab_to_cache`` as a word list: a namespace of ``vocab`` (e.g. ``"tokens"``) or the words."""
    if vocab_to_cache is None:
        return None
    if isinstance(vocab_to_cache, str):
        if vocab is None:
            raise ConfigurationError(
                f"vocab_to_cache='{vocab_to_cache}' names a vocabulary namespace, but no vocabulary was given; "
                "build the embedder from a config (the model passes its vocabulary) or pass a list of words"
            )
        if vocab_to_cache not in vocab.get_namespaces():
            raise ConfigurationError(
                f"vocab_to_cache: the vocabulary has no namespace '{vocab_to_cache}' "
                f"(it has {sorted(vocab.get_namespaces())})"
            )
        return list(vocab.get_token_to_index_vocabulary(vocab_to_cache))
    return list(vocab_to_cache)


class ElmoMixes(torch.nn.Module):
    """A biLM (``self.bilm``) and ``num_output_representations`` scalar mixes (``scalar_mix_k``).

    Subclasses call ``_setup_bilm``, ``_setup_mixes`` and ``_setup_caches`` in ``__init__``, and
    ``_representations`` in ``forward``.
    """

    # Whether the outputs keep the ``<S>``/``</S>`` positions (``Elmo(keep_sentence_boundaries=True)``).
    keep_sentence_boundaries = False

    # Ours, or a custom module with AllenNLP's ``_ElmoBiLm`` interface (``Elmo(module=...)``), whose
    # attributes (``num_layers``, ``get_output_dim()``, its output dict) are known only by duck typing.
    bilm: Union[BiLM, Any]

    def _setup_bilm(self, bilm: Union[BiLM, Any], requires_grad: bool) -> None:
        """The biLM, frozen unless ``requires_grad`` (a custom module's parameters are its owner's)."""
        self.bilm = bilm
        self.requires_grad = requires_grad
        if isinstance(bilm, BiLM):
            for parameter in bilm.parameters():
                parameter.requires_grad_(requires_grad)
        self.register_load_state_dict_pre_hook(_read_allennlp_keys)
        self.register_load_state_dict_pre_hook(_bilm_from_its_weight_file)  # after: it reads our names
        self.register_load_state_dict_post_hook(_invalidate_word_cache)

    def _setup_mixes(
        self,
        num_output_representations: int,
        do_layer_norm: bool,
        dropout: float,
        scalar_mix_parameters: Optional[List[float]],
        layer_norm_style: str,
    ) -> None:
        """The mixes of the biLM's layers (after ``_setup_bilm``), fixed where ``scalar_mix_parameters``
        are given."""
        positive_count(num_output_representations, "num_output_representations", "ELMo")
        if layer_norm_style not in LAYER_NORM_STYLES:
            raise ConfigurationError(f"layer_norm_style must be one of {LAYER_NORM_STYLES}, got '{layer_norm_style}'")
        num_layers = self.bilm.num_layers
        if scalar_mix_parameters is not None and len(scalar_mix_parameters) != num_layers:
            raise ConfigurationError(
                f"scalar_mix_parameters: the biLM has {num_layers} layers but {len(scalar_mix_parameters)} mixing "
                "weights were given; give one per layer"
            )
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
        self.layer_norm_style = layer_norm_style
        self.dropout = torch.nn.Dropout(dropout)

    def _setup_caches(self, cached_words: Optional[List[str]], cache_size_mb: float) -> None:
        """The layer cache and the word-vector cache, for a frozen biLM of ours (after ``_setup_bilm``):
        fine-tuning would make cached outputs stale."""
        own_bilm = isinstance(self.bilm, BiLM)
        stateful = own_bilm and self.bilm.stateful
        use_cache = own_bilm and cache_size_mb > 0 and not self.requires_grad and not stateful
        self.cache = LayerCache(cache_size_mb) if use_cache else None
        # sentences the biLM has encoded through the cache (a count for tests and benchmarks)
        self.sentences_run = 0
        self.word_cache: Optional[WordVectorCache] = None
        if cached_words is None:
            return
        if not own_bilm:
            raise ConfigurationError("vocab_to_cache needs our biLM (options_file/weight_file), not a custom module")
        if self.requires_grad:
            logger.warning(
                "vocab_to_cache is ignored while fine-tuning the biLM (requires_grad=True): cached "
                "word vectors would go stale as the character CNN trains; every word takes the "
                "character path instead"
            )
        else:
            self.word_cache = WordVectorCache(cached_words, self.bilm.options.max_characters_per_token)
            self.bilm.use_word_cache(self.word_cache)

    # ---- the pass ----------------------------------------------------------------------

    def _representations(self, char_ids: torch.Tensor) -> Tuple[List[torch.Tensor], torch.Tensor]:
        """Every mix (before any projection) and its mask, shaped like ``char_ids[..., :-1]``."""
        if char_ids.dim() < 3:
            raise ConfigurationError(
                f"ELMo takes character ids (..., tokens, {self._characters_per_token()}), got shape "
                f"{tuple(char_ids.shape)}; index the text with the 'elmo_characters' token indexer"
            )
        leading = char_ids.shape[:-2]
        rows = char_ids.reshape(-1, *char_ids.shape[-2:])
        layers, full_mask = self._layers_with_boundaries(rows)
        token_mask = (rows > 0).any(dim=-1)
        tokens = rows.shape[1]
        if self.do_layer_norm and self.layer_norm_style == "bilm_tf":
            statistics_mask = torch.zeros_like(full_mask)
            statistics_mask[:, 1 : tokens + 1] = token_mask
        else:
            statistics_mask = full_mask
        keep, out_mask = (full_mask, full_mask) if self.keep_sentence_boundaries else (token_mask, token_mask)
        representations = []
        for k in range(self.num_output_representations):
            mix: ScalarMix = getattr(self, f"scalar_mix_{k}")
            mixed = mix(layers, statistics_mask) if self.do_layer_norm else mix(layers)
            if not self.keep_sentence_boundaries:
                mixed = mixed[:, 1 : tokens + 1]
            mixed = mixed * keep.unsqueeze(-1).to(mixed.dtype)
            representations.append(self.dropout(mixed).reshape(*leading, mixed.shape[1], -1))
        return representations, out_mask.reshape(*leading, out_mask.shape[1])

    def _characters_per_token(self) -> int:
        return self.bilm.options.max_characters_per_token if isinstance(self.bilm, BiLM) else 50

    def _layers_with_boundaries(self, char_ids: torch.Tensor) -> Tuple[List[torch.Tensor], torch.Tensor]:
        if not isinstance(self.bilm, BiLM):  # a custom module with AllenNLP's _ElmoBiLm interface
            output = self.bilm(char_ids)
            return output["activations"], output["mask"]
        if self.requires_grad:
            output = self.bilm(char_ids, keep_boundaries=True)
            return output.layers, output.mask
        if self.cache is None:
            with torch.no_grad():
                output = self.bilm(char_ids, keep_boundaries=True)
            return output.layers, output.mask
        return self._cached_layers(char_ids)

    def _cached_layers(self, char_ids: torch.Tensor) -> Tuple[List[torch.Tensor], torch.Tensor]:
        """The layers from the per-sentence cache; only sentences not seen before run the biLM,
        and rows holding the same sentence (e.g. one per SRL predicate) share one pass."""
        cache = self.cache
        assert cache is not None  # _layers_with_boundaries comes here only with a cache
        lengths = (char_ids > 0).any(dim=-1).sum(dim=1).tolist()
        keys = cache.keys(char_ids, lengths)
        found = [cache.get(key) for key in keys]
        missing: Dict[bytes, List[int]] = {}
        for row, value in enumerate(found):
            if value is None:
                missing.setdefault(keys[row], []).append(row)
        if missing:
            first_rows = [rows[0] for rows in missing.values()]
            index = torch.tensor(first_rows, device=char_ids.device)
            longest = max(max(lengths[row] for row in first_rows), 1)
            with torch.no_grad():
                output = self.bilm(char_ids.index_select(0, index)[:, :longest], keep_boundaries=True)
            self.sentences_run += len(first_rows)
            stacked = torch.stack(output.layers)  # (layers, rows, tokens + 2, dim)
            for slot, (key, rows) in enumerate(missing.items()):
                value = stacked[:, slot, : lengths[rows[0]] + 2]
                for row in rows:
                    found[row] = value
                cache.put(key, value.clone())
        batch, tokens = char_ids.shape[:2]
        out = torch.zeros((self.bilm.num_layers, batch, tokens + 2, self.bilm.output_dim), device=char_ids.device)
        for row, value in enumerate(found):
            assert value is not None  # from the cache, or run above
            out[:, row, : lengths[row] + 2] = value
        full_mask = torch.arange(tokens + 2, device=char_ids.device).unsqueeze(0) < (
            torch.tensor(lengths, device=char_ids.device) + 2
        ).unsqueeze(1)
        return list(out.unbind(0)), full_mask

    @property
    def _scalar_mixes(self) -> List[ScalarMix]:
        """The mixes in order, under the name AllenNLP's ``Elmo`` gives its list of them.

        Code written for AllenNLP reads it, e.g. allennlp-models' biattentive classification
        network checks ``len(elmo._scalar_mixes)`` against the representations it uses. A
        property, not a stored list: the modules stay registered as ``scalar_mix_k`` (as in
        AllenNLP), so state dicts and archives keep their keys.
        """
        return [getattr(self, f"scalar_mix_{k}") for k in range(self.num_output_representations)]

    def reset_states(self, mask: Optional[torch.Tensor] = None) -> None:
        """Stateful mode: forget the LSTM states carried from earlier batches.

        ``mask`` (``(rows,)``, true where a row's state is to be forgotten) resets only those
        rows, as AllenNLP's ``reset_states(mask)`` does; its length must be the number of rows
        whose states are kept (the largest batch seen so far).
        """
        if mask is None:
            self.bilm.reset_states()
            return
        if not isinstance(self.bilm, BiLM):
            raise ConfigurationError(
                "reset_states(mask) needs our biLM (options_file/weight_file), not a custom module"
            )
        self.bilm.reset_states(mask)

    # ---- archives of AllenNLP's ELMo -----------------------------------------------------

    def _read_allennlp_keys(self, state_dict: Dict[str, torch.Tensor], prefix: str) -> None:
        """Accept a state dict of AllenNLP's ``elmo_token_embedder`` or ``Elmo`` (same arrays, other names)."""
        inner = prefix + "_elmo."  # ElmoTokenEmbedder wraps an Elmo
        elmo_prefix = inner if is_allennlp_bilm_state(state_dict, inner) else prefix
        if not is_allennlp_bilm_state(state_dict, elmo_prefix):
            return
        if isinstance(self.bilm, BiLM):
            count = convert_allennlp_state(state_dict, elmo_prefix, self.bilm.options)
            moved = {
                key: prefix + key[len(elmo_prefix) :]
                for key in list(state_dict)
                if key.startswith(elmo_prefix + "bilm.")
            }
        else:  # a custom module keeps its own names
            moved = {
                key: prefix + "bilm." + key[len(elmo_prefix + "_elmo_lstm.") :]
                for key in list(state_dict)
                if key.startswith(elmo_prefix + "_elmo_lstm.")
            }
            count = len(moved)
        moved.update(
            {
                key: prefix + key[len(elmo_prefix) :]
                for key in list(state_dict)
                if key.startswith(elmo_prefix + "scalar_mix_")
            }
        )
        if prefix + "_projection.weight" in state_dict:
            moved.update(
                {
                    prefix + "_projection.weight": prefix + "projection.weight",
                    prefix + "_projection.bias": prefix + "projection.bias",
                }
            )
        for old, new in moved.items():
            state_dict[new] = state_dict.pop(old)
        logger.info("read an AllenNLP ELMo state dict at '%s' (%d biLM tensors converted)", prefix or "<root>", count)


def _bilm_from_its_weight_file(module: ElmoMixes, state_dict: Dict[str, torch.Tensor], prefix: str, *args: Any) -> None:
    """``load_state_dict``'s pre-hook: a state dict that holds none of the biLM's tensors leaves the biLM as
    read from its weight file.

    A shipped model's portable archive (elmo_tasks/pretrained/portable.py) leaves the biLM out of its
    weights, as the biLM is the package's own file, named in its config by reference; AllenNLP's
    ``Model.load`` would report its tensors missing. They are what the biLM holds already, read from that
    file when the model was built, so they go into the state dict as they are. Only then: a biLM built
    from options alone (random, to be loaded, as from a trained model's ``elmo_bilm/`` copy) or a state
    dict with some of its tensors is left to torch, which reports what is missing."""
    bilm = module.bilm
    own = prefix + "bilm."
    if not isinstance(bilm, BiLM) or bilm.weight_file is None or any(key.startswith(own) for key in state_dict):
        return
    logger.info("the biLM at '%s' is not in the state dict: kept as read from %s", own, bilm.weight_file)
    for name, tensor in bilm.state_dict().items():
        state_dict[own + name] = tensor


def _read_allennlp_keys(module: ElmoMixes, state_dict: Dict[str, torch.Tensor], prefix: str, *args: Any) -> None:
    """``load_state_dict``'s pre-hook (torch's public one, which passes the module first)."""
    module._read_allennlp_keys(state_dict, prefix)


def _invalidate_word_cache(module: ElmoMixes, incompatible_keys: Any) -> None:
    """``load_state_dict``'s post-hook: new weights make the cached word vectors stale."""
    if module.word_cache is not None:
        module.word_cache.invalidate()
