"""Context-free vectors of the words a frozen biLM has already encoded, for reading a long file.

``elmo-embed`` encodes each batch's distinct words with the character CNN and highway layers, so a
frequent word ("the", ",") is encoded again in every batch: at the small size those layers are
about 40% of the forward pass, and a batch's distinct words, summed over batches, are about 2.5
times the file's. This cache keeps each word's vector the first time it is encoded and looks it up
afterwards, up to a memory cap (words first seen after the cap is reached are encoded every time;
in running text the frequent words come early). Words are keyed by their character ids, the
encoder's real input, as in :class:`~elmo_tasks.bilm.word_cache.WordVectorCache`, so a looked-up
vector is the one the character path gave that word, to float rounding (a matrix product's
rounding can depend on how many words it multiplies at once).

Only for inference with fixed weights: the vectors carry no gradient and are never refreshed.
"""

from contextlib import contextmanager
from typing import TYPE_CHECKING, Dict, Iterator, List

import torch
from torch import nn

from elmo_tasks.bilm.characters import PADDING_CHARACTER_ID
from elmo_tasks.bilm.word_cache import EncodeWords

if TYPE_CHECKING:
    from elmo_tasks.bilm.model import BiLM


#: Words per call of the character CNN for the words a batch meets for the first time.
BLOCK_WORDS = 64


class SeenWordCache(nn.Module):
    """Vectors of encoded words, kept up to ``max_bytes`` (on the host, where the encoder runs)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        if max_bytes < 0:
            raise ValueError(f"the word cache's size must be 0 or more bytes, got {max_bytes}")
        self.max_bytes = max_bytes
        self._slot_of: Dict[bytes, int] = {}
        self._vectors = torch.empty(0)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def encode(self, words: torch.Tensor, encode_words: EncodeWords) -> torch.Tensor:
        """Vectors of distinct real words ``(n_words, chars)``: seen ones looked up, the rest encoded and kept."""
        if torch.is_grad_enabled() or words.device.type != "cpu":
            raise RuntimeError("SeenWordCache is for inference on the CPU with gradients off")
        keys = [row.tobytes() for row in words.to(torch.int16).numpy()]
        slots = [self._slot_of.get(key, -1) for key in keys]
        unknown = [index for index, slot in enumerate(slots) if slot < 0]
        self.hits += len(keys) - len(unknown)
        self.misses += len(unknown)
        if not unknown:
            return self._vectors.index_select(0, torch.tensor(slots))
        encoded = self._encode_in_blocks(words.index_select(0, torch.tensor(unknown)), encode_words)
        out = encoded.new_empty(len(keys), encoded.shape[1])
        known = [index for index, slot in enumerate(slots) if slot >= 0]
        if known:
            out[torch.tensor(known)] = self._vectors.index_select(0, torch.tensor([slots[i] for i in known]))
        out[torch.tensor(unknown)] = encoded
        self._keep([keys[index] for index in unknown], encoded)
        return out

    def _encode_in_blocks(self, words: torch.Tensor, encode_words: EncodeWords) -> torch.Tensor:
        """Encode ``words`` in calls of exactly ``BLOCK_WORDS`` words (the last filled up with copies of
        a word), shortest first so that a call's width fits its words: the character CNN's rounding
        depends on how many words one call convolves, so a word's vector is then the same whichever
        batch, and whichever worker process, met it first."""
        lengths = (words != PADDING_CHARACTER_ID).sum(dim=1)
        order = torch.argsort(lengths, stable=True)
        pieces = []
        for start in range(0, words.shape[0], BLOCK_WORDS):
            block = words.index_select(0, order[start : start + BLOCK_WORDS])
            filled = block.shape[0]
            if filled < BLOCK_WORDS:
                block = torch.cat([block, block[:1].expand(BLOCK_WORDS - filled, -1)])
            pieces.append(encode_words(block, split_by_length=False)[:filled])
        return torch.cat(pieces).index_select(0, torch.argsort(order))

    def _keep(self, keys: List[bytes], vectors: torch.Tensor) -> None:
        row_bytes = vectors.shape[1] * vectors.element_size()
        room = self.max_bytes // row_bytes - len(self._slot_of) if row_bytes else 0
        if room <= 0:
            return
        keys, vectors = keys[:room], vectors[:room]
        used = len(self._slot_of)
        if used + len(keys) > self._vectors.shape[0]:  # grow by doubling: one copy per doubling
            capacity = min(max(2 * self._vectors.shape[0], used + len(keys), 1024), self.max_bytes // row_bytes)
            grown = vectors.new_empty(capacity, vectors.shape[1])
            if used:
                grown[:used] = self._vectors[:used]
            self._vectors = grown
        self._vectors[used : used + len(keys)] = vectors
        for offset, key in enumerate(keys):
            self._slot_of[key] = used + offset


@contextmanager
def seen_words_kept(model: "BiLM", max_bytes: int) -> Iterator[None]:
    """A :class:`SeenWordCache` on a biLM on the CPU for one command's input (forked workers inherit it
    empty); nothing where ``max_bytes`` is 0, the model is on a GPU, or it has a word cache already."""
    on_cpu = next(model.parameters()).device.type == "cpu"
    if max_bytes == 0 or not on_cpu or model.word_cache is not None:
        yield
        return
    model.use_word_cache(SeenWordCache(max_bytes))
    try:
        yield
    finally:
        model.use_word_cache(None)
