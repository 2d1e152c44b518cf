"""Precomputed context-free vectors of a known vocabulary (ELMo's ``vocab_to_cache``).

A frozen token encoder maps each word to a fixed vector, so the character CNN and highway
layers need not run again for words known in advance. Words are looked up by their character
ids (the biLM's real input), so a word outside the cached vocabulary simply goes through the
character path: the result is the same vector either way.

The vectors are computed lazily, on first use and on the encoder's device, and again after
``invalidate()`` (e.g. when new weights are loaded). They are a non-persistent buffer, so
state dicts do not change.
"""

from typing import Dict, List, Protocol, Sequence

import torch
from torch import nn

from elmo_tasks.bilm.characters import BOS_TOKEN, EOS_TOKEN, word_to_character_ids


class EncodeWords(Protocol):
    """The token encoder's ``encode_words``: vectors of distinct words ``(n_words, chars)``."""

    def __call__(self, words: torch.Tensor, split_by_length: bool = True) -> torch.Tensor: ...


class WordVectorLookup(Protocol):
    """What the token encoder asks of a cache: vectors of distinct words, encoding those it lacks."""

    def encode(self, words: torch.Tensor, encode_words: EncodeWords) -> torch.Tensor: ...


class WordVectorCache(nn.Module):
    char_ids: torch.Tensor  # buffers: the cached words' character ids, and their vectors once built
    vectors: torch.Tensor

    def __init__(self, words: Sequence[str], max_characters: int, batch_size: int = 1024) -> None:
        super().__init__()
        # The boundary tokens are words of every sentence: cache them too.
        unique = list(dict.fromkeys([BOS_TOKEN, EOS_TOKEN, *words]))
        self.words: List[str] = unique
        self.batch_size = batch_size
        ids = torch.tensor([word_to_character_ids(w, max_characters) for w in unique], dtype=torch.long)
        self._index: Dict[bytes, int] = {row.numpy().tobytes(): i for i, row in enumerate(ids)}
        self.register_buffer("char_ids", ids, persistent=False)
        self.register_buffer("vectors", torch.empty(0), persistent=False)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self.words)

    def invalidate(self) -> None:
        """Forget the vectors (the encoder's weights changed); they are rebuilt on next use."""
        self.vectors = torch.empty(0, device=self.char_ids.device)

    @torch.no_grad()
    def _build(self, encode_words: EncodeWords) -> None:
        pieces = [encode_words(chunk) for chunk in self.char_ids.split(self.batch_size)]
        self.vectors = torch.cat(pieces).detach()

    def encode(self, words: torch.Tensor, encode_words: EncodeWords) -> torch.Tensor:
        """Vectors of distinct real words ``(n_words, chars)``: cached ones looked up, the rest encoded."""
        if self.vectors.numel() == 0:
            self._build(encode_words)
        keys = words.detach().to("cpu", torch.long).numpy()
        slots = [self._index.get(row.tobytes(), -1) for row in keys]
        known = [i for i, slot in enumerate(slots) if slot >= 0]
        unknown = [i for i, slot in enumerate(slots) if slot < 0]
        self.hits += len(known)
        self.misses += len(unknown)
        if not unknown:
            return self.vectors.index_select(0, torch.tensor(slots, device=self.vectors.device))
        out = self.vectors.new_empty(words.shape[0], self.vectors.shape[1])
        if known:
            position = torch.tensor(known, device=out.device)
            out[position] = self.vectors.index_select(0, torch.tensor([slots[i] for i in known], device=out.device))
        position = torch.tensor(unknown, device=out.device)
        out[position] = encode_words(words.index_select(0, position.to(words.device))).to(out.dtype)
        return out
