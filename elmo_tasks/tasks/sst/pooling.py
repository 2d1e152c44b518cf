"""Masked pooling of a sequence into one vector: max, min, mean and self-attentive.

McCann et al. (2017) pool the integrated sequence four ways and concatenate the results, so
the classifier sees both extreme features (max/min), the average, and a learned weighting.
"""

from typing import Sequence, cast

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn import util

POOLINGS = ("max", "min", "mean", "self_attentive")


class MultiPooling(torch.nn.Module):
    """Concatenates the chosen poolings of ``(batch, tokens, dim)`` over unmasked tokens."""

    def __init__(self, input_dim: int, poolings: Sequence[str] = POOLINGS) -> None:
        super().__init__()
        unknown = [p for p in poolings if p not in POOLINGS]
        if unknown or not poolings:
            raise ConfigurationError(f"poolings must be a non-empty subset of {POOLINGS}, got {list(poolings)}")
        self.poolings = list(poolings)
        self.input_dim = input_dim
        # Scores each token for the self-attentive pooling.
        self.attention_scorer = torch.nn.Linear(input_dim, 1) if "self_attentive" in poolings else None

    def get_output_dim(self) -> int:
        return self.input_dim * len(self.poolings)

    def forward(self, sequence: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        expanded = cast(torch.BoolTensor, mask.unsqueeze(-1))
        pooled = []
        for pooling in self.poolings:
            if pooling == "max":
                pooled.append(util.masked_max(sequence, expanded, dim=1))
            elif pooling == "min":
                pooled.append(-util.masked_max(-sequence, expanded, dim=1))
            elif pooling == "mean":
                pooled.append(util.masked_mean(sequence, expanded, dim=1))
            else:
                assert self.attention_scorer is not None  # built when "self_attentive" is one of the poolings
                scores = self.attention_scorer(sequence).squeeze(-1)
                weights = util.masked_softmax(scores, mask)
                pooled.append(util.weighted_sum(sequence, weights))
        return torch.cat(pooled, dim=-1)
