"""Serving AllenNLP's ELMo with ours (opt-in, "the drop-in"): ``elmo_token_embedder`` and ``Elmo``.

Off by default. Switched on by listing ``elmo_tasks.modules.replace_allennlp_elmo`` in
``.allennlp_plugins`` (after ``elmo_tasks.plugin``), by ``ELMO_TASKS_REPLACE_ALLENNLP_ELMO=1`` in a
process that loads our plugin, or by :func:`replace_allennlp_elmo`. Then an unchanged AllenNLP
config builds ours wherever it builds AllenNLP's ELMo:

* ``"type": "elmo_token_embedder"`` builds :class:`AllenNlpElmoTokenEmbedder`: AllenNLP's
  arguments and defaults (stateful, AllenNLP's layer-norm statistics, the same draws from the
  random stream), our biLM underneath;
* an argument annotated with AllenNLP's ``Elmo`` (allennlp-models' biattentive classification
  network takes ``elmo: Elmo``) builds :class:`elmo_tasks.modules.Elmo`, which takes the same
  arguments: AllenNLP's ``Elmo`` is not registrable, so its ``from_params`` is what we serve.

* ``"type": "reduce_on_plateau"`` (AllenNLP's learning-rate scheduler, which fails on torch 2.x)
  builds our ``reduce_lr_on_plateau`` (elmo_tasks/training/reduce_on_plateau.py), so allennlp-models'
  BiDAF and ESIM configs train unchanged.

Defaults are AllenNLP's: ``elmo_token_embedder`` without ``options_file``/``weight_file`` reads
AllenNLP's default URLs (its published 2x4096 model) through AllenNLP's download cache, as
AllenNLP does, and fails as AllenNLP fails where they cannot be fetched: never another biLM.

Archives travel both ways: the replaced modules write their state dicts under AllenNLP's names
(allennlp_state.py, ``save_under_allennlp_names``), so plain AllenNLP loads what the drop-in
trained, and ours reads both AllenNLP's names and our own (elmo_mixes.py).
"""

import contextlib
import functools
import inspect
import logging
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type, Union

import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.from_params import FromParams
from allennlp.common.registrable import Registrable
from allennlp.data import Vocabulary
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.token_embedders import ElmoTokenEmbedder as AllenNlpOwnElmoTokenEmbedder
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from elmo_tasks.bilm import BiLM
from elmo_tasks.modules.allennlp_random_stream import draw_like_allennlp_elmo
from elmo_tasks.modules.allennlp_state import save_under_allennlp_names
from elmo_tasks.modules.elmo import Elmo
from elmo_tasks.modules.elmo_mixes import words_to_cache
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, load_elmo_bilm
from elmo_tasks.training.reduce_on_plateau import ReduceOnPlateauScheduler

logger = logging.getLogger(__name__)

ALLENNLP_NAME = "elmo_token_embedder"
SCHEDULER_NAME = "reduce_on_plateau"  # AllenNLP's, broken on torch 2.x: served by ours while the drop-in is on
_ALLENNLP_DEFAULTS = inspect.signature(AllenNlpOwnElmoTokenEmbedder.__init__).parameters
#: AllenNLP's own defaults (URLs of its published 2x4096_512_2048cnn_2xhighway biLM), read from its signature.
ALLENNLP_DEFAULT_OPTIONS: str = _ALLENNLP_DEFAULTS["options_file"].default
ALLENNLP_DEFAULT_WEIGHTS: str = _ALLENNLP_DEFAULTS["weight_file"].default
ENVIRONMENT_VARIABLE = "ELMO_TASKS_REPLACE_ALLENNLP_ELMO"
SWITCH_ON, SWITCH_OFF = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


