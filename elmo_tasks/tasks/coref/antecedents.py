"""Span ranking in the coreference model: which candidate spans are kept, which earlier kept spans
each may link to, the pair scores s(i, j), the loss, and the clusters the predicted links make.

Lee et al. (2017): the ``spans_per_word * tokens`` best spans by mention score are kept (in
document order; given ``non_crossing_spans``, as in their code, a span that crosses a span kept
before it is passed over: :func:`non_crossing_best`); each is scored against the
``max_antecedents`` kept spans right before it with
``s(i, j) = s_m(i) + s_m(j) + FFNN([g_i, g_j, g_i * g_j, phi(i, j)])``, where phi holds embeddings
of the distance bucket (in kept spans: 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+), of
same/different speaker and of the document's genre; a dummy antecedent scores 0. The loss is the
negative marginal log-likelihood of all gold antecedents (the dummy one when a span has none).
"""

import logging
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, cast

import torch
from allennlp.nn import util
from allennlp.training.metrics import Average

from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward

logger = logging.getLogger(__name__)

NUM_DISTANCE_BUCKETS = 10


class KeptSpans(NamedTuple):
    """The spans kept after pruning, in document order."""

    indices: torch.LongTensor  # (batch, max kept): indices into the candidate spans
    mask: torch.Tensor  # (batch, max kept): False for the padding of documents that keep fewer
    counts: torch.Tensor  # (batch,): spans kept per document


class Antecedents(NamedTuple):
    """The (up to) K kept spans right before each kept span."""

    indices: torch.Tensor  # (batch, kept, K): indices into the kept spans
    mask: torch.Tensor  # (batch, kept, K): True where the antecedent exists
    offsets: torch.Tensor  # (K,): how many kept spans back each column is (1, 2, ..., K)


def prune_spans(
    mention_scores: torch.Tensor,
    span_mask: torch.Tensor,
    num_tokens: torch.Tensor,
    spans_per_word: float,
    non_crossing_spans: Optional[torch.Tensor] = None,
) -> KeptSpans:
    """The best ceil(lambda * tokens) spans of each document by mention score, back in document order.

    ``non_crossing_spans``: the candidate spans (batch, spans, 2), inclusive, in document order; given,
    no kept span crosses another (:func:`non_crossing_best`), as in Lee et al.'s code."""
    num_candidates = span_mask.sum(dim=1)
    keep = torch.minimum(torch.ceil(num_tokens.float() * spans_per_word).long(), num_candidates).clamp(min=1)
    if non_crossing_spans is not None:
        return _prune_non_crossing(mention_scores, span_mask, non_crossing_spans, keep)
    max_keep = int(keep.max().item())
    _, best = mention_scores.topk(max_keep, dim=1)
    rank = torch.arange(max_keep, device=best.device).unsqueeze(0)
    top_mask = rank < keep.unsqueeze(1)
    num_spans = mention_scores.size(1)
    best = best.masked_fill(~top_mask, num_spans)  # sorts the extras last
    top_indices = best.sort(dim=1).values.clamp(max=num_spans - 1)
    return KeptSpans(cast(torch.LongTensor, top_indices), top_mask, keep)  # topk's indices are int64


def non_crossing_best(starts: Sequence[int], ends: Sequence[int], order: Sequence[int], keep: int) -> List[int]:
    """Lee et al.'s selection: the spans of ``order`` (candidate indices, best first) taken in turn, each
    kept unless it crosses a span kept before it (nested spans and equal starts or ends are fine),
    until ``keep`` are kept; returned in candidate order.

    A kept span crosses (s, e) when it starts inside (s, e] and ends after e, or ends inside [s, e) and
    starts before s; so a span is checked against, per token of its own, the furthest end of the kept
    spans starting there and the earliest start of those ending there: width lookups per candidate,
    however many spans are kept."""
    furthest_end: Dict[int, int] = {}  # start token -> the furthest end of a kept span starting there
    earliest_start: Dict[int, int] = {}  # end token -> the earliest start of a kept span ending there
    chosen: List[int] = []
    for index in order:
        if len(chosen) == keep:
            break
        start, end = starts[index], ends[index]
        if any(furthest_end.get(token, end) > end for token in range(start + 1, end + 1)) or any(
            earliest_start.get(token, start) < start for token in range(start, end)
        ):
            continue
        chosen.append(index)
        furthest_end[start] = max(furthest_end.get(start, end), end)
        earliest_start[end] = min(earliest_start.get(end, start), start)
    return sorted(chosen)


