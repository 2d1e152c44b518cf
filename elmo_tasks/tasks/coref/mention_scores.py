"""Mention scores s_m(i) of every candidate span without building every span's representation g_i.

g_i is [x_start, x_end, width embedding] (AllenNLP's ``EndpointSpanExtractor``) followed by the
head attention's weighted sum of the span's words (AllenNLP's ``SelfAttentiveSpanExtractor``, or
``head_attention.ContextScoredHeadAttention``, whose logits come from the BiLSTM states), and
s_m(i) = scorer(FFNN(g_i)). The FFNN's first layer is linear, so it is computed by the parts of g_i,
each where it is cheapest (:class:`MentionLayerParts`):

- the BiLSTM states are projected once per token, not once per span that starts or ends there;
- the width embeddings once per width;
- the words once per token *before* the head attention sums them: W_a (sum_k a_k x_k) =
  sum_k a_k (W_a x_k), so the attention's (spans x widest span x dim) tensor, the largest of a
  training step, holds the FFNN's hidden units (100 to 150) instead of the words' dimensions (450
  without ELMo, 706 with the small biLM).

The attention's logits are the model's (its extractor's, computed once per token); its span selection
and weights are AllenNLP's (:func:`head_attention_sums`).
The numbers equal those of the FFNN on the extractors' g_i up to float rounding
(``tests/tasks/coref/test_coref_mention_scores.py``); g_i itself is then built by the two
extractors for the kept spans only (``model.py``), a few percent of the candidates.
"""

from typing import NamedTuple, Optional, cast

import torch
from allennlp.modules.span_extractors import EndpointSpanExtractor
from allennlp.nn import util

from elmo_tasks.allennlp_internals import endpoint_width_embedding
from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward


class MentionLayerParts(NamedTuple):
    """The mention FFNN's first layer on g_i = [x_start, x_end, width embedding, head sum], split by part:
    per token or per width, before any span is formed."""

    starts: torch.Tensor  # (batch, tokens, hidden): W_start x_t + bias
    ends: torch.Tensor  # (batch, tokens, hidden): W_end x_t
    widths: torch.Tensor  # (widths, hidden): W_width e_w
    head_values: torch.Tensor  # (batch, tokens, hidden): W_head w_t, what the head attention sums
    head_logits: torch.Tensor  # (batch, tokens, 1): the head attention's logit of each word
    width_embeddings: torch.Tensor  # (widths, feature size): e_w, for width embeddings dropped out per span
    width_weight: torch.Tensor  # (hidden, feature size): W_width


def mention_layer_parts(
    endpoint_extractor: EndpointSpanExtractor,
    first_layer: torch.nn.Linear,
    contextual: torch.Tensor,
    embedded: torch.Tensor,
    head_logits: torch.Tensor,
) -> MentionLayerParts:
    """The per-token and per-width parts of the mention FFNN's first layer (``first_layer``), from the
    BiLSTM states ``contextual`` and the word representations ``embedded``, (batch, tokens, dim), and the
    head attention's logit of each token, ``head_logits`` (batch, tokens, 1)."""
    width_embedding = endpoint_width_embedding(endpoint_extractor)
    if width_embedding is None:
        raise ValueError("mention scores by parts need the model's endpoint extractor: x,y and raw width embeddings")
    context_dim, embedding_dim = contextual.size(-1), embedded.size(-1)
    width_dim = width_embedding.get_output_dim()
    start_weight, end_weight, width_weight, head_weight = first_layer.weight.split(
        [context_dim, context_dim, width_dim, embedding_dim], dim=1
    )
    return MentionLayerParts(
        starts=torch.nn.functional.linear(contextual, start_weight, first_layer.bias),
        ends=torch.nn.functional.linear(contextual, end_weight),
        widths=torch.nn.functional.linear(width_embedding.weight, width_weight),
        head_values=torch.nn.functional.linear(embedded, head_weight),
        head_logits=head_logits,
        width_embeddings=width_embedding.weight,
        width_weight=width_weight,
    )


def head_attention_sums(values: torch.Tensor, logits: torch.Tensor, spans: torch.Tensor) -> torch.Tensor:
    """What the ``SelfAttentiveSpanExtractor`` computes for each span (its ``_embed_spans``, with the
    same AllenNLP functions), summing ``values`` (batch, tokens, dim) instead of the words, weighted by
    the softmax of the words' ``logits`` (batch, tokens, 1) within the span: (batch, spans, dim).

    Two calls differ from the extractor's, for speed: values and logits are selected apart rather
    than concatenated and sliced apart again (whose backward pass fills and copies the whole
    selection twice), and ``weighted_sum`` gets the spans as its batch, which it sums with one batched
    matrix product instead of a broadcast product and a sum."""
    span_values, width_mask = util.batched_span_select(values, cast(torch.LongTensor, spans))
    span_logits, _ = util.batched_span_select(logits, cast(torch.LongTensor, spans))
    weights = util.masked_softmax(span_logits.squeeze(-1), width_mask)
    batch, num_spans, width, dim = span_values.shape
    sums = util.weighted_sum(span_values.view(batch * num_spans, width, dim), weights.view(batch * num_spans, width))
    return sums.view(batch, num_spans, dim)


def first_layer_of_spans(
    parts: MentionLayerParts, spans: torch.Tensor, width_keep: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """The first layer's output on g_i of the given spans, (batch, spans, hidden); ``spans`` inclusive
    and non-negative (a padding span's row means nothing: its mention score is masked afterwards).

    ``width_keep`` (batch, spans, feature size): a dropout mask (zeros and 1 / (1 - p)) on each span's
    width embedding, Lee et al.'s dropout of the feature embeddings; the width part then goes per span,
    not per width."""
    widths = spans[:, :, 1] - spans[:, :, 0]
    if width_keep is None:
        width_part = parts.widths[widths]
    else:
        width_part = torch.nn.functional.linear(parts.width_embeddings[widths] * width_keep, parts.width_weight)
    return (
        util.batched_index_select(parts.starts, cast(torch.LongTensor, spans[:, :, 0]))
        + util.batched_index_select(parts.ends, cast(torch.LongTensor, spans[:, :, 1]))
        + width_part
        + head_attention_sums(parts.head_values, parts.head_logits, spans)
    )


def mention_scores_from_first_layer(
    feedforward: LayeredFeedForward, scorer: torch.nn.Linear, first_layer_output: torch.Tensor
) -> torch.Tensor:
    """s_m(i), (batch, spans): the rest of the mention FFNN and its scorer."""
    return scorer(feedforward.after_first_layer(first_layer_output)).squeeze(-1)
