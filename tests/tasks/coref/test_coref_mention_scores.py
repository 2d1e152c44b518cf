"""The mention scores by parts (``mention_scores.py``) and g_i built for the kept spans only equal the
previous computation, AllenNLP's extractors on every candidate span and the mention FFNN on their
concatenation, in value and gradient, up to float rounding."""

from typing import Dict, List, Tuple

import pytest
import torch
from allennlp.data import Batch, Vocabulary
from allennlp.modules.span_extractors import EndpointSpanExtractor, SelfAttentiveSpanExtractor
from allennlp.nn import Activation, util

from elmo_tasks.allennlp_internals import head_attention
from elmo_tasks.tasks.coref import antecedents as ranking
from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward
from elmo_tasks.tasks.coref.head_attention import ContextScoredHeadAttention
from elmo_tasks.tasks.coref.mention_scores import (
    first_layer_of_spans,
    head_attention_sums,
    mention_layer_parts,
    mention_scores_from_first_layer,
)
from elmo_tasks.tasks.coref.model import CorefElmo
from elmo_tasks.tasks.coref.span_representations import document_representations
from tests.tasks.coref.test_coref_model import ZERO_GRADIENT, _instances, small_coref_model
from tests.tasks.coref.test_coref_pair_scores import _concatenated_pair_scores

TOKENS, CONTEXT_DIM, EMBEDDING_DIM, FEATURE_DIM, HIDDEN, MAX_WIDTH = 13, 6, 7, 3, 5, 4