class AllenNlpElmoTokenEmbedder(ElmoTokenEmbedder):
    """``fast_elmo`` with AllenNLP ``elmo_token_embedder``'s argument order and defaults.

    AllenNLP's arguments keep their meaning and defaults: without ``options_file`` and
    ``weight_file`` the biLM is AllenNLP's default, the published 2x4096 model, read from
    AllenNLP's URLs through its download cache (where they cannot be fetched, the same error as
    AllenNLP's). Ours: ``stateful`` (default true, as AllenNLP), ``layer_norm_style`` (default
    ``"allennlp"``), ``num_output_representations``, ``cache_size_mb`` (only used when
    stateless) and ``match_allennlp_random_stream``.

    Its state dict uses the names of AllenNLP's ``ElmoTokenEmbedder``, so a model trained with
    the drop-in loads in plain AllenNLP; it loads state dicts in either naming.
    """

    def __init__(
        self,
        options_file: Optional[str] = ALLENNLP_DEFAULT_OPTIONS,
        weight_file: Optional[str] = ALLENNLP_DEFAULT_WEIGHTS,
        do_layer_norm: bool = False,
        dropout: float = 0.5,
        requires_grad: bool = False,
        projection_dim: Optional[int] = None,
        vocab_to_cache: Union[str, List[str], None] = None,
        scalar_mix_parameters: Optional[List[float]] = None,
        stateful: bool = True,
        layer_norm_style: str = "allennlp",
        num_output_representations: int = 1,
        cache_size_mb: float = 1024,
        match_allennlp_random_stream: bool = True,
        vocab: Optional[Vocabulary] = None,
    ) -> None:
        if options_file is None or weight_file is None:  # AllenNLP's fails deep inside; never another biLM
            name = "options_file" if options_file is None else "weight_file"
            raise ConfigurationError(
                f"{ALLENNLP_NAME}: {name} is null; give the biLM's file (or leave the key out for AllenNLP's "
                "default biLM), or use 'fast_elmo' for a biLM with random weights"
            )
        self._match_random_stream = match_allennlp_random_stream
        super().__init__(
            options_file,
            weight_file,
            dropout=dropout,
            do_layer_norm=do_layer_norm,
            num_output_representations=num_output_representations,
            requires_grad=requires_grad,
            scalar_mix_parameters=scalar_mix_parameters,
            stateful=stateful,
            cache_size_mb=cache_size_mb,
            projection_dim=projection_dim,
            vocab_to_cache=vocab_to_cache,
            layer_norm_style=layer_norm_style,
            vocab=vocab,
        )
        cached_words = words_to_cache(vocab_to_cache, vocab)
        self.register_state_dict_post_hook(
            functools.partial(save_under_allennlp_names, elmo_prefix="_elmo.", cached_words=cached_words)
        )

    def _build_bilm(self, options_file: str, weight_file: Optional[str], stateful: bool) -> BiLM:
        with torch.random.fork_rng(devices=[]):
            bilm = load_elmo_bilm(options_file, weight_file, stateful)
        if self._match_random_stream:
            draw_like_allennlp_elmo(bilm.options)
        return bilm


def _elmo_from_params(
    cls: Type[FromParams],
    params: Params,
    constructor_to_call: Any = None,
    constructor_to_inspect: Any = None,
    **extras: Any,
) -> Any:
    """``from_params`` of AllenNLP's ``Elmo`` while the drop-in is on: builds ours from the same
    arguments, saving its state under AllenNLP's names (subclasses of AllenNLP's ``Elmo`` are built
    as before)."""
    if cls is AllenNlpElmo:
        vocab_to_cache = params.get("vocab_to_cache", None)
        cached_words = words_to_cache(vocab_to_cache, extras.get("vocab")) if vocab_to_cache is not None else None
        elmo = Elmo.from_params(params, **extras)
        elmo.register_state_dict_post_hook(functools.partial(save_under_allennlp_names, cached_words=cached_words))
        return elmo
    # FromParams' own from_params as a plain function, to be called with cls (not bound to FromParams)
    inherited = FromParams.from_params.__func__  # type: ignore[attr-defined]  # why: typed as a def; at run time a bound method, which has __func__
    return inherited(cls, params, constructor_to_call, constructor_to_inspect, **extras)


