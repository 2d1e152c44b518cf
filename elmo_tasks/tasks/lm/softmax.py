"""The biLM's one softmax: sampled during training, exact (full) in evaluation.

Sampled softmax (Jean et al. 2015, as ``tf.nn.sampled_softmax_loss`` in bilm-tf): per batch,
``num_samples`` negative classes are drawn (with replacement) from a proposal ``q``; each
candidate's logit, the true class's included, is corrected by ``-log(expected count) =
-log(num_samples * q(class))``; sampled classes equal to the true class ("accidental hits")
are removed. Its gradients approach the full softmax's, but its loss VALUE is not the exact
NLL (with many samples it sits near ``exact + log(expected count of the target)``), which is
why perplexities are labelled ``sampled`` or ``exact`` and only exact ones are comparable.
The log-uniform (Zipf) proposal suits a vocabulary sorted by frequency,
which AllenNLP's vocabulary is (after padding and unknown).
"""

import math
from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from torch import nn
from torch.nn import functional as F

from elmo_tasks.setting_checks import positive_count

SAMPLERS = ("log_uniform", "uniform")


class LmSoftmax(nn.Module):
    """Weights ``(vocab, dim)`` and bias ``(vocab,)``; class ``padding_index`` is never predicted."""

    _log_q: torch.Tensor  # a buffer (not saved): log q(class), the proposal's log probabilities

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        num_samples: int = 8192,
        sampler: str = "log_uniform",
        padding_index: Optional[int] = 0,
    ) -> None:
        super().__init__()
        if sampler not in SAMPLERS:
            raise ConfigurationError(f"the softmax sampler must be one of {SAMPLERS}, got {sampler!r}")
        self.vocab_size = vocab_size
        self.num_samples = positive_count(num_samples, "num_samples", "the sampled softmax")
        self.sampler = sampler
        self.padding_index = padding_index
        self.weight = nn.Parameter(torch.empty(vocab_size, dim))
        self.bias = nn.Parameter(torch.zeros(vocab_size))
        nn.init.normal_(self.weight, std=1.0 / math.sqrt(dim))
        self.register_buffer("_log_q", self._proposal_log_probs(), persistent=False)

    def _proposal_log_probs(self) -> torch.Tensor:
        """log q(class) over the whole vocabulary (padding gets probability 0)."""
        ranks = torch.arange(self.vocab_size, dtype=torch.float64)
        if self.padding_index is not None:  # rank classes after padding from 0
            ranks = ranks - (ranks > self.padding_index).double()
        if self.sampler == "log_uniform":
            q = torch.log((ranks + 2.0) / (ranks + 1.0))
        else:
            q = torch.ones(self.vocab_size, dtype=torch.float64)
        if self.padding_index is not None:
            q[self.padding_index] = 0.0
        q = q / q.sum()
        return q.log().float()

    def exact_nll(self, hidden: torch.Tensor, targets: torch.Tensor, chunk: int = 2048) -> torch.Tensor:
        """Negative log-likelihood of each ``targets`` ``(n,)`` under the full softmax of ``hidden`` ``(n, dim)``."""
        losses = []
        for start in range(0, hidden.shape[0], chunk):
            logits = F.linear(hidden[start : start + chunk], self.weight, self.bias)
            if self.padding_index is not None:
                logits[:, self.padding_index] = float("-inf")
            losses.append(F.cross_entropy(logits, targets[start : start + chunk], reduction="none"))
        return torch.cat(losses) if losses else hidden.new_zeros(0)

    def sample(self) -> torch.Tensor:
        """``num_samples`` class ids drawn from q, with replacement."""
        return torch.multinomial(self._log_q.exp(), self.num_samples, replacement=True)

    def sampled_nll(
        self, hidden: torch.Tensor, targets: torch.Tensor, samples: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """The sampled-softmax estimate of each target's NLL (one shared sample set per call).

        A class drawn ``n`` times adds ``n * exp(logit)`` to the normaliser, so each distinct
        sampled class is scored once with ``log n`` added to its logit: the same loss as one
        column per draw, with about 40% of the columns for 8,192 log-uniform draws over 50k words.
        """
        if samples is None:
            samples = self.sample().to(hidden.device)
        classes, draws = torch.unique(samples, return_counts=True)
        log_expected = math.log(self.num_samples) + self._log_q
        true_logits = (hidden * self.weight[targets]).sum(-1) + self.bias[targets] - log_expected[targets]
        sampled_logits = F.linear(hidden, self.weight[classes], self.bias[classes])
        sampled_logits = sampled_logits + (draws.to(hidden.dtype).log() - log_expected[classes])
        hits = targets.unsqueeze(1) == classes.unsqueeze(0)
        sampled_logits = sampled_logits.masked_fill(hits, float("-inf"))
        # -log_softmax([true, sampled])[0], without building the concatenated matrix
        return torch.logaddexp(true_logits, torch.logsumexp(sampled_logits, dim=1)) - true_logits
