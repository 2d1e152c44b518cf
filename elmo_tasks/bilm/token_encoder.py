"""The context-free token encoder: character CNN, highway layers, projection.

Shortcuts keep it cheap; the first three give bit-for-bit the same vectors as running the CNN
over the full padded ``(batch, tokens, 50)`` grid, the fourth the same to float rounding (the
convolution kernels may add up in another order for a group's shape):

* only real tokens are encoded, never batch padding;
* each distinct word of the batch is encoded once and copied to its positions;
* character slots past the longest word are trimmed, keeping just enough trailing padding
  characters that every token still sees an all-padding window (whose value the max-pool
  would otherwise take from the untrimmed tail);
* where it saves enough of the convolutions' work, the words are split by length into a short
  and a long group, each trimmed to its own longest word (most words are far shorter than a
  batch's longest, which would otherwise set every word's width).
"""

from typing import List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from elmo_tasks.bilm.characters import PADDING_CHARACTER_ID
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.word_cache import WordVectorLookup


class Highway(nn.Module):
    """``y = g * act(x W_t + b_t) + (1 - g) * x`` with gate ``g = sigmoid(x W_c + b_c)``.

    Weights are kept in TensorFlow's ``x @ W`` layout so the hdf5 file maps one to one.
    """

    def __init__(self, dim: int, n_layers: int) -> None:
        super().__init__()
        self.w_transform = nn.Parameter(torch.empty(n_layers, dim, dim))
        self.b_transform = nn.Parameter(torch.zeros(n_layers, dim))
        self.w_carry = nn.Parameter(torch.empty(n_layers, dim, dim))
        self.b_carry = nn.Parameter(torch.zeros(n_layers, dim))
        for w in (self.w_transform, self.w_carry):
            nn.init.normal_(w, std=(1.0 / dim) ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for k in range(self.w_transform.shape[0]):
            gate = torch.sigmoid(torch.addmm(self.b_carry[k], x, self.w_carry[k]))
            transform = torch.relu(torch.addmm(self.b_transform[k], x, self.w_transform[k]))
            x = gate * transform + (1.0 - gate) * x
        return x


class CharacterTokenEncoder(nn.Module):
    """Maps character ids ``(..., max_chars)`` of real tokens to ``(..., projection_dim)``."""

    def __init__(self, options: BilmOptions) -> None:
        super().__init__()
        self.options = options
        # Row 0 is the "no token" id and stays zero, as in the original.
        self.char_embedding = nn.Parameter(torch.empty(options.n_characters, options.char_embedding_dim))
        nn.init.uniform_(self.char_embedding, -1.0, 1.0)
        with torch.no_grad():
            self.char_embedding[0].zero_()
        self.convolutions = nn.ModuleList(
            nn.Conv1d(options.char_embedding_dim, n_filters, kernel_size=width) for width, n_filters in options.filters
        )
        self.max_width = max(width for width, _ in options.filters)
        self.highway = Highway(options.n_filters, options.n_highway)
        # bilm-tf has no projection when the CNN already has projection_dim features.
        self.projection = (
            nn.Linear(options.n_filters, options.projection_dim)
            if options.n_filters != options.projection_dim
            else None
        )
        self._activation = torch.relu if options.activation == "relu" else torch.tanh
        # Optional precomputed vectors of known words.
        self.word_cache: Optional[WordVectorLookup] = None

    def forward(self, char_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Encode ``char_ids`` ``(batch, tokens, chars)`` where ``mask`` is true; zeros elsewhere."""
        batch, tokens, chars = char_ids.shape
        flat_mask = mask.reshape(-1)
        positions = flat_mask.nonzero().squeeze(1)
        words = char_ids.reshape(-1, chars).index_select(0, positions)
        unique_words, inverse = torch.unique(words, dim=0, return_inverse=True)
        if self.word_cache is None:
            encoded = self.encode_words(unique_words).index_select(0, inverse)
        else:
            encoded = self.word_cache.encode(unique_words, self.encode_words).index_select(0, inverse)
        out = encoded.new_zeros(batch * tokens, encoded.shape[-1])
        out = out.index_copy(0, positions, encoded)
        return out.view(batch, tokens, -1)

    def encode_words(self, words: torch.Tensor, split_by_length: bool = True) -> torch.Tensor:
        """Encode distinct, real words ``(n_words, chars)`` to ``(n_words, projection_dim)``.

        ``split_by_length`` lets the convolutions run over short and long words apart where that saves
        work; without it one call takes all the words, so each word's rounding depends only on how
        many words there are (what :mod:`elmo_tasks.bilm.seen_words` needs).
        """
        if words.shape[0] == 0:
            return self.char_embedding.new_zeros(0, self.options.projection_dim)
        lengths = (words != PADDING_CHARACTER_ID).sum(dim=1)
        order = torch.argsort(lengths, stable=True)
        split = (
            cheapest_length_split(lengths[order].tolist(), self.max_width, words.shape[1]) if split_by_length else None
        )
        if split is None:
            pooled = self._pooled_filters(words, int(lengths.max()))
        else:
            short, long = order[:split], order[split:]
            in_order = torch.cat(
                [
                    self._pooled_filters(words.index_select(0, short), int(lengths[short[-1]])),
                    self._pooled_filters(words.index_select(0, long), int(lengths[long[-1]])),
                ]
            )
            pooled = in_order.index_select(0, torch.argsort(order))
        features = self.highway(self._activation(pooled))
        return self.projection(features) if self.projection is not None else features

    def _pooled_filters(self, words: torch.Tensor, longest: int) -> torch.Tensor:
        """Max-pooled filter responses ``(n_words, n_filters)`` of words at most ``longest`` characters long."""
        keep = min(words.shape[1], longest + self.max_width)
        embedded = F.embedding(words[:, :keep], self.char_embedding).transpose(1, 2)
        pooled: List[torch.Tensor] = [conv(embedded).amax(dim=2) for conv in self.convolutions]
        return torch.cat(pooled, dim=1)


# A split into two groups costs a second round of convolution calls, so it must save at least this
# share of the character positions the convolutions run over.
MIN_SAVING = 0.15


def cheapest_length_split(sorted_lengths: List[int], max_width: int, max_chars: int) -> Optional[int]:
    """Where to split words sorted by ``sorted_lengths`` into a short and a long group so that the
    convolutions run over the fewest character positions (each group is as wide as its longest word
    plus ``max_width``, at most ``max_chars``); None when no split saves ``MIN_SAVING`` of them."""
    count = len(sorted_lengths)
    if count < 2:
        return None

    def width(longest: int) -> int:
        return min(max_chars, longest + max_width)

    whole = count * width(sorted_lengths[-1])
    best: Tuple[int, int] = (whole, 0)
    for split in range(1, count):
        if sorted_lengths[split] == sorted_lengths[split - 1]:
            continue  # the same cost as the next split that separates different lengths
        cost = split * width(sorted_lengths[split - 1]) + (count - split) * width(sorted_lengths[-1])
        best = min(best, (cost, split))
    cost, split = best
    return split if split and cost <= (1.0 - MIN_SAVING) * whole else None
