"""Shapes, stateless determinism and the exactness of the encoder shortcuts."""

import pytest
import torch

from elmo_tasks.bilm import BiLM, BilmOptions, batch_to_ids, load_bilm
from elmo_tasks.bilm.characters import add_sentence_boundaries
from tests.conftest import OPTIONS_FILE, WEIGHT_FILE

SENTENCES = [
    ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "."],
    ["Hello", "!"],
    ["ELMo", "vectors", "depend", "on", "context", ",", "not", "on", "the", "batch", "."],
    ["the", "the", "the"],
]


def _embed(model, sentences):
    with torch.no_grad():
        return model(batch_to_ids(sentences))


def test_output_shapes_and_zero_padding():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    out = _embed(model, SENTENCES)
    assert len(out.layers) == 3
    assert all(layer.shape == (4, 11, 32) for layer in out.layers)
    assert out.mask.sum(dim=1).tolist() == [10, 2, 11, 3]
    assert torch.all(out.layers[2][1, 2:] == 0)
    # layer 0 is the token encoding duplicated
    assert torch.equal(out.layers[0][..., :16], out.layers[0][..., 16:])


def test_stateless_vectors_do_not_depend_on_batch_companions_padding_or_position():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    alone = [_embed(model, [s]) for s in SENTENCES]
    together = _embed(model, SENTENCES)
    shuffled = _embed(model, [SENTENCES[3], SENTENCES[0], ["padding", "partner"] * 10, SENTENCES[2], SENTENCES[1]])
    order = {0: 1, 1: 4, 2: 3, 3: 0}
    for i, sentence in enumerate(SENTENCES):
        n = len(sentence)
        for j in range(3):
            single = alone[i].layers[j][0, :n]
            assert torch.allclose(together.layers[j][i, :n], single, atol=1e-6)
            assert torch.allclose(shuffled.layers[j][order[i], :n], single, atol=1e-6)
    # and repeated calls give the same answer (no hidden state)
    again = _embed(model, SENTENCES)
    assert all(torch.equal(a, b) for a, b in zip(together.layers, again.layers, strict=True))


def _naive_token_encoding(encoder, ids):
    """The char CNN over every position and all 50 character slots, without shortcuts."""
    emb = torch.nn.functional.embedding(ids.view(-1, ids.shape[-1]), encoder.char_embedding).transpose(1, 2)
    pooled = torch.cat([conv(emb).amax(dim=2) for conv in encoder.convolutions], dim=1)
    feats = encoder.highway(torch.relu(pooled))
    return encoder.projection(feats).view(ids.shape[0], ids.shape[1], -1)


def test_char_cnn_shortcuts_are_exact():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    long_words = SENTENCES + [["x" * 60, "y" * 47, "z" * 46]]
    ids, mask = add_sentence_boundaries(batch_to_ids(long_words))
    with torch.no_grad():
        fast = model.token_encoder(ids, mask)
        naive = _naive_token_encoding(model.token_encoder, ids) * mask.unsqueeze(-1)
    assert torch.allclose(fast, naive, atol=1e-6)


def test_residual_and_no_projection_options_run_and_train():
    options = BilmOptions(
        dim=8,
        projection_dim=6,
        n_layers=2,
        filters=[(1, 2), (2, 4)],
        n_highway=1,
        char_embedding_dim=3,
        use_skip_connections=True,
    )
    model = BiLM(options)
    assert model.token_encoder.projection is None  # 6 filters == projection_dim: no projection, like bilm-tf
    out = model(batch_to_ids(SENTENCES))
    loss = sum(layer.pow(2).sum() for layer in out.layers)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_runs_under_no_grad_without_building_a_graph():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    with torch.no_grad():
        out = model(batch_to_ids(SENTENCES))
    assert not out.layers[2].requires_grad


def test_bad_input_gives_clear_errors():
    from elmo_tasks.bilm import BilmError

    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE)
    with pytest.raises(BilmError, match="sentence 1 of the batch is empty"):
        batch_to_ids([["fine"], []])
    with pytest.raises(BilmError, match="tokenized sentences"):
        batch_to_ids(["not", "tokenized"][0])
    with pytest.raises(BilmError, match=r"shape \(batch, tokens, 50\), got \(2, 50\)"):
        model(torch.ones(2, 50, dtype=torch.long))
    with pytest.raises(BilmError, match="must be integers"):
        model(torch.ones(1, 3, 50))
    with pytest.raises(BilmError, match=r"must lie in \[0, 262\)"):
        model(torch.full((1, 2, 50), 300, dtype=torch.long))


def test_carried_states_and_resetting_some_rows_through_the_public_methods():
    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE, stateful=True).eval()
    assert model.carried_states() is None
    model.reset_states(torch.tensor([True]))  # nothing carried yet: nothing to do
    _embed(model, SENTENCES[:3])
    states = model.carried_states()
    assert states is not None and len(states) == 2 and states[0][0].shape[1] == 3
    model.reset_states(torch.tensor([False, True, False]))
    for (h, c), (h_before, c_before) in zip(model.carried_states(), states, strict=True):
        assert torch.all(h[:, 1] == 0) and torch.all(c[:, 1] == 0)
        assert torch.equal(h[:, 0], h_before[:, 0]) and torch.equal(c[:, 2], c_before[:, 2])
    with pytest.raises(ValueError, match=r"the mask must have shape \(3,\)"):
        model.reset_states(torch.tensor([True, False]))
    model.reset_states()
    assert model.carried_states() is None


def test_a_word_cache_installed_with_use_word_cache_gives_the_same_vectors():
    from elmo_tasks.bilm.word_cache import WordVectorCache

    model = load_bilm(OPTIONS_FILE, WEIGHT_FILE).eval()
    expected = _embed(model, SENTENCES)
    cache = WordVectorCache(["The", "the", "fox", "<S>", "</S>"], model.options.max_characters_per_token)
    model.use_word_cache(cache)
    assert model.word_cache is cache
    found = _embed(model, SENTENCES)
    assert cache.hits > 0
    for want, got in zip(expected.layers, found.layers, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    model.use_word_cache(None)
    assert model.word_cache is None