def _prune_non_crossing(
    mention_scores: torch.Tensor, span_mask: torch.Tensor, spans: torch.Tensor, keep: torch.Tensor
) -> KeptSpans:
    """``prune_spans`` with Lee et al.'s crossing check, one document at a time on the CPU (a loop over
    the candidates best first, which stops once the document's spans are kept). Every one-token span
    crosses nothing, so a document can always keep its ceil(lambda * tokens) spans."""
    num_spans = mention_scores.size(1)
    order = mention_scores.detach().sort(dim=1, descending=True, stable=True).indices.tolist()
    starts, ends = spans[:, :, 0].tolist(), spans[:, :, 1].tolist()
    valid = span_mask.tolist()
    chosen = [
        non_crossing_best(starts[row], ends[row], [i for i in order[row] if valid[row][i]], int(count))
        for row, count in enumerate(keep.tolist())
    ]
    counts = torch.tensor([len(indices) for indices in chosen], device=mention_scores.device)
    max_keep = int(counts.max().item())
    padded = [indices + [num_spans - 1] * (max_keep - len(indices)) for indices in chosen]  # as prune_spans pads
    top_indices = torch.tensor(padded, dtype=torch.long, device=mention_scores.device)
    top_mask = torch.arange(max_keep, device=mention_scores.device).unsqueeze(0) < counts.unsqueeze(1)
    return KeptSpans(cast(torch.LongTensor, top_indices), top_mask, counts)


def antecedent_candidates(kept: KeptSpans, max_antecedents: int) -> Antecedents:
    """The (up to) ``max_antecedents`` kept spans right before each kept span."""
    batch, max_keep = kept.mask.shape
    num_antecedents = min(max_antecedents, max_keep)
    offsets = torch.arange(1, num_antecedents + 1, device=kept.indices.device)
    indices = torch.arange(max_keep, device=kept.indices.device).unsqueeze(1) - offsets.unsqueeze(0)
    # An antecedent comes before its span, so it is a real kept span whenever the span is one.
    mask = (indices >= 0).unsqueeze(0) & kept.mask.unsqueeze(2)  # (batch, kept, K)
    indices = indices.clamp(min=0).unsqueeze(0).expand(batch, -1, -1)
    return Antecedents(indices, mask, offsets)


def pair_features(
    embeddings: Tuple[torch.nn.Embedding, torch.nn.Embedding, torch.nn.Embedding],
    genres: Sequence[str],
    top_spans: torch.Tensor,
    antecedents: Antecedents,
    speaker_ids: torch.Tensor,
    metadata: List[Dict[str, Any]],
) -> torch.Tensor:
    """phi(i, j): [distance bucket; same speaker; genre] embeddings, (batch, kept, K, 3 * feature size).

    ``embeddings``: the distance, same-speaker and genre embeddings; a genre not in ``genres``
    takes the genre embedding's last row.
    """
    distance_embedding, speaker_embedding, genre_embedding = embeddings
    batch, kept, num_antecedents = antecedents.indices.shape
    buckets = util.bucket_values(antecedents.offsets, num_total_buckets=NUM_DISTANCE_BUCKETS)
    distance = distance_embedding(buckets).view(1, 1, num_antecedents, -1).expand(batch, kept, -1, -1)
    speakers = speaker_ids.clamp(min=0).unsqueeze(-1)
    span_speakers = util.batched_index_select(speakers, cast(torch.LongTensor, top_spans[:, :, 0])).squeeze(-1)
    first_indices = cast(torch.LongTensor, antecedents.indices[0])  # the same in every document of the batch
    antecedent_speakers = util.flattened_index_select(span_speakers.unsqueeze(-1), first_indices).squeeze(-1)
    same_speaker = speaker_embedding((span_speakers.unsqueeze(-1) == antecedent_speakers).long())
    genre_ids = torch.tensor(
        [genres.index(m["genre"]) if m.get("genre") in genres else len(genres) for m in metadata],
        device=top_spans.device,
    )
    genre = genre_embedding(genre_ids).view(batch, 1, 1, -1).expand(-1, kept, num_antecedents, -1)
    return torch.cat([distance, same_speaker, genre], dim=-1)


