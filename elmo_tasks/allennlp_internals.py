"""The one place elmo-tasks reads attributes that AllenNLP 2.10.1 keeps private.

AllenNLP is pinned at 2.10.1 (``requirements/runtime.txt``), so these do not move under us, but each is a
name AllenNLP never promised: ``tests/modules/test_allennlp_internals.py`` checks every one against
the installed AllenNLP and its failure names this module and the attribute, so an upgrade breaks
here, loudly, and is fixed here. Each function says what it reads and why no public interface does.
(The drop-in's patches of ``Elmo.from_params`` and ``Registrable._registry`` live in
``elmo_tasks/modules/allennlp_compat.py``; the same test file checks that they still apply.)
"""

from typing import Dict, Optional

import torch
from allennlp.modules.span_extractors import EndpointSpanExtractor, SelfAttentiveSpanExtractor
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding, TokenEmbedder


def token_embedders(text_field_embedder: BasicTextFieldEmbedder) -> Dict[str, TokenEmbedder]:
    """The embedders by indexer name (``_token_embedders``): ``BasicTextFieldEmbedder`` has no getter,
    and ELMo at the output must find its ``fast_elmo`` embedder by the indexer that feeds it."""
    return dict(text_field_embedder._token_embedders)


def endpoint_width_embedding(extractor: EndpointSpanExtractor) -> Optional[Embedding]:
    """The width embedding of an ``x,y`` endpoint extractor with raw (unbucketed) widths, else None
    (``_span_width_embedding``, ``_combination``, ``_bucket_widths``): coreference computes the
    extractor's output by parts (``elmo_tasks/tasks/coref/mention_scores.py``) and needs its weights."""
    if extractor._combination != "x,y" or extractor._bucket_widths:
        return None
    return extractor._span_width_embedding


def head_attention(extractor: SelfAttentiveSpanExtractor) -> torch.nn.Module:
    """The module giving each word's attention logit (``_global_attention``, (batch, tokens, 1)):
    coreference sums projected words with the extractor's own attention weights."""
    return extractor._global_attention
