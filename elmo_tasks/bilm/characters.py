"""Character ids in the original bilm-tf scheme.

Each token becomes ``max_characters_per_token`` (50) ids: begin-of-word, the UTF-8 bytes of
the token (at most 48, longer words are truncated like the original), end-of-word, then
padding. Every id is shifted by +1 so that 0 can mean "no token here" (batch padding).
"""

from functools import lru_cache
from typing import List, Sequence, Tuple

import numpy as np
import torch

from elmo_tasks.bilm.errors import BilmError

MAX_CHARACTERS_PER_TOKEN = 50
# Unshifted ids of the original scheme; the +1 shift is applied when ids are produced.
_BOS_CHAR = 256
_EOS_CHAR = 257
_BOW_CHAR = 258
_EOW_CHAR = 259
_PAD_CHAR = 260

BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"
#: The (shifted) id of the in-word padding character, i.e. what fills a token after its end.
PADDING_CHARACTER_ID = _PAD_CHAR + 1
#: Number of rows of the character embedding table (ids 0..261).
NUM_CHARACTER_IDS = 262


def _special_token_ids(char: int, length: int) -> List[int]:
    ids = [_PAD_CHAR] * length
    ids[0], ids[1], ids[2] = _BOW_CHAR, char, _EOW_CHAR
    return [i + 1 for i in ids]


BOS_CHARACTER_IDS: List[int] = _special_token_ids(_BOS_CHAR, MAX_CHARACTERS_PER_TOKEN)
EOS_CHARACTER_IDS: List[int] = _special_token_ids(_EOS_CHAR, MAX_CHARACTERS_PER_TOKEN)


def word_to_character_ids(word: str, max_characters: int = MAX_CHARACTERS_PER_TOKEN) -> List[int]:
    """The shifted character ids of one token (``<S>``/``</S>`` get their special ids)."""
    if word == BOS_TOKEN:
        return _special_token_ids(_BOS_CHAR, max_characters)
    if word == EOS_TOKEN:
        return _special_token_ids(_EOS_CHAR, max_characters)
    body = list(word.encode("utf-8", "ignore")[: max_characters - 2])
    ids = [_BOW_CHAR] + body + [_EOW_CHAR] + [_PAD_CHAR] * (max_characters - 2 - len(body))
    return [i + 1 for i in ids]


def batch_to_ids(sentences: Sequence[Sequence[str]], max_characters: int = MAX_CHARACTERS_PER_TOKEN) -> torch.Tensor:
    """Character ids ``(batch, max_tokens, max_characters)`` of tokenized sentences, 0-padded.

    No boundary tokens are added here: the biLM adds ``<S>``/``</S>`` itself. An empty
    sentence is an error (its row would be indistinguishable from batch padding).
    """
    if not sentences:
        raise BilmError("batch_to_ids needs at least one sentence")
    if isinstance(sentences, str) or any(isinstance(s, str) for s in sentences):
        raise BilmError("batch_to_ids takes tokenized sentences (lists of strings), not strings")
    empty = [i for i, s in enumerate(sentences) if len(s) == 0]
    if empty:
        raise BilmError(f"sentence {empty[0]} of the batch is empty; ELMo needs at least one token per sentence")
    longest = max(len(s) for s in sentences)
    ids = np.zeros((len(sentences), longest, max_characters), dtype=np.int64)
    for row, sentence in enumerate(sentences):
        for column, word in enumerate(sentence):
            if len(word) <= CACHED_WORD_LENGTH:
                ids[row, column] = cached_character_ids(word, max_characters)
            else:  # a long token (a URL, an encoded blob) would keep its whole text in the cache
                ids[row, column] = word_to_character_ids(word, max_characters)
    return torch.from_numpy(ids)


#: Words up to this many characters have their ids kept between batches (others are rare and long).
CACHED_WORD_LENGTH = 64


@lru_cache(maxsize=1 << 15)
def cached_character_ids(word: str, max_characters: int) -> np.ndarray:
    """:func:`word_to_character_ids` as a read-only array, kept for frequent words (a few MB at most):
    built word by word in Python, a batch of 64 sentences took about as long as an H200 takes to
    embed it at the original size (benchmarks/char_ids_speed.py)."""
    ids = np.array(word_to_character_ids(word, max_characters), dtype=np.int16)
    ids.flags.writeable = False
    return ids


def add_sentence_boundaries(char_ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Wrap each sentence in ``<S>``/``</S>``.

    ``char_ids`` is ``(batch, tokens, chars)`` with all-zero rows as padding. Returns the new
    ids ``(batch, tokens + 2, chars)`` and their mask. Sentences are assumed left-aligned
    (padding only at the end), as every AllenNLP indexer produces them.
    """
    batch, tokens, chars = char_ids.shape
    mask = (char_ids > 0).any(dim=-1)
    lengths = mask.sum(dim=1)
    out = char_ids.new_zeros(batch, tokens + 2, chars)
    out[:, 1:-1] = char_ids
    bos = torch.tensor(_special_token_ids(_BOS_CHAR, chars), dtype=char_ids.dtype, device=char_ids.device)
    eos = torch.tensor(_special_token_ids(_EOS_CHAR, chars), dtype=char_ids.dtype, device=char_ids.device)
    out[:, 0] = bos
    out[torch.arange(batch, device=char_ids.device), lengths + 1] = eos
    new_mask = torch.arange(tokens + 2, device=char_ids.device).unsqueeze(0) < (lengths + 2).unsqueeze(1)
    return out, new_mask
