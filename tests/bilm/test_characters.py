import torch

from elmo_tasks.bilm.characters import (
    BOS_CHARACTER_IDS,
    EOS_CHARACTER_IDS,
    add_sentence_boundaries,
    batch_to_ids,
    word_to_character_ids,
)


def test_word_ids_follow_the_original_scheme():
    ids = word_to_character_ids("ab")
    assert ids[:4] == [259, ord("a") + 1, ord("b") + 1, 260]
    assert ids[4:] == [261] * 46 and len(ids) == 50


def test_utf8_bytes_not_code_points():
    ids = word_to_character_ids("é")  # two UTF-8 bytes
    assert ids[1:3] == [0xC3 + 1, 0xA9 + 1] and ids[3] == 260


def test_long_words_are_truncated_to_48_bytes():
    ids = word_to_character_ids("x" * 100)
    assert ids[1:49] == [ord("x") + 1] * 48 and ids[49] == 260


def test_boundary_tokens():
    assert BOS_CHARACTER_IDS[:3] == [259, 257, 260] and EOS_CHARACTER_IDS[:3] == [259, 258, 260]
    assert word_to_character_ids("<S>") == BOS_CHARACTER_IDS


def test_allennlp_elmo_characters_indexer_gives_the_same_ids():
    from allennlp.data import Token, Vocabulary
    from allennlp.data.token_indexers import ELMoTokenCharactersIndexer

    words = ["The", "naïve", "cat", "x" * 70, "!"]
    indexed = ELMoTokenCharactersIndexer().tokens_to_indices([Token(w) for w in words], Vocabulary())
    assert indexed["elmo_tokens"] == [word_to_character_ids(w) for w in words]


def test_add_sentence_boundaries_places_eos_after_each_sentence():
    ids = batch_to_ids([["a", "b", "c"], ["d"]])
    wrapped, mask = add_sentence_boundaries(ids)
    assert wrapped.shape == (2, 5, 50)
    assert mask.tolist() == [[True] * 5, [True, True, True, False, False]]
    assert wrapped[1, 2].tolist() == EOS_CHARACTER_IDS and wrapped[0, 4].tolist() == EOS_CHARACTER_IDS
    assert torch.all(wrapped[1, 3:] == 0)


def test_batch_to_ids_is_the_word_ids_of_each_token_padded_with_zeros():
    import random

    draw = random.Random(0)
    alphabet = "abcXYZ.,'-éß中🙂"
    vocabulary = ["".join(draw.choice(alphabet) for _ in range(draw.randint(1, 60))) for _ in range(40)] + [
        "<S>",
        "</S>",
    ]
    for max_characters in (50, 12):
        sentences = [[draw.choice(vocabulary) for _ in range(draw.randint(1, 9))] for _ in range(30)]
        ids = batch_to_ids(sentences, max_characters)
        assert ids.dtype == torch.long and ids.shape == (30, max(map(len, sentences)), max_characters)
        for row, sentence in enumerate(sentences):
            expected = [word_to_character_ids(word, max_characters) for word in sentence]
            assert ids[row, : len(sentence)].tolist() == expected
            assert not ids[row, len(sentence) :].any()


def test_changing_one_batch_of_ids_leaves_the_next_batch_alone():
    """The ids of frequent words are kept between calls; a caller writing into its batch must not alter them."""
    first = batch_to_ids([["the", "cat"]])
    first[0, 0] = 7
    assert batch_to_ids([["the", "cat"]])[0].tolist() == [word_to_character_ids("the"), word_to_character_ids("cat")]


def test_long_tokens_are_converted_without_being_kept():
    from elmo_tasks.bilm.characters import CACHED_WORD_LENGTH, cached_character_ids

    long_word = "é" * (CACHED_WORD_LENGTH + 1)
    kept = cached_character_ids.cache_info().currsize
    ids = batch_to_ids([[long_word, "short"]])
    assert ids[0, 0].tolist() == word_to_character_ids(long_word)
    assert cached_character_ids.cache_info().currsize <= kept + 1  # "short" at most
