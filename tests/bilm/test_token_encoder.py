"""The character CNN's length groups: the split is where the fewest character positions are, and the
vectors and gradients are those of one group trimmed to the batch's longest word, to float rounding
(the convolutions may add up in another order for another shape)."""

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
import torch
from torch.nn import functional as F

from elmo_tasks.bilm.characters import PADDING_CHARACTER_ID, word_to_character_ids
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.token_encoder import CharacterTokenEncoder, cheapest_length_split


def test_split_by_hand():
    # widths are longest + 7: one group of 6 words of 30 + 7 = 222 positions; split after the five
    # 3-character words: 5 * 10 + 1 * 37 = 87
    assert cheapest_length_split([3, 3, 3, 3, 3, 30], max_width=7, max_chars=50) == 5
    # capped at max_chars: 5 * 10 + 1 * 20 = 70 against 6 * 20 = 120
    assert cheapest_length_split([3, 3, 3, 3, 3, 30], max_width=7, max_chars=20) == 5


def test_no_split_where_it_saves_too_little_or_cannot():
    assert cheapest_length_split([5, 5, 5, 5], max_width=7, max_chars=50) is None  # one length
    assert cheapest_length_split([9], max_width=7, max_chars=50) is None
    # the best split, after the 4, saves 1 * 1 of 4 * 12 = 2% of the positions
    assert cheapest_length_split([4, 5, 5, 5], max_width=7, max_chars=50) is None


def _encoder() -> CharacterTokenEncoder:
    torch.manual_seed(0)
    options = BilmOptions(dim=16, projection_dim=8, filters=[(1, 4), (2, 4), (3, 8), (7, 6)], n_highway=1)
    return CharacterTokenEncoder(options)


def _one_group(encoder: CharacterTokenEncoder, words: torch.Tensor) -> torch.Tensor:
    """The computation before the groups: every word as wide as the longest plus the widest filter."""
    longest = int((words != PADDING_CHARACTER_ID).sum(dim=1).max())
    embedded = F.embedding(words[:, : longest + encoder.max_width], encoder.char_embedding).transpose(1, 2)
    pooled = encoder._activation(torch.cat([conv(embedded).amax(dim=2) for conv in encoder.convolutions], dim=1))
    return encoder.projection(encoder.highway(pooled))


def _words(texts: List[str]) -> torch.Tensor:
    return torch.tensor([word_to_character_ids(text, 50) for text in texts])


def test_the_groups_give_the_one_group_vectors_and_gradients():
    encoder = _encoder()
    texts = ["a", "of", "the", "cat", "sat", "on", "mat", ".", "internationalization", "extraordinarily", "it"]
    words = _words(texts)
    lengths = sorted(int(n) for n in (words != PADDING_CHARACTER_ID).sum(dim=1))
    assert cheapest_length_split(lengths, encoder.max_width, 50) is not None  # the groups are used here

    grouped = encoder.encode_words(words)
    grouped.pow(2).sum().backward()
    grouped_grads = [p.grad.clone() for p in encoder.parameters()]
    encoder.zero_grad()
    plain = _one_group(encoder, words)
    plain.pow(2).sum().backward()

    assert torch.allclose(grouped, plain, rtol=1e-6, atol=1e-6)
    for grouped_grad, param in zip(grouped_grads, encoder.parameters(), strict=True):
        assert torch.allclose(grouped_grad, param.grad, rtol=1e-5, atol=1e-6)
    # negative control: trimming the long words to the short group's width changes their vectors
    short_width = _words(["the"]).ne(PADDING_CHARACTER_ID).sum() + encoder.max_width
    cut = words.clone()
    cut[:, short_width:] = PADDING_CHARACTER_ID
    assert not torch.allclose(encoder.encode_words(cut)[8], plain[8], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("texts", [["same", "size", "word"], ["x"], ["a", "bb", "ccc"]])
def test_batches_the_split_leaves_alone_are_unchanged(texts):
    encoder = _encoder()
    words = _words(texts)
    assert torch.equal(encoder.encode_words(words), _one_group(encoder, words))  # the very same computation


def test_the_benchmark_runs_and_finds_only_rounding_differences(tmp_path):
    sentences = tmp_path / "sentences.txt"
    text = "The cat sat on the mat .\nInternationalization is a long word , it said .\n"
    sentences.write_text(text, encoding="utf-8")
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "char_cnn_groups.py"
    result = subprocess.run(
        [sys.executable, str(script), "--data", str(sentences), "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "2 sentences, 16 tokens, 1 batches of 64" in result.stdout
    difference = float(result.stdout.strip().rsplit(" ", 1)[1])
    assert difference < 1e-5  # float rounding: the biLM's layers reach about 5