_ELMO_FROM_PARAMS = classmethod(_elmo_from_params)
#: The registry entries the drop-in serves: (registry, name) -> ours.
_SERVED: Dict[Tuple[type, str], type] = {
    (TokenEmbedder, ALLENNLP_NAME): AllenNlpElmoTokenEmbedder,
    (LearningRateScheduler, SCHEDULER_NAME): ReduceOnPlateauScheduler,
}
_replaced: Dict[Tuple[type, str], Tuple[type, Optional[str]]] = {}  # AllenNLP's own entries while ours serve


def replace_allennlp_elmo() -> None:
    """Serve ``elmo_token_embedder`` with :class:`AllenNlpElmoTokenEmbedder`, AllenNLP's ``Elmo`` in
    configs with ours, and ``reduce_on_plateau`` with ``reduce_lr_on_plateau`` (idempotent)."""
    own = AllenNlpElmo.__dict__.get("from_params")
    if own is not None and own is not _ELMO_FROM_PARAMS:  # AllenNLP changed: say so rather than half-work
        raise RuntimeError(
            "allennlp.modules.elmo.Elmo defines its own from_params in this AllenNLP version; the "
            "elmo-tasks drop-in supports AllenNLP 2.10 (use 'fast_elmo' or elmo_tasks.modules.Elmo directly)"
        )
    AllenNlpElmo.from_params = _ELMO_FROM_PARAMS  # type: ignore[method-assign,assignment]  # why: the drop-in swaps AllenNLP's classmethod at run time; restore_allennlp_elmo undoes it
    for (base, name), ours in _SERVED.items():
        registry = Registrable._registry[base]
        if registry.get(name, (None,))[0] is ours:
            continue
        _replaced[base, name] = registry[name]  # registered when AllenNLP's package is imported
        registry[name] = (ours, None)
    logger.info("'%s', AllenNLP's Elmo and '%s' in configs are now served by elmo_tasks", ALLENNLP_NAME, SCHEDULER_NAME)


def restore_allennlp_elmo() -> None:
    """Give ``elmo_token_embedder``, ``Elmo`` and ``reduce_on_plateau`` back to AllenNLP's own implementation."""
    if AllenNlpElmo.__dict__.get("from_params") is _ELMO_FROM_PARAMS:
        del AllenNlpElmo.from_params  # back to the one it inherits from FromParams
    for (base, name), entry in list(_replaced.items()):
        if Registrable._registry[base].get(name, (None,))[0] is _SERVED[base, name]:
            Registrable._registry[base][name] = entry
        del _replaced[base, name]


def allennlp_elmo_is_replaced() -> bool:
    return Registrable._registry[TokenEmbedder].get(ALLENNLP_NAME, (None,))[0] is AllenNlpElmoTokenEmbedder


@contextlib.contextmanager
def allennlp_elmo_replaced() -> Iterator[None]:
    """``with allennlp_elmo_replaced(): ...`` builds AllenNLP's ELMo as ours inside the block."""
    was_replaced = allennlp_elmo_is_replaced()
    replace_allennlp_elmo()
    try:
        yield
    finally:
        if not was_replaced:
            restore_allennlp_elmo()


def apply_environment_switch() -> None:
    """Switch the drop-in on if ``ELMO_TASKS_REPLACE_ALLENNLP_ELMO`` asks for it (read when our plugin loads).

    A value that is neither on (``1``, ``true``, ``yes``, ``on``) nor off (unset, empty, ``0``,
    ``false``, ``no``, ``off``) stops the run, rather than leaving the user to find out from the
    numbers which ELMo they got.
    """
    value = os.environ.get(ENVIRONMENT_VARIABLE, "")
    if value.strip().lower() in SWITCH_ON:
        replace_allennlp_elmo()
    elif value.strip().lower() not in SWITCH_OFF:
        raise ConfigurationError(
            f"{ENVIRONMENT_VARIABLE}={value!r} is neither on ({', '.join(SWITCH_ON)}) nor off "
            f"({', '.join(v for v in SWITCH_OFF if v)}, or unset); set it to 1 to serve AllenNLP's ELMo with ours"
        )
