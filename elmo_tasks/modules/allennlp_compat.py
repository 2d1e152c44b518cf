"""Serving AllenNLP's registered name ``elmo_token_embedder`` with our ELMo (opt-in).

Turned on by listing ``elmo_tasks.modules.replace_allennlp_elmo`` in ``.allennlp_plugins`` (after
``elmo_tasks``), or by setting ``ELMO_TASKS_REPLACE_ALLENNLP_ELMO=1``; off by default. Then an
unchanged AllenNLP config with ``"type": "elmo_token_embedder"`` builds
:class:`AllenNlpElmoTokenEmbedder`: AllenNLP's arguments and defaults (stateful, AllenNLP's
layer-norm statistics, the same draws from the random stream), our biLM underneath, and
archives trained with AllenNLP's own embedder load into it.
"""

import contextlib
import logging
from typing import Iterator, List, Optional, Union

import torch
from allennlp.common.registrable import Registrable
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from elmo_tasks.bilm import BiLM
from elmo_tasks.modules.allennlp_random_stream import draw_like_allennlp_elmo
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, load_elmo_bilm
from elmo_tasks.pretrained import SMALL_OPTIONS_FILE, SMALL_WEIGHT_FILE

logger = logging.getLogger(__name__)

ALLENNLP_NAME = "elmo_token_embedder"
ENVIRONMENT_VARIABLE = "ELMO_TASKS_REPLACE_ALLENNLP_ELMO"


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


_replaced: List[object] = []  # AllenNLP's own registry entry while ours serves the name


def replace_allennlp_elmo() -> None:
    """Serve ``elmo_token_embedder`` with :class:`AllenNlpElmoTokenEmbedder` (idempotent)."""
    registry = Registrable._registry[TokenEmbedder]
    if registry.get(ALLENNLP_NAME, (None,))[0] is AllenNlpElmoTokenEmbedder:
        return
    _replaced.append(registry.get(ALLENNLP_NAME))
    registry[ALLENNLP_NAME] = (AllenNlpElmoTokenEmbedder, None)
    logger.info("'%s' is now served by elmo_tasks (%s)", ALLENNLP_NAME, AllenNlpElmoTokenEmbedder.__name__)


def restore_allennlp_elmo() -> None:
    """Give ``elmo_token_embedder`` back to AllenNLP's own implementation."""
    if _replaced:
        Registrable._registry[TokenEmbedder][ALLENNLP_NAME] = _replaced.pop()
        _replaced.clear()


def allennlp_elmo_is_replaced() -> bool:
    return Registrable._registry[TokenEmbedder].get(ALLENNLP_NAME, (None,))[0] is AllenNlpElmoTokenEmbedder


@contextlib.contextmanager
def allennlp_elmo_replaced() -> Iterator[None]:
    """``with allennlp_elmo_replaced(): ...`` builds ``elmo_token_embedder`` as ours inside the block."""
    was_replaced = allennlp_elmo_is_replaced()
    replace_allennlp_elmo()
    try:
        yield
    finally:
        if not was_replaced:
            restore_allennlp_elmo()
