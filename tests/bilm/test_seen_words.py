import h5py
import numpy as np
import pytest
import torch

from elmo_tasks.bilm import BilmError, batch_to_ids, load_bilm
from elmo_tasks.bilm.file_embedder import OutputMode, embed_file
from elmo_tasks.bilm.seen_words import SeenWordCache
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

BATCHES = [
    [["The", "cat", "sat", "."], ["The", "dog", "ran", "."]],
    [["A", "cat", "and", "a", "dog", "."], ["The", "end", "."]],
]


def _layers(model, batch):
    with torch.no_grad():
        return model(batch_to_ids(batch)).layers


def test_seen_words_give_the_vectors_of_the_character_path_and_are_encoded_once():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    expected = [_layers(model, batch) for batch in BATCHES]
    cache = SeenWordCache(max_bytes=2**20)
    model.use_word_cache(cache)
    found = [_layers(model, batch) for batch in BATCHES]
    model.use_word_cache(None)
    for want_layers, got_layers in zip(expected, found, strict=True):
        for want, got in zip(want_layers, got_layers, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    # batch 1: <S> </S> The cat sat . dog ran, all new; batch 2: A and a end new, <S> </S> cat dog . The seen
    assert (cache.misses, cache.hits, len(cache)) == (8 + 4, 6, 12)


def test_words_beyond_the_cap_are_encoded_every_time_and_still_right():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    expected = [_layers(model, batch) for batch in BATCHES]
    row_bytes = model.options.projection_dim * 4
    cache = SeenWordCache(max_bytes=3 * row_bytes)
    model.use_word_cache(cache)
    found = [_layers(model, batch) for batch in BATCHES]
    model.use_word_cache(None)
    assert len(cache) == 3
    for want_layers, got_layers in zip(expected, found, strict=True):
        for want, got in zip(want_layers, got_layers, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)


def test_the_cache_refuses_training():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    model.use_word_cache(SeenWordCache(max_bytes=2**20))
    with pytest.raises(RuntimeError, match="inference on the CPU with gradients off"):
        model(batch_to_ids(BATCHES[0]))
    with pytest.raises(ValueError, match="0 or more bytes"):
        SeenWordCache(max_bytes=-1)


def test_embed_file_with_the_cache_writes_the_same_file_and_takes_the_cache_off_again(tmp_path):
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    text = tmp_path / "in.txt"
    lines = [" ".join(words) for batch in BATCHES for words in batch] * 3
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, cache_bytes in (("plain.hdf5", 0), ("cached.hdf5", 2**20)):
        embed_file(
            model,
            str(text),
            str(tmp_path / name),
            OutputMode("all"),
            batch_size=2,
            progress=False,
            word_cache_bytes=cache_bytes,
        )
        assert model.word_cache is None
    with h5py.File(tmp_path / "plain.hdf5") as plain, h5py.File(tmp_path / "cached.hdf5") as cached:
        for index in range(len(lines)):
            np.testing.assert_allclose(cached[str(index)][()], plain[str(index)][()], rtol=1e-6, atol=1e-6)


def test_embed_file_takes_the_cache_off_after_a_failure(tmp_path):
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    text = tmp_path / "in.txt"
    text.write_text("a b\n\nc\n", encoding="utf-8")  # an empty line stops the run
    with pytest.raises(BilmError, match="empty"):
        embed_file(
            model, str(text), str(tmp_path / "out.hdf5"), OutputMode("all"), progress=False, word_cache_bytes=2**20
        )
    assert model.word_cache is None


def test_a_batch_gets_the_same_vectors_whichever_batch_met_its_words_first():
    """What keeps ``elmo-embed --workers N`` writing the same file for any N with the cache on."""
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    outputs = []
    for order in (BATCHES, BATCHES[::-1]):
        model.use_word_cache(SeenWordCache(max_bytes=2**20))
        outputs.append({id(batch): _layers(model, batch) for batch in order})
        model.use_word_cache(None)
    for batch in BATCHES:
        for first, second in zip(outputs[0][id(batch)], outputs[1][id(batch)], strict=True):
            assert torch.equal(first, second)
