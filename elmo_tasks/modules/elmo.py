"""``Elmo``: AllenNLP's ``allennlp.modules.elmo.Elmo`` interface on our biLM.

Code written against AllenNLP's module runs with one import changed: the biattentive
classification network takes an ``Elmo``, checks ``len(elmo._scalar_mixes)`` and reads
``elmo(character_ids)["elmo_representations"]``; code copied from AllenNLP's tests resets a
stateful ELMo with ``elmo._elmo_lstm._elmo_lstm.reset_states()``. Both work here.

Stateful by default, as AllenNLP's is; ``stateful=False`` gives our stateless mode (every
sentence starts from zero states, so its vectors do not depend on the batches before it, and
the exact per-sentence layer cache can be used).
"""

import logging
from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from elmo_tasks.bilm import BiLM
from elmo_tasks.modules.allennlp_random_stream import draw_like_allennlp_elmo
from elmo_tasks.modules.elmo_mixes import ElmoMixes, words_to_cache
from elmo_tasks.modules.elmo_token_embedder import load_elmo_bilm

logger = logging.getLogger(__name__)


class Elmo(ElmoMixes, FromParams):
    """``num_output_representations`` ELMo mixes of one biLM pass, AllenNLP's ``Elmo`` arguments.

    # Parameters (AllenNLP's, same meaning)
    options_file, weight_file : the biLM in the original format (local paths or URLs).
    num_output_representations : independent mixes of the layers.
    requires_grad : fine-tune the biLM.
    do_layer_norm : layer-normalise each layer before mixing (statistics: ``layer_norm_style``).
    dropout : on each representation.
    vocab_to_cache : words whose token-layer vectors are precomputed (or a namespace of
        ``vocab``); other words take the character path, so outputs are unchanged.
    keep_sentence_boundaries : return the ``<S>``/``</S>`` positions too (``tokens + 2``).
    scalar_mix_parameters : fixed pre-softmax mixing weights (not trained).
    module : a biLM module with AllenNLP's ``_ElmoBiLm`` interface, instead of the files.

    # Parameters (ours)
    stateful : carry LSTM states between batches (AllenNLP's behaviour, the default here).
    layer_norm_style : ``"allennlp"`` (default here) or ``"bilm_tf"``; see elmo_mixes.py.
    cache_size_mb : the exact per-sentence layer cache, used only when stateless and frozen.
    match_allennlp_random_stream : draw from the global random stream what AllenNLP's
        constructor draws, so modules built afterwards get the same initial weights.
    """

    def __init__(
        self,
        options_file: Optional[str],
        weight_file: Optional[str],
        num_output_representations: int,
        requires_grad: bool = False,
        do_layer_norm: bool = False,
        dropout: float = 0.5,
        vocab_to_cache: Union[str, List[str], None] = None,
        keep_sentence_boundaries: bool = False,
        scalar_mix_parameters: Optional[List[float]] = None,
        module: Optional[torch.nn.Module] = None,
        stateful: bool = True,
        layer_norm_style: str = "allennlp",
        cache_size_mb: float = 1024,
        match_allennlp_random_stream: bool = True,
        vocab: Optional[Vocabulary] = None,
    ) -> None:
        super().__init__()
        if module is not None:
            if options_file is not None or weight_file is not None:
                raise ConfigurationError("Elmo: give either module or options_file/weight_file, not both")
            bilm = module
        else:
            if options_file is None:
                raise ConfigurationError("Elmo needs options_file (and weight_file) or a module")
            with torch.random.fork_rng(devices=[]):
                bilm = load_elmo_bilm(options_file, weight_file, stateful)
            if match_allennlp_random_stream:
                draw_like_allennlp_elmo(bilm.options)
        self._setup_bilm(bilm, requires_grad)
        self._setup_mixes(num_output_representations, do_layer_norm, dropout, scalar_mix_parameters, layer_norm_style)
        self._setup_caches(words_to_cache(vocab_to_cache, vocab), cache_size_mb)
        self.keep_sentence_boundaries = keep_sentence_boundaries

    def get_output_dim(self) -> int:
        bilm: Any = self.bilm  # ours has output_dim; a custom module may have AllenNLP's get_output_dim()
        return bilm.get_output_dim() if hasattr(bilm, "get_output_dim") else bilm.output_dim

    @property
    def _elmo_lstm(self) -> Union["AllenNlpBiLmView", torch.nn.Module]:
        """Where AllenNLP's ``Elmo`` keeps its biLM: a view of ours (a custom ``module`` is returned as is)."""
        return AllenNlpBiLmView(self) if isinstance(self.bilm, BiLM) else self.bilm

    def forward(
        self, inputs: torch.Tensor, word_inputs: Optional[torch.Tensor] = None
    ) -> Dict[str, Union[torch.Tensor, List[torch.Tensor]]]:
        """``inputs``: character ids ``(batch, tokens, 50)`` or with more leading dimensions.

        Returns ``{"elmo_representations": [...], "mask": ...}`` like AllenNLP. ``word_inputs``
        (AllenNLP's word ids for ``vocab_to_cache``) is accepted and not needed: cached words
        are found from their characters, so an uncached word can never get a wrong vector.
        """
        representations, mask = self._representations(inputs)
        return {"elmo_representations": representations, "mask": mask}


class AllenNlpBiLmView:
    """``elmo._elmo_lstm`` and ``elmo._elmo_lstm._elmo_lstm`` for code written against AllenNLP's ``Elmo``.

    AllenNLP nests its biLM (``Elmo._elmo_lstm``, an ``_ElmoBiLm``) around its LSTM stack
    (``_ElmoBiLm._elmo_lstm``, an ``ElmoLstm``), and code copied from AllenNLP's tests resets a
    stateful ELMo with ``elmo._elmo_lstm._elmo_lstm.reset_states()``. Our biLM is one module, so
    both levels are this view of it; it holds no state of its own (a module attribute would add
    keys to the state dict).
    """

    def __init__(self, elmo: Elmo) -> None:
        self._elmo = elmo

    @property
    def _elmo_lstm(self) -> "AllenNlpBiLmView":
        return self

    def reset_states(self, mask: Optional[torch.Tensor] = None) -> None:
        """Forget the carried LSTM states (all rows, or the rows where ``mask`` is true)."""
        self._elmo.reset_states(mask)

    def get_output_dim(self) -> int:
        return self._elmo.bilm.output_dim
