"""Decoding answer spans: the best span under a length limit, in memory linear in the passage, and
the passage text a token span covers."""

from typing import Any, Dict, List, Tuple

import torch
from allennlp.nn.util import replace_masked_values


def best_spans(
    start_log_probs: torch.Tensor, end_log_probs: torch.Tensor, mask: torch.BoolTensor, max_span_length: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The span (start, end) maximising log p(start) + log p(end) with start <= end <
    start + max_span_length, end inside the passage; and its log-probability.

    Scores are laid out as (batch, start, offset) with offset < max_span_length: linear memory
    in the passage length.
    """
    batch, length = start_log_probs.shape
    width = min(max_span_length, length)
    very_negative = torch.finfo(start_log_probs.dtype).min / 4
    end_scores = replace_masked_values(end_log_probs, mask, very_negative)
    padded_end = torch.nn.functional.pad(end_scores, (0, width - 1), value=very_negative)
    banded_end = padded_end.unfold(1, width, 1)  # (batch, length, width): end = start + offset
    start_scores = replace_masked_values(start_log_probs, mask, very_negative)
    scores = start_scores.unsqueeze(-1) + banded_end
    best = scores.view(batch, -1).argmax(dim=-1)
    starts = torch.div(best, width, rounding_mode="floor")
    ends = starts + best % width
    return torch.stack([starts, ends], dim=-1), scores.view(batch, -1).gather(1, best.unsqueeze(1)).squeeze(1)


def span_texts(spans: List[List[int]], metadata: List[Dict[str, Any]]) -> Tuple[List[str], List[Tuple[int, int]]]:
    """The passage text of each token span, cut at the tokens' character offsets."""
    answers, offsets = [], []
    for (start, end), entry in zip(spans, metadata, strict=True):
        token_offsets = entry["token_offsets"]
        end = min(end, len(token_offsets) - 1)
        char_start, char_end = token_offsets[start][0], token_offsets[end][1]
        answers.append(entry["passage_text"][char_start:char_end])
        offsets.append((char_start, char_end))
    return answers, offsets
