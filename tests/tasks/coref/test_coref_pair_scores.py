"""The antecedent scores by parts (first layer split per span and per pair, the product part by
``PairProductLayer`` in training) equal Lee et al.'s FFNN on the concatenated pair
[g_i, g_j, g_i * g_j, phi], in value and gradient, in every chunking, with and without gradients,
and with the same dropout draws."""

import pytest
import torch
from allennlp.nn import Activation

from elmo_tasks.tasks.coref import antecedents as antecedents_module
from elmo_tasks.tasks.coref.antecedents import KeptSpans, antecedent_candidates, score_pairs
from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward

SPAN_DIM, FEATURE_DIM, HIDDEN = 7, 5, 6


def _concatenated_pair_scores(feedforward, scorer, top_embeddings, antecedents, features):
    """The formula as the paper writes it: one FFNN over the concatenated pair."""
    batch, kept, _ = top_embeddings.shape
    indices = antecedents.indices[0]
    antecedent_embeddings = top_embeddings[:, indices]  # (batch, kept, K, dim)
    span_embeddings = top_embeddings.unsqueeze(2).expand_as(antecedent_embeddings)
    pairs = torch.cat([span_embeddings, antecedent_embeddings, span_embeddings * antecedent_embeddings, features], -1)
    return scorer(feedforward(pairs)).squeeze(-1)


def _inputs(kept: int, max_antecedents: int, dropout: float = 0.0):
    torch.manual_seed(3)
    feedforward = LayeredFeedForward(
        3 * SPAN_DIM + FEATURE_DIM, 2, HIDDEN, Activation.by_name("relu")(), dropout=dropout
    ).double()
    scorer = torch.nn.Linear(HIDDEN, 1).double()
    top_embeddings = torch.randn(2, kept, SPAN_DIM, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(2, kept, dtype=torch.bool)
    spans = KeptSpans(torch.arange(kept).repeat(2, 1), mask, torch.tensor([kept, kept]))  # type: ignore[arg-type]
    antecedents = antecedent_candidates(spans, max_antecedents)
    features = torch.randn(2, kept, antecedents.indices.size(2), FEATURE_DIM, dtype=torch.float64, requires_grad=True)
    return feedforward, scorer, top_embeddings, antecedents, features


@pytest.mark.parametrize("chunk_size, pairs_per_chunk", [(1, None), (3, None), (64, None), (64, 9), (64, 1)])
def test_scores_by_parts_equal_the_ffnn_on_the_concatenated_pair(chunk_size, pairs_per_chunk):
    feedforward, scorer, top_embeddings, antecedents, features = _inputs(kept=9, max_antecedents=4)
    expected = _concatenated_pair_scores(feedforward, scorer, top_embeddings, antecedents, features)
    found = score_pairs(feedforward, scorer, top_embeddings, antecedents, features, chunk_size, pairs_per_chunk)
    assert found.shape == expected.shape == (2, 9, 4)
    torch.testing.assert_close(found, expected, rtol=1e-12, atol=1e-12)

    weights = torch.randn_like(expected)  # a loss that reaches every score differently
    parameters = [top_embeddings, features, *feedforward.parameters(), *scorer.parameters()]
    expected_grads = torch.autograd.grad((expected * weights).sum(), parameters)
    found_grads = torch.autograd.grad((found * weights).sum(), parameters)
    for name, want, got in zip(
        ["top_embeddings", "features"] + ["parameter"] * 6, expected_grads, found_grads, strict=True
    ):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12, msg=name)

    with torch.no_grad():  # evaluation: the plain products, no autograd function
        without_gradients = score_pairs(
            feedforward, scorer, top_embeddings, antecedents, features, chunk_size, pairs_per_chunk
        )
    torch.testing.assert_close(without_gradients, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "max_antecedents, pairs_per_chunk, expected_chunks",
    [(4, None, [5, 4]), (4, 8, [2, 2, 2, 2, 1]), (4, 20, [5, 4]), (4, 3, [1] * 9), (2, 8, [4, 4, 1])],
)
def test_a_chunk_holds_at_most_its_spans_and_its_pairs(monkeypatch, max_antecedents, pairs_per_chunk, expected_chunks):
    """Chunks of at most ``chunk_size`` spans (5 here) and, where given, of at most ``pairs_per_chunk``
    pairs (at least one span each): so a larger K makes the chunks shorter, not larger."""
    feedforward, scorer, top_embeddings, antecedents, features = _inputs(kept=9, max_antecedents=max_antecedents)
    chunk_lengths = []
    score_chunk = antecedents_module.score_pair_chunk

    def score_chunk_seen(feedforward, scorer, parts, top_embeddings, chunk, *rest):
        chunk_lengths.append(chunk.stop - chunk.start)
        return score_chunk(feedforward, scorer, parts, top_embeddings, chunk, *rest)

    monkeypatch.setattr(antecedents_module, "score_pair_chunk", score_chunk_seen)
    score_pairs(feedforward, scorer, top_embeddings, antecedents, features, 5, pairs_per_chunk)
    assert chunk_lengths == expected_chunks


def test_training_draws_the_dropout_of_the_ffnn_on_the_concatenated_pair():
    """One chunk draws its dropout masks as the FFNN does on the whole pair tensor: same scores and
    gradients from the same seed (so training losses stay those of the formula's computation)."""
    feedforward, scorer, top_embeddings, antecedents, features = _inputs(kept=9, max_antecedents=4, dropout=0.3)
    feedforward.train()
    torch.manual_seed(11)
    expected = _concatenated_pair_scores(feedforward, scorer, top_embeddings, antecedents, features)
    torch.manual_seed(11)
    found = score_pairs(feedforward, scorer, top_embeddings, antecedents, features, 64)
    torch.testing.assert_close(found, expected, rtol=1e-12, atol=1e-12)
    parameters = [top_embeddings, *feedforward.parameters()]
    for want, got in zip(
        torch.autograd.grad(expected.sum(), parameters), torch.autograd.grad(found.sum(), parameters), strict=True
    ):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


def test_a_first_layer_too_narrow_for_the_pairs_is_an_error_that_says_so():
    feedforward, scorer, top_embeddings, antecedents, features = _inputs(kept=4, max_antecedents=2)
    narrow = LayeredFeedForward(3 * SPAN_DIM, 2, HIDDEN, Activation.by_name("relu")()).double()
    with pytest.raises(ValueError, match="pairs of spans of 7 dimensions need 3 x 7 plus the pair features"):
        score_pairs(narrow, scorer, top_embeddings, antecedents, features, 64)
