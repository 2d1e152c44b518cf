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

Archives trained with AllenNLP's own ELMo load into ours (elmo_mixes.py maps their keys).
"""

import contextlib
import logging
import os
from typing import Any, Iterator, List, Optional, Tuple, Type, Union

import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.from_params import FromParams
from allennlp.common.registrable import Registrable
from allennlp.data import Vocabulary
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from elmo_tasks.bilm import BiLM
from elmo_tasks.modules.allennlp_random_stream import draw_like_allennlp_elmo
from elmo_tasks.modules.elmo import Elmo
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, load_elmo_bilm
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

logger = logging.getLogger(__name__)

ALLENNLP_NAME = "elmo_token_embedder"
ENVIRONMENT_VARIABLE = "ELMO_TASKS_REPLACE_ALLENNLP_ELMO"
SWITCH_ON, SWITCH_OFF = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


class AllenNlpElmoTokenEmbedder(ElmoTokenEmbedder):
    """``fast_elmo`` with AllenNLP ``elmo_token_embedder``'s argument order and defaults.

    AllenNLP's arguments keep their meaning. Ours: ``stateful`` (default true, as AllenNLP),
    ``layer_norm_style`` (default ``"allennlp"``), ``num_output_representations``,
    ``cache_size_mb`` (only used when stateless) and ``match_allennlp_random_stream``.
    Without ``options_file`` the biLM is the small one shipped with elmo-tasks (AllenNLP's
    default, the published 2x4096 model, would be downloaded; we never download by default).
    """

    def __init__(
        self,
        options_file: Optional[str] = None,
        weight_file: Optional[str] = None,
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
        if options_file is None:
            logger.warning(
                "elmo_token_embedder without options_file: using the small biLM shipped with elmo-tasks, "
                "NOT AllenNLP's default (the published 2x4096_512_2048cnn_2xhighway model); give "
                "options_file and weight_file to use another biLM"
            )
            options_file, weight_file = SMALL_OPTIONS_FILE, weight_file or SMALL_WEIGHT_FILE
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
    arguments (subclasses of AllenNLP's ``Elmo`` are built as before)."""
    if cls is AllenNlpElmo:
        return Elmo.from_params(params, **extras)
    # FromParams' own from_params as a plain function, to be called with cls (not bound to FromParams)
    inherited = FromParams.from_params.__func__  # type: ignore[attr-defined]  # why: typed as a def; at run time a bound method, which has __func__
    return inherited(cls, params, constructor_to_call, constructor_to_inspect, **extras)


_ELMO_FROM_PARAMS = classmethod(_elmo_from_params)
_replaced: List[Tuple[type, Optional[str]]] = []  # AllenNLP's own registry entry while ours serves the name


def replace_allennlp_elmo() -> None:
    """Serve ``elmo_token_embedder`` with :class:`AllenNlpElmoTokenEmbedder` and AllenNLP's ``Elmo``
    in configs with ours (idempotent)."""
    own = AllenNlpElmo.__dict__.get("from_params")
    if own is not None and own is not _ELMO_FROM_PARAMS:  # AllenNLP changed: say so rather than half-work
        raise RuntimeError(
            "allennlp.modules.elmo.Elmo defines its own from_params in this AllenNLP version; the "
            "elmo-tasks drop-in supports AllenNLP 2.10 (use 'fast_elmo' or elmo_tasks.modules.Elmo directly)"
        )
    AllenNlpElmo.from_params = _ELMO_FROM_PARAMS  # type: ignore[method-assign,assignment]  # why: the drop-in swaps AllenNLP's classmethod at run time; restore_allennlp_elmo undoes it
    registry = Registrable._registry[TokenEmbedder]
    if registry.get(ALLENNLP_NAME, (None,))[0] is AllenNlpElmoTokenEmbedder:
        return
    _replaced.append(registry[ALLENNLP_NAME])  # registered when allennlp.modules.token_embedders is imported
    registry[ALLENNLP_NAME] = (AllenNlpElmoTokenEmbedder, None)
    logger.info("'%s' and AllenNLP's Elmo in configs are now served by elmo_tasks", ALLENNLP_NAME)


def restore_allennlp_elmo() -> None:
    """Give ``elmo_token_embedder`` and ``Elmo`` back to AllenNLP's own implementation."""
    if AllenNlpElmo.__dict__.get("from_params") is _ELMO_FROM_PARAMS:
        del AllenNlpElmo.from_params  # back to the one it inherits from FromParams
    if _replaced:
        Registrable._registry[TokenEmbedder][ALLENNLP_NAME] = _replaced.pop()
        _replaced.clear()


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
