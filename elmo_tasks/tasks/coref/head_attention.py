"""Lee et al. (2017)'s head-finding attention: scored from the BiLSTM states, summing the word representations.

Lee et al. give each word an attention logit from its BiLSTM state (``head_scores =
projection(text_outputs, 1)`` in their code) and sum a span's word representations (the embeddings,
not the BiLSTM states) with the softmax of those logits within the span. AllenNLP's
``SelfAttentiveSpanExtractor`` scores and sums one and the same input, so it cannot take the logits
from one sequence and the values from another. :class:`ContextScoredHeadAttention` does, built from
AllenNLP's pieces: its scorer is the extractor's (a ``TimeDistributed`` linear layer named
``_global_attention``, so parameter names match those of archives with AllenNLP's extractor), the sums
those of ``mention_scores.head_attention_sums`` (AllenNLP's ``batched_span_select``, ``masked_softmax``
and ``weighted_sum``).
"""

from typing import Optional

import torch
from allennlp.modules import TimeDistributed

from elmo_tasks.tasks.coref.mention_scores import head_attention_sums


class ContextScoredHeadAttention(torch.nn.Module):
    """The attention-weighted sum of each span's word representations, its weights from the BiLSTM states.

    # Parameters
    scoring_dim : width of the states the logits are computed from (the BiLSTM's output).
    summed_dim : width of the word representations summed (the text field embedder's output).
    """

    def __init__(self, scoring_dim: int, summed_dim: int) -> None:
        super().__init__()
        self._global_attention = TimeDistributed(torch.nn.Linear(scoring_dim, 1))
        self._summed_dim = summed_dim

    def get_output_dim(self) -> int:
        return self._summed_dim

    def logits(self, scored_from: torch.Tensor) -> torch.Tensor:
        """Each token's attention logit, (batch, tokens, 1), from ``scored_from`` (batch, tokens, scoring dim)."""
        return self._global_attention(scored_from)

    def forward(
        self,
        scored_from: torch.Tensor,
        summed: torch.Tensor,
        spans: torch.Tensor,
        span_mask: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """(batch, spans, summed dim): for each inclusive span of ``spans`` (batch, spans, 2), its tokens of
        ``summed`` weighted by the softmax, within the span, of the logits of ``scored_from``; zeros where
        ``span_mask`` is False (as AllenNLP's span extractors give for masked spans)."""
        sums = head_attention_sums(summed, self.logits(scored_from), spans)
        return sums if span_mask is None else sums * span_mask.unsqueeze(-1)