def _spans(batch: int, num_spans: int, seed: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Random inclusive spans up to MAX_WIDTH tokens, some reaching the last token, and padding
    spans (-1, -1) at the end of the second document, clamped to 0 as the model does."""
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, TOKENS, (batch, num_spans), generator=generator)
    ends = (starts + torch.randint(0, MAX_WIDTH, (batch, num_spans), generator=generator)).clamp(max=TOKENS - 1)
    spans = torch.stack([starts, ends], dim=-1)
    spans[1, -3:] = -1
    span_mask = spans[:, :, 0] >= 0
    return spans.clamp(min=0), span_mask


def _relative_error(found: torch.Tensor, expected: torch.Tensor) -> float:
    return float((found - expected).detach().norm() / expected.detach().norm().clamp(min=1e-30))


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-12), (torch.float32, 1e-6)])
def test_head_attention_sums_equal_the_self_attentive_extractor(dtype, tolerance):
    """On the words themselves they are the extractor's output; on projected words, its output projected."""
    torch.manual_seed(0)
    extractor = SelfAttentiveSpanExtractor(EMBEDDING_DIM).to(dtype)
    words = torch.randn(2, TOKENS, EMBEDDING_DIM, dtype=dtype, requires_grad=True)
    projection = torch.randn(HIDDEN, EMBEDDING_DIM, dtype=dtype, requires_grad=True)
    spans, span_mask = _spans(2, 20, seed=1)
    expected = extractor(words, spans, span_indices_mask=span_mask)
    logits = head_attention(extractor)(words)
    found = head_attention_sums(words, logits, spans) * span_mask.unsqueeze(-1)
    assert _relative_error(found, expected) < tolerance
    projected = head_attention_sums(words.matmul(projection.t()), logits, spans) * span_mask.unsqueeze(-1)
    expected_projected = expected.matmul(projection.t())
    assert _relative_error(projected, expected_projected) < tolerance

    weights = torch.randn_like(expected_projected)  # a loss that reaches every output differently
    inputs = [words, projection, extractor._global_attention._module.weight]
    expected_grads = torch.autograd.grad((expected_projected * weights).sum(), inputs)
    found_grads = torch.autograd.grad((projected * weights).sum(), inputs)
    for name, want, got in zip(("words", "projection", "attention weight"), expected_grads, found_grads, strict=True):
        assert _relative_error(got, want) < tolerance, name


def _mention_modules(dtype: torch.dtype):
    torch.manual_seed(2)
    endpoint = EndpointSpanExtractor(
        CONTEXT_DIM, combination="x,y", num_width_embeddings=MAX_WIDTH, span_width_embedding_dim=FEATURE_DIM
    )
    attentive = SelfAttentiveSpanExtractor(EMBEDDING_DIM)
    span_dim = 2 * CONTEXT_DIM + FEATURE_DIM + EMBEDDING_DIM
    feedforward = LayeredFeedForward(span_dim, 2, HIDDEN, Activation.by_name("relu")())
    scorer = torch.nn.Linear(HIDDEN, 1)
    return [module.to(dtype) for module in (endpoint, attentive, feedforward, scorer)]


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_mention_scores_by_parts_equal_the_ffnn_on_the_extractors_span_representations(dtype, tolerance):
    endpoint, attentive, feedforward, scorer = _mention_modules(dtype)
    contextual = torch.randn(2, TOKENS, CONTEXT_DIM, dtype=dtype, requires_grad=True)
    embedded = torch.randn(2, TOKENS, EMBEDDING_DIM, dtype=dtype, requires_grad=True)
    document_mask = torch.ones(2, TOKENS, dtype=torch.bool)
    spans, span_mask = _spans(2, 30, seed=4)
    span_embeddings = torch.cat(
        [
            endpoint(contextual, spans, document_mask, span_mask),
            attentive(embedded, spans, document_mask, span_mask),
        ],
        dim=-1,
    )
    expected = scorer(feedforward(span_embeddings)).squeeze(-1) * span_mask
    parts = mention_layer_parts(
        endpoint, feedforward.first_layer, contextual, embedded, head_attention(attentive)(embedded)
    )
    found = mention_scores_from_first_layer(feedforward, scorer, first_layer_of_spans(parts, spans)) * span_mask
    assert _relative_error(found, expected) < tolerance

    weights = torch.randn_like(expected)
    parameters = [p for module in (endpoint, attentive, feedforward, scorer) for p in module.parameters()]
    inputs = [contextual, embedded, *parameters]
    expected_grads = torch.autograd.grad((expected * weights).sum(), inputs)
    found_grads = torch.autograd.grad((found * weights).sum(), inputs)
    names = ["contextual", "embedded"] + [
        n for m in (endpoint, attentive, feedforward, scorer) for n, _ in m.named_parameters()
    ]
    for name, want, got in zip(names, expected_grads, found_grads, strict=True):
        if name == "_global_attention._module.bias":  # its true gradient is 0 (test_coref_model.ZERO_GRADIENT)
            assert got.abs().max() < 1e-4
            continue
        assert _relative_error(got, want) < tolerance, name


def test_an_endpoint_extractor_the_parts_do_not_know_is_an_error():
    endpoint, attentive, feedforward, _ = _mention_modules(torch.float32)
    unknown = EndpointSpanExtractor(CONTEXT_DIM, combination="x,y,x*y")
    contextual, embedded = torch.randn(1, TOKENS, CONTEXT_DIM), torch.randn(1, TOKENS, EMBEDDING_DIM)
    with pytest.raises(ValueError, match="x,y and raw width embeddings"):
        mention_layer_parts(unknown, feedforward.first_layer, contextual, embedded, head_attention(attentive)(embedded))


def _previous_loss(model: CorefElmo, tensors: Dict) -> Tuple[torch.Tensor, torch.Tensor]:
    """The loss as the model computed it before: g_i of every candidate span by AllenNLP's two
    extractors, the mention FFNN on g_i, the kept spans' g_i selected from them, and the antecedent
    FFNN on each concatenated pair (Lee et al.'s formula). Returns the loss and the kept spans."""
    embedded, contextual, document_mask = document_representations(
        model.text_field_embedder, model.context_layer, model.lexical_dropout, tensors["text"], 64
    )
    spans = tensors["spans"]
    span_mask = spans[:, :, 0] >= 0
    safe_spans = spans.clamp(min=0)
    if isinstance(model.attentive_span_extractor, ContextScoredHeadAttention):  # Lee et al.'s head attention
        heads = model.attentive_span_extractor(contextual, embedded, safe_spans, span_mask)
    else:
        heads = model.attentive_span_extractor(embedded, safe_spans, document_mask, span_mask)
    endpoints = model.endpoint_span_extractor(contextual, safe_spans, document_mask, span_mask)
    span_embeddings = torch.cat([endpoints, heads], dim=-1)
    mention_scores = model.mention_scorer(model.mention_feedforward(span_embeddings)).squeeze(-1)
    mention_scores = mention_scores.masked_fill(~span_mask, util.min_value_of_dtype(mention_scores.dtype))
    crossing_checked = safe_spans if model.non_crossing_pruning else None
    kept = ranking.prune_spans(
        mention_scores, span_mask, document_mask.sum(dim=1), model.spans_per_word, crossing_checked
    )
    top_spans = util.batched_index_select(safe_spans, kept.indices)
    antecedents = ranking.antecedent_candidates(kept, model.max_antecedents)
    top_embeddings = util.batched_index_select(span_embeddings, kept.indices)
    top_mention_scores = util.batched_index_select(mention_scores.unsqueeze(-1), kept.indices).squeeze(-1)
    embeddings = (model.distance_embedding, model.speaker_embedding, model.genre_embedding)
    features = ranking.pair_features(
        embeddings, model.genres, top_spans, antecedents, tensors["speaker_ids"], tensors["metadata"]
    )
    pair_scores = _concatenated_pair_scores(
        model.antecedent_feedforward, model.antecedent_scorer, top_embeddings, antecedents, features
    )
    scores = ranking.antecedent_scores(pair_scores, top_mention_scores, antecedents)
    top_labels = util.batched_index_select(tensors["span_labels"].unsqueeze(-1), kept.indices).squeeze(-1)
    top_labels = top_labels.masked_fill(~kept.mask, -1)
    return ranking.marginal_likelihood_loss(scores, top_labels, kept, antecedents), top_spans


def _gradients(model: CorefElmo, loss: torch.Tensor) -> List[Tuple[str, torch.Tensor]]:
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad and name not in ZERO_GRADIENT]
    grads = torch.autograd.grad(loss, [p for _, p in named], allow_unused=True)
    return [(name, grad) for (name, _), grad in zip(named, grads, strict=True) if grad is not None]


