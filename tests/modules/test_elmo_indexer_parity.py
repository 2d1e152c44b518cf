"""The behaviours AllenNLP's elmo_indexer_test.py checks, for the character ids our ELMo reads:
boundary and unicode ids (also in tests/bilm/test_characters.py), padding, empty texts, and that
text indexed by AllenNLP's ``elmo_characters`` indexer gives the same vectors as our
``batch_to_ids``."""

import torch
from allennlp.data import Batch, Instance, Token, Vocabulary
from allennlp.data.fields import ListField, TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer
from allennlp.modules.elmo import batch_to_ids as allennlp_batch_to_ids

from elmo_tasks.bilm import batch_to_ids, word_to_character_ids
from elmo_tasks.modules import ElmoTokenEmbedder
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

SENTENCES = [["Hello", "naïve", "wörld", "!"], ["a"], ["</S>", "<S>", "x" * 60]]


def _indexed(texts):
    indexer = {"elmo": ELMoTokenCharactersIndexer()}
    instances = [Instance({"text": TextField([Token(w) for w in text], indexer)}) for text in texts]
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()["text"]["elmo"]["elmo_tokens"]


def test_hand_written_ids_of_a_short_word():
    # begin-of-word 258, the bytes, end-of-word 259, padding 260; all shifted by one
    assert word_to_character_ids("Hi")[:5] == [259, ord("H") + 1, ord("i") + 1, 260, 261]


def test_padded_batches_equal_allennlps():
    ours = batch_to_ids(SENTENCES)
    assert torch.equal(ours, allennlp_batch_to_ids(SENTENCES))
    assert torch.equal(ours, _indexed(SENTENCES))
    assert ours.shape == (3, 4, 50) and (ours[1, 1:] == 0).all()  # padding tokens are all zero


def test_padding_to_a_longer_length_keeps_zero_rows():
    indexer = ELMoTokenCharactersIndexer()
    indexed = indexer.tokens_to_indices([Token("a"), Token("b")], Vocabulary())
    padded = indexer.as_padded_tensor_dict(indexed, {"elmo_tokens": 4})["elmo_tokens"]
    assert padded.shape == (4, 50) and (padded[2:] == 0).all()
    assert padded[:2].tolist() == [word_to_character_ids("a"), word_to_character_ids("b")]


def test_indexer_output_embeds_like_our_ids_including_an_empty_text_in_a_list():
    embedder = ElmoTokenEmbedder(OPTIONS_FILE, WEIGHT_FILE, dropout=0.0, cache_size_mb=0)
    assert torch.allclose(embedder(_indexed(SENTENCES)), embedder(batch_to_ids(SENTENCES)), atol=1e-6)
    indexer = {"elmo": ELMoTokenCharactersIndexer()}
    fields = [TextField([Token("a"), Token("b")], indexer), TextField([], indexer)]
    batch = Batch([Instance({"texts": ListField(fields)})])
    batch.index_instances(Vocabulary())
    ids = batch.as_tensor_dict()["texts"]["elmo"]["elmo_tokens"]
    assert ids.shape == (1, 2, 2, 50)
    out = embedder(ids)
    assert out.shape == (1, 2, 2, 32) and out[0, 1].abs().sum() == 0
    assert torch.allclose(out[0, 0], embedder(batch_to_ids([["a", "b"]]))[0], atol=1e-6)
