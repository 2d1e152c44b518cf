"""Lee et al.'s head attention (``head_attention.ContextScoredHeadAttention``): logits from the BiLSTM states,
sums of the word representations; on a hand-worked span, against AllenNLP's extractor, and in the model."""

import math

import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.modules.span_extractors import SelfAttentiveSpanExtractor

from elmo_tasks.tasks.coref.head_attention import ContextScoredHeadAttention
from tests.tasks.coref.test_coref_model import _instances, small_coref_model
from tests.tasks.hand_built_models import tensor_batch


def test_a_hand_worked_span():
    """Logits are the states' first column, 0, ln 3 and 5: the span (0, 1) weighs its words 1/4 and 3/4,
    (2, 2) is its one word, and a masked span is zeros."""
    attention = ContextScoredHeadAttention(scoring_dim=2, summed_dim=3)
    with torch.no_grad():
        attention._global_attention._module.weight.copy_(torch.tensor([[1.0, 0.0]]))
        attention._global_attention._module.bias.zero_()
    states = torch.tensor([[[0.0, 9.0], [math.log(3.0), -9.0], [5.0, 0.0]]])
    words = torch.tensor([[[4.0, 0.0, 8.0], [0.0, 4.0, -4.0], [1.0, 2.0, 3.0]]])
    spans = torch.tensor([[[0, 1], [2, 2], [0, 2]]])
    sums = attention(states, words, spans, span_mask=torch.tensor([[True, True, False]]))
    expected = torch.tensor([[[1.0, 3.0, -1.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]])
    assert torch.allclose(sums, expected, atol=1e-6)
    assert attention.get_output_dim() == 3


def test_scored_from_the_words_it_sums_it_is_allennlps_extractor():
    """The same numbers as ``SelfAttentiveSpanExtractor`` given the same input to score and to sum, and the
    same parameter names; fed two inputs, its output moves with the scored one's logits only."""
    torch.manual_seed(0)
    ours, theirs = ContextScoredHeadAttention(5, 5), SelfAttentiveSpanExtractor(5)
    assert [name for name, _ in ours.named_parameters()] == [name for name, _ in theirs.named_parameters()]
    ours.load_state_dict(theirs.state_dict())
    words = torch.randn(2, 9, 5)
    spans = torch.tensor([[[0, 3], [4, 4], [2, 8]], [[1, 2], [0, 0], [5, 7]]])
    span_mask = torch.tensor([[True, True, True], [True, True, False]])
    expected = theirs(words, spans, span_indices_mask=span_mask)
    assert torch.allclose(ours(words, words, spans, span_mask), expected, atol=1e-6)
    states = torch.randn(2, 9, 5)
    scored_elsewhere = ours(states, words, spans, span_mask)
    assert not torch.allclose(scored_elsewhere, expected, atol=1e-3)
    assert torch.allclose(ours(states, words, spans[:, 1:2], span_mask[:, 1:2]), expected[:, 1:2], atol=1e-6)


@pytest.fixture(scope="module")
def document():
    instances = _instances(elmo=False)[:1]
    vocab = Vocabulary.from_instances(instances)
    return vocab, tensor_batch(instances, vocab)


def test_the_models_switch_scores_the_attention_from_the_bilstm_states(document):
    """The attention's logits read the BiLSTM's 32 dimensions (16 per direction) instead of the words' 16, and
    training reaches its weights; its numbers are checked against g_i built by the extractors in
    test_coref_mention_scores.py (``test_the_training_loss_and_gradients_equal_the_previous_computation``)."""
    vocab, tensors = document
    torch.manual_seed(4)
    plain = small_coref_model(vocab, elmo=False)
    context = small_coref_model(vocab, elmo=False, head_attention_from_context=True)
    assert isinstance(plain.attentive_span_extractor, SelfAttentiveSpanExtractor)
    assert isinstance(context.attentive_span_extractor, ContextScoredHeadAttention)
    assert plain.attentive_span_extractor._global_attention._module.weight.shape == (1, 16)
    weight = context.attentive_span_extractor._global_attention._module.weight
    assert weight.shape == (1, 32) == (1, context.context_layer.get_output_dim())
    context(**tensors)["loss"].backward()
    assert weight.grad is not None and weight.grad.abs().max() > 0