LEE_ET_AL = {"non_crossing_pruning": True, "head_attention_from_context": True}


@pytest.mark.parametrize("switches", [{}, LEE_ET_AL], ids=["allennlp", "lee_et_al"])
@pytest.mark.parametrize("elmo", [False, True])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_training_loss_and_gradients_equal_the_previous_computation(elmo, dtype, switches):
    """Two fixture documents in one batch, in training mode (no dropout in this small model), most
    spans per word kept so that many gold mentions are; with AllenNLP's head attention and pruning, and
    with Lee et al.'s (``LEE_ET_AL``). Float64: loss to 1e-12 and each gradient to 1e-9 relative.
    Float32: loss and all gradients together to 1e-5 relative, each gradient to 1e-4 (ELMo's scalar
    gamma sums many terms that cancel: 6e-6 measured)."""
    instances = _instances(elmo=elmo)[:2]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(5)
    model = small_coref_model(vocab, elmo=elmo, spans_per_word=0.8, pair_chunk_size=7, **switches)
    model = model.train().to(dtype)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    output = model(**tensors)
    expected_loss, expected_top_spans = _previous_loss(model, tensors)
    assert torch.equal(output["top_spans"], expected_top_spans)
    expected = dict(_gradients(model, expected_loss))
    found = dict(_gradients(model, output["loss"]))
    assert found.keys() == expected.keys() and len(found) > 10
    loss_tolerance, total_tolerance, each_tolerance = (
        (1e-12, 1e-9, 1e-9) if dtype == torch.float64 else (1e-5, 1e-5, 1e-4)
    )
    assert _relative_error(output["loss"], expected_loss) < loss_tolerance
    everything = [torch.cat([grads[name].flatten() for name in sorted(found)]) for grads in (found, expected)]
    assert _relative_error(*everything) < total_tolerance
    for name, grad in found.items():
        assert _relative_error(grad, expected[name]) < each_tolerance, name
