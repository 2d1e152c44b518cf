"""encode_each_distinct_word_once: the same outputs and gradients as the encoder on every position."""

import copy

import pytest
import torch
from allennlp.modules.seq2vec_encoders import CnnEncoder
from allennlp.modules.token_embedders import Embedding, TokenCharactersEncoder

from elmo_tasks.modules.distinct_words import encode_each_distinct_word_once


def _encoder(dropout: float = 0.0) -> TokenCharactersEncoder:
    torch.manual_seed(0)
    embedding = Embedding(embedding_dim=5, num_embeddings=12)
    cnn = CnnEncoder(embedding_dim=5, num_filters=7, ngram_filter_sizes=(2, 3), conv_layer_activation=torch.nn.ReLU())
    return TokenCharactersEncoder(embedding, cnn, dropout=dropout)  # float32: AllenNLP's CnnEncoder masks for it


def _characters() -> torch.Tensor:
    # (2 sentences, 4 tokens, 5 characters): "ab" three times, a padding token, a word only in the second sentence
    ab, cde, padding = [1, 2, 0, 0, 0], [3, 4, 5, 0, 0], [0, 0, 0, 0, 0]
    return torch.tensor([[ab, cde, ab, padding], [ab, [6, 7, 8, 9, 10], cde, padding]])


def _output_and_gradients(encoder: TokenCharactersEncoder, by_keyword: bool):
    encoder.zero_grad()
    characters = _characters()
    output = encoder(token_characters=characters) if by_keyword else encoder(characters)
    weights = torch.linspace(-1, 1, output.numel(), dtype=output.dtype).view_as(output)
    (output * weights).sum().backward()  # every position's output gets its own gradient
    return output.detach(), [parameter.grad.clone() for parameter in encoder.parameters()]


@pytest.mark.parametrize("by_keyword", [False, True])
def test_outputs_and_gradients_equal_the_encoder_on_every_position(monkeypatch, by_keyword):
    plain = _encoder()
    once = copy.deepcopy(plain)
    assert encode_each_distinct_word_once(once)
    rows_seen = []
    original_forward = CnnEncoder.forward
    monkeypatch.setattr(
        CnnEncoder, "forward", lambda self, *inputs: rows_seen.append(len(inputs[0])) or original_forward(self, *inputs)
    )
    expected, expected_gradients = _output_and_gradients(plain, by_keyword)
    output, gradients = _output_and_gradients(once, by_keyword)
    assert rows_seen == [8, 4]  # every position, then the 4 distinct words (padding is one of them)
    assert output.shape == expected.shape == (2, 4, 14)
    assert torch.allclose(output, expected, rtol=0, atol=1e-6)
    for gradient, expected_gradient in zip(gradients, expected_gradients, strict=True):
        assert torch.allclose(gradient, expected_gradient, rtol=0, atol=1e-6)


def test_an_encoder_with_dropout_is_left_as_it_is():
    encoder = _encoder(dropout=0.3)
    assert not encode_each_distinct_word_once(encoder)
    assert not encoder._forward_pre_hooks and not encoder._forward_hooks