class PairLayerParts(NamedTuple):
    """The antecedent FFNN's first layer on [g_i, g_j, g_i * g_j, phi], split by the part of its input:
    the g_i and g_j parts depend on one span each, so they are computed once per kept span; only the
    product and phi are per pair. The sum is the layer's output, the same numbers as on the
    concatenated pair up to float rounding, with about a third of its products and memory."""

    span_side: torch.Tensor  # (batch, kept, hidden): W_i g_i + bias
    antecedent_side: torch.Tensor  # (batch, kept, hidden): W_j g_j
    product_weight: torch.Tensor  # (hidden, span dim): W_ij, applied to g_i * g_j
    feature_weight: torch.Tensor  # (hidden, feature dim): W_phi


def pair_layer_parts(first_layer: torch.nn.Linear, top_embeddings: torch.Tensor) -> PairLayerParts:
    span_dim = top_embeddings.size(-1)
    weight = first_layer.weight
    if weight.size(1) <= 3 * span_dim:
        raise ValueError(
            f"the antecedent feedforward's first layer takes {weight.size(1)} inputs, but pairs of spans of "
            f"{span_dim} dimensions need 3 x {span_dim} plus the pair features: check its input_dim"
        )
    span_weight, antecedent_weight, product_weight, feature_weight = weight.split(
        [span_dim, span_dim, span_dim, weight.size(1) - 3 * span_dim], dim=1
    )
    span_side = torch.nn.functional.linear(top_embeddings, span_weight, first_layer.bias)
    antecedent_side = torch.nn.functional.linear(top_embeddings, antecedent_weight)
    return PairLayerParts(span_side, antecedent_side, product_weight, feature_weight)


class PairProductLayer(torch.autograd.Function):
    """W_ij (g_i * g_j) for the kept spans ``first:last`` and their antecedents ``indices`` (chunk, K):
    the only part of the pair layer as wide as a span per pair. Autograd would keep both (pairs x span
    dim) tensors it takes, g_j and the products, for the backward pass; this keeps neither, only the
    kept spans' g and W_ij, and rebuilds them in the backward pass from those (a gather and a product,
    no matrix product). So the pairs' memory stays a few hidden-size tensors per pair, without
    recomputing the whole chunk's forward pass (the first layer's matrix product, its dropout draws)
    as ``torch.utils.checkpoint`` did. The gradients are autograd's formulas for the same operations
    (``tests/tasks/coref/test_coref_pair_scores.py``)."""

    @staticmethod
    def forward(
        ctx: Any, top_embeddings: torch.Tensor, first: int, last: int, indices: torch.Tensor, weight: torch.Tensor
    ) -> torch.Tensor:
        ctx.save_for_backward(top_embeddings, indices, weight)
        ctx.chunk = (first, last)
        return torch.nn.functional.linear(_pair_products(top_embeddings, first, last, indices), weight)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        top_embeddings, indices, weight = ctx.saved_tensors
        first, last = ctx.chunk
        batch, _, span_dim = top_embeddings.shape
        span_embeddings = top_embeddings[:, first:last].unsqueeze(2)
        antecedent_embeddings = util.flattened_index_select(top_embeddings, cast(torch.LongTensor, indices))
        grad = grad.to(weight.dtype)
        grad_products = grad.matmul(weight)  # (batch, chunk, K, span dim)
        grad_embeddings = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_embeddings = torch.zeros_like(top_embeddings)
            grad_embeddings[:, first:last] = (grad_products * antecedent_embeddings).sum(dim=2)
            antecedent_grads = (grad_products * span_embeddings).reshape(batch, -1, span_dim)
            grad_embeddings.index_add_(1, indices.reshape(-1), antecedent_grads)
        if ctx.needs_input_grad[4]:
            products = (span_embeddings * antecedent_embeddings).reshape(-1, span_dim)
            grad_weight = grad.reshape(-1, grad.size(-1)).t().mm(products)
        return grad_embeddings, None, None, None, grad_weight


def _pair_products(top_embeddings: torch.Tensor, first: int, last: int, indices: torch.Tensor) -> torch.Tensor:
    """g_i * g_j for the kept spans ``first:last`` and their antecedents, (batch, chunk, K, span dim)."""
    antecedent_embeddings = util.flattened_index_select(top_embeddings, cast(torch.LongTensor, indices))
    return top_embeddings[:, first:last].unsqueeze(2) * antecedent_embeddings


def score_pair_chunk(
    feedforward: LayeredFeedForward,
    scorer: torch.nn.Linear,
    parts: PairLayerParts,
    top_embeddings: torch.Tensor,
    chunk: slice,
    antecedent_indices: torch.Tensor,
    features: torch.Tensor,
) -> torch.Tensor:
    """FFNN([g_i, g_j, g_i * g_j, phi(i, j)]) for the kept spans ``chunk`` and their antecedents."""
    indices = cast(torch.LongTensor, antecedent_indices)
    if torch.is_grad_enabled():
        products = PairProductLayer.apply(top_embeddings, chunk.start, chunk.stop, indices, parts.product_weight)
    else:
        products = torch.nn.functional.linear(
            _pair_products(top_embeddings, chunk.start, chunk.stop, indices), parts.product_weight
        )
    hidden = (
        parts.span_side[:, chunk].unsqueeze(2)
        + util.flattened_index_select(parts.antecedent_side, indices)
        + products
        + torch.nn.functional.linear(features, parts.feature_weight)
    )
    return scorer(feedforward.after_first_layer(hidden)).squeeze(-1)


def score_pairs(
    feedforward: LayeredFeedForward,
    scorer: torch.nn.Linear,
    top_embeddings: torch.Tensor,
    antecedents: Antecedents,
    features: torch.Tensor,
    chunk_size: int,
    pairs_per_chunk: Optional[int] = None,
) -> torch.Tensor:
    """FFNN([g_i, g_j, g_i * g_j, phi(i, j)]) for every kept span and antecedent, (batch, kept, K).

    The first layer goes by parts (``PairLayerParts``). The per-pair tensors as wide as a span (kept x
    K x span dim) are the model's largest; they are built for ``chunk_size`` spans at a time, fewer
    where that would be over ``pairs_per_chunk`` pairs (so their size does not grow with K), and, in
    training, rebuilt in the backward pass instead of kept (``PairProductLayer``). What training keeps
    per pair are the hidden layers' activations (a few kept x K x hidden tensors).
    """
    parts = pair_layer_parts(feedforward.first_layer, top_embeddings)
    kept, num_antecedents = antecedents.indices.shape[1:]
    if pairs_per_chunk is not None:
        chunk_size = max(1, min(chunk_size, pairs_per_chunk // max(1, num_antecedents)))
    pieces = []
    for first in range(0, kept, chunk_size):
        chunk = slice(first, min(first + chunk_size, kept))
        indices = antecedents.indices[0, chunk]
        pieces.append(score_pair_chunk(feedforward, scorer, parts, top_embeddings, chunk, indices, features[:, chunk]))
    return torch.cat(pieces, dim=1)


def antecedent_scores(
    pair_scores: torch.Tensor, top_mention_scores: torch.Tensor, antecedents: Antecedents
) -> torch.Tensor:
    """s(i, j) for every kept span and antecedent, with the dummy antecedent (score 0) first:
    (batch, kept, K + 1); impossible antecedents get the lowest score."""
    antecedent_mention_scores = util.flattened_index_select(
        top_mention_scores.unsqueeze(-1), cast(torch.LongTensor, antecedents.indices[0])
    ).squeeze(-1)
    scores = pair_scores + top_mention_scores.unsqueeze(-1) + antecedent_mention_scores
    scores = scores.masked_fill(~antecedents.mask, util.min_value_of_dtype(scores.dtype))
    batch, max_keep, _ = scores.shape
    return torch.cat([scores.new_zeros(batch, max_keep, 1), scores], dim=-1)


def marginal_likelihood_loss(
    scores: torch.Tensor, top_labels: torch.Tensor, kept: KeptSpans, antecedents: Antecedents
) -> torch.Tensor:
    """The negative marginal log-likelihood of every gold antecedent of every kept span (the dummy
    one for a span with none), summed; ``top_labels`` is each kept span's gold cluster or -1."""
    first_indices = cast(torch.LongTensor, antecedents.indices[0])  # the same in every document of the batch
    antecedent_labels = util.flattened_index_select(top_labels.unsqueeze(-1), first_indices).squeeze(-1)
    antecedent_labels = antecedent_labels.masked_fill(~antecedents.mask, -1)
    gold = (antecedent_labels == top_labels.unsqueeze(-1)) & (top_labels.unsqueeze(-1) >= 0)
    dummy_gold = ~gold.any(dim=-1, keepdim=True)
    gold = torch.cat([dummy_gold, gold], dim=-1)
    log_norm = torch.logsumexp(scores, dim=-1)
    gold_scores = scores.masked_fill(~gold, util.min_value_of_dtype(scores.dtype))
    log_likelihood = torch.logsumexp(gold_scores, dim=-1) - log_norm
    return -(log_likelihood * kept.mask.float()).sum()


def predicted_clusters(
    scores: torch.Tensor, top_spans: torch.Tensor, kept: KeptSpans, antecedents: Antecedents
) -> Tuple[torch.Tensor, List[List[List[Tuple[int, int]]]]]:
    """Each kept span's best antecedent (an index into its row of ``antecedents.indices``, -1 for
    the dummy), (batch, kept), and the clusters those links make in each document."""
    predicted = (scores.argmax(dim=-1) - 1).masked_fill(~kept.mask, -1)
    clusters = [
        clusters_from_antecedents(top_spans[b], antecedents.indices[b], predicted[b], int(count))
        for b, count in enumerate(kept.counts.tolist())
    ]
    return predicted, clusters


def clusters_from_antecedents(
    top_spans: torch.Tensor, antecedent_indices: torch.Tensor, predicted: torch.Tensor, keep: int
) -> List[List[Tuple[int, int]]]:
    """Clusters from each kept span's best antecedent (an index into its row of
    ``antecedent_indices``, -1 for none), following links back to the first mention."""
    spans = [tuple(span) for span in top_spans.tolist()]
    predicted_list = predicted.tolist()
    indices = antecedent_indices.tolist()
    cluster_of: Dict[int, int] = {}
    clusters: List[List[Tuple[int, int]]] = []
    for i in range(keep):
        choice = predicted_list[i]
        if choice < 0:
            continue
        antecedent = indices[i][choice]
        if antecedent not in cluster_of:
            cluster_of[antecedent] = len(clusters)
            clusters.append([spans[antecedent]])
        cluster_of[i] = cluster_of[antecedent]
        clusters[cluster_of[i]].append(spans[i])
    return clusters


class PruningStatistics:
    """Per-document averages of what pruning leaves: candidate spans, kept spans, antecedent pairs,
    and the share of gold mentions kept (reported with the model's metrics, and logged)."""

    def __init__(self) -> None:
        self.candidate_spans_per_document = Average()
        self.kept_spans_per_document = Average()
        self.antecedent_pairs_per_document = Average()
        self.gold_mention_recall_after_pruning = Average()

    def count_spans(
        self,
        names: List[str],
        num_tokens: torch.Tensor,
        span_mask: torch.Tensor,
        kept: KeptSpans,
        antecedents: Antecedents,
    ) -> None:
        """Candidate spans, kept spans and antecedent pairs of each document (``names``)."""
        num_candidates = span_mask.sum(dim=1)
        for b, name in enumerate(names):
            pairs_here = int(antecedents.mask[b].sum().item())
            logger.debug(
                "%s: %d tokens, %d candidate spans, %d kept, %d antecedent pairs",
                name,
                int(num_tokens[b]),
                int(num_candidates[b]),
                int(kept.counts[b]),
                pairs_here,
            )
            self.candidate_spans_per_document(int(num_candidates[b]))
            self.kept_spans_per_document(int(kept.counts[b]))
            self.antecedent_pairs_per_document(pairs_here)

    def count_gold_mentions_kept(
        self, span_labels: torch.Tensor, span_mask: torch.Tensor, top_labels: torch.Tensor
    ) -> None:
        """Per document with gold mentions: the share of them that pruning kept."""
        for b in range(span_labels.size(0)):
            gold_mentions = int((span_labels[b] >= 0).logical_and(span_mask[b]).sum().item())
            if gold_mentions:
                self.gold_mention_recall_after_pruning(int((top_labels[b] >= 0).sum().item()) / gold_mentions)

    def get_metrics(self, reset: bool) -> Dict[str, float]:
        return {
            "candidate_spans_per_doc": self.candidate_spans_per_document.get_metric(reset),
            "kept_spans_per_doc": self.kept_spans_per_document.get_metric(reset),
            "antecedent_pairs_per_doc": self.antecedent_pairs_per_document.get_metric(reset),
            "gold_mention_recall_after_pruning": self.gold_mention_recall_after_pruning.get_metric(reset),
        }
