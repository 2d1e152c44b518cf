"""End-to-end coreference resolution (Lee et al. 2017), with ELMo at the input as configuration.

For each document: word representations (embeddings, character CNN, optionally ELMo) of each
sentence; a BiLSTM over each sentence; every candidate span up to ``max_span_width`` tokens
represented by [BiLSTM states at its two ends + a width embedding (AllenNLP's
``EndpointSpanExtractor``); an attention-weighted sum of its word representations (AllenNLP's
``SelfAttentiveSpanExtractor``, the "head-finding" attention)]; a mention score per span; the
``spans_per_word * tokens`` best spans kept (lambda = 0.4); each kept span scored against the
``max_antecedents`` kept spans before it with
``s(i, j) = s_m(i) + s_m(j) + FFNN([g_i, g_j, g_i * g_j, phi(i, j)])``, where phi holds
embeddings of the distance bucket (in kept spans: 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+),
of same/different speaker and of the document's genre; a dummy antecedent scores 0. The loss is
the negative marginal log-likelihood of all gold antecedents (the dummy one when a span has
none).

ELMo sits only at the input, as a ``fast_elmo`` embedder in ``text_field_embedder``. Sentences
are embedded ``sentences_per_embedding_batch`` at a time: the biLM is stateless, so a sentence's
vectors do not depend on which sentences share its batch, and long documents need no more
memory than one batch. Outside training the candidate spans are likewise represented
``span_chunk_size`` at a time, with exactly the numbers of one pass (``_span_embeddings``).

Deviations from Lee et al. (2017): no non-crossing constraint when pruning, and the head
attention is computed from the word representations themselves (AllenNLP's extractor)
rather than from the BiLSTM states.

Outputs: ``top_spans`` (batch, kept, 2) inclusive token spans, ``antecedent_indices``
(batch, kept, antecedents) indices into the kept spans, ``predicted_antecedents`` (batch, kept)
index into ``antecedent_indices`` or -1 for none, ``clusters`` (per document, lists of spans).
"""

import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.span_extractors import (
    EndpointSpanExtractor,
    SelfAttentiveSpanExtractor,
)
from allennlp.nn import InitializerApplicator, RegularizerApplicator, util
from allennlp.training.metrics import Average
from torch.utils.checkpoint import checkpoint

from elmo_tasks.modules.elmo_token_embedder import find_elmo_embedder
from elmo_tasks.tasks.coref.metric import ConllCorefScores

logger = logging.getLogger(__name__)

ONTONOTES_GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")
NUM_DISTANCE_BUCKETS = 10


@Model.register("coref_elmo", constructor="from_partial_objects")
class CorefElmo(Model):
    """Lee et al. (2017) span-ranking coreference; see the module docstring.

    # Parameters
    text_field_embedder : word representations (embeddings, characters, optionally ELMo).
    context_layer : the BiLSTM run over each sentence.
    mention_feedforward, antecedent_feedforward : the hidden layers of the mention and antecedent
        scorers (a linear layer to one score follows each).
    feature_size : width of the span-width, distance, speaker and genre embeddings (20).
    max_span_width : must equal the reader's.
    spans_per_word : lambda, kept spans per document token (0.4).
    max_antecedents : K, antecedents considered per kept span (250 in the paper).
    lexical_dropout : dropout on the word representations (0.5).
    sentences_per_embedding_batch : sentences embedded together (see the module docstring).
    pair_chunk_size : spans whose antecedent pairs are scored together (memory, see ``_pair_scores``).
    span_chunk_size : candidate spans represented together outside training (memory, see
        ``_span_embeddings``).
    genres : genre names with an embedding each; any other genre shares one more embedding.
    """

    default_predictor = "coref"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        context_layer: Seq2SeqEncoder,
        mention_feedforward: FeedForward,
        antecedent_feedforward: FeedForward,
        feature_size: int = 20,
        max_span_width: int = 10,
        spans_per_word: float = 0.4,
        max_antecedents: int = 250,
        lexical_dropout: float = 0.5,
        sentences_per_embedding_batch: int = 64,
        pair_chunk_size: int = 64,
        genres: Sequence[str] = ONTONOTES_GENRES,
        initializer: InitializerApplicator = InitializerApplicator(),
        span_chunk_size: int = 2048,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if context_layer.get_input_dim() != text_field_embedder.get_output_dim():
            raise ConfigurationError(
                f"coref_elmo: context_layer input size {context_layer.get_input_dim()} != text_field_embedder "
                f"output size {text_field_embedder.get_output_dim()}; leave context_layer.input_size out "
                "of the config and the model fills it in"
            )
        if (
            not 0 < spans_per_word <= 1
            or max_antecedents < 1
            or max_span_width < 1
            or sentences_per_embedding_batch < 1
        ):
            raise ConfigurationError(
                "coref_elmo: needs 0 < spans_per_word <= 1, max_antecedents >= 1, max_span_width >= 1 and "
                f"sentences_per_embedding_batch >= 1; got {spans_per_word}, {max_antecedents}, {max_span_width}, "
                f"{sentences_per_embedding_batch}"
            )
        elmo = find_elmo_embedder(text_field_embedder)
        if elmo is not None and elmo.bilm.stateful:
            raise ConfigurationError(
                "coref_elmo embeds a document's sentences in batches, which only gives the same vectors as "
                "one pass if the biLM is stateless: set stateful: false in the fast_elmo embedder"
            )
        self.text_field_embedder = text_field_embedder
        self.context_layer = context_layer
        self.max_span_width = max_span_width
        self.spans_per_word = spans_per_word
        self.max_antecedents = max_antecedents
        self.sentences_per_embedding_batch = sentences_per_embedding_batch
        self.pair_chunk_size = max(1, pair_chunk_size)
        self.span_chunk_size = max(1, span_chunk_size)
        self.genres = list(genres)

        self.endpoint_span_extractor = EndpointSpanExtractor(
            context_layer.get_output_dim(),
            combination="x,y",
            num_width_embeddings=max_span_width,
            span_width_embedding_dim=feature_size,
        )
        self.attentive_span_extractor = SelfAttentiveSpanExtractor(text_field_embedder.get_output_dim())
        span_dim = self.endpoint_span_extractor.get_output_dim() + self.attentive_span_extractor.get_output_dim()
        if mention_feedforward.get_input_dim() != span_dim:
            raise ConfigurationError(
                f"coref_elmo: mention_feedforward input size must be the span width {span_dim}; "
                "leave it out of the config and the model fills it in"
            )
        pair_dim = 3 * span_dim + 3 * feature_size
        if antecedent_feedforward.get_input_dim() != pair_dim:
            raise ConfigurationError(
                f"coref_elmo: antecedent_feedforward input size must be {pair_dim} "
                "(3 * span width + 3 * feature_size); leave it out of the config"
            )
        self.mention_feedforward = mention_feedforward
        self.mention_scorer = torch.nn.Linear(mention_feedforward.get_output_dim(), 1)
        self.antecedent_feedforward = antecedent_feedforward
        self.antecedent_scorer = torch.nn.Linear(antecedent_feedforward.get_output_dim(), 1)
        self.distance_embedding = torch.nn.Embedding(NUM_DISTANCE_BUCKETS, feature_size)
        self.speaker_embedding = torch.nn.Embedding(2, feature_size)
        self.genre_embedding = torch.nn.Embedding(len(self.genres) + 1, feature_size)
        self.lexical_dropout = torch.nn.Dropout(lexical_dropout)

        self.conll_scores = ConllCorefScores()
        self.candidate_spans_per_document = Average()
        self.kept_spans_per_document = Average()
        self.antecedent_pairs_per_document = Average()
        self.gold_mention_recall_after_pruning = Average()
        initializer(self)

    @classmethod
    def from_partial_objects(
        cls,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        context_layer: Lazy[Seq2SeqEncoder],
        mention_feedforward: Lazy[FeedForward],
        antecedent_feedforward: Lazy[FeedForward],
        feature_size: int = 20,
        max_span_width: int = 10,
        spans_per_word: float = 0.4,
        max_antecedents: int = 250,
        lexical_dropout: float = 0.5,
        sentences_per_embedding_batch: int = 64,
        pair_chunk_size: int = 64,
        genres: Sequence[str] = ONTONOTES_GENRES,
        initializer: InitializerApplicator = InitializerApplicator(),
        regularizer: Optional[RegularizerApplicator] = None,
        span_chunk_size: int = 2048,
    ) -> "CorefElmo":
        """Fills in every input size from the embedder's width (ELMo's comes from its options file)."""
        embedding_dim = text_field_embedder.get_output_dim()
        context = context_layer.construct(input_size=embedding_dim)
        span_dim = 2 * context.get_output_dim() + feature_size + embedding_dim
        return cls(
            vocab=vocab,
            text_field_embedder=text_field_embedder,
            context_layer=context,
            mention_feedforward=mention_feedforward.construct(input_dim=span_dim),
            antecedent_feedforward=antecedent_feedforward.construct(input_dim=3 * span_dim + 3 * feature_size),
            feature_size=feature_size,
            max_span_width=max_span_width,
            spans_per_word=spans_per_word,
            max_antecedents=max_antecedents,
            lexical_dropout=lexical_dropout,
            sentences_per_embedding_batch=sentences_per_embedding_batch,
            pair_chunk_size=pair_chunk_size,
            genres=genres,
            initializer=initializer,
            regularizer=regularizer,
            span_chunk_size=span_chunk_size,
        )

    # ------------------------------------------------------------------ word and span representations
    def _embed_sentences(self, text: TextFieldTensors) -> torch.Tensor:
        """(batch, sentences, words, dim), embedding a fixed number of sentences at a time."""
        some_tensor = next(iter(next(iter(text.values())).values()))
        num_sentences = some_tensor.size(1)
        step = self.sentences_per_embedding_batch
        pieces = []
        for first in range(0, num_sentences, step):
            chunk = {
                name: {key: value[:, first : first + step] for key, value in tensors.items()}
                for name, tensors in text.items()
            }
            pieces.append(self.text_field_embedder(chunk, num_wrapping_dims=1))
        return torch.cat(pieces, dim=1)

    @staticmethod
    def _flatten(sentence_values: torch.Tensor, sentence_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(batch, sentences, words, dim) -> (batch, document tokens, dim) and its mask."""
        batch, sentences, words = sentence_mask.shape
        flat_mask = sentence_mask.reshape(batch, sentences * words)
        lengths = flat_mask.sum(dim=1)
        longest = int(lengths.max().item())
        # A stable sort of "is padding" puts every real token first, in document order.
        order = torch.sort((~flat_mask).long(), dim=1, stable=True).indices[:, :longest]
        values = util.batched_index_select(sentence_values.reshape(batch, sentences * words, -1), order)
        mask = torch.arange(longest, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)
        return values, mask

    # ------------------------------------------------------------------ forward
    def forward(  # type: ignore[override]
        self,
        text: TextFieldTensors,
        spans: torch.LongTensor,
        speaker_ids: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        span_labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        sentence_mask = util.get_text_field_mask(text, num_wrapping_dims=1)  # (batch, sentences, words)
        embedded = self.lexical_dropout(self._embed_sentences(text))
        batch, num_sentences, num_words, _ = embedded.shape
        contextual = self.context_layer(
            embedded.reshape(batch * num_sentences, num_words, -1),
            sentence_mask.reshape(batch * num_sentences, num_words),
        ).reshape(batch, num_sentences, num_words, -1)
        document_embedded, document_mask = self._flatten(embedded, sentence_mask)
        document_contextual, _ = self._flatten(contextual, sentence_mask)
        num_tokens = document_mask.sum(dim=1)  # (batch,)

        span_mask = spans[:, :, 0] >= 0  # padding spans are (-1, -1)
        safe_spans = spans.clamp(min=0)
        span_embeddings = self._span_embeddings(
            document_contextual, document_embedded, safe_spans, document_mask, span_mask
        )
        mention_scores = self.mention_scorer(self.mention_feedforward(span_embeddings)).squeeze(-1)
        mention_scores = mention_scores.masked_fill(~span_mask, util.min_value_of_dtype(mention_scores.dtype))

        # Pruning: the best ceil(lambda * tokens) spans of each document, back in document order.
        num_candidates = span_mask.sum(dim=1)
        keep = torch.minimum(torch.ceil(num_tokens.float() * self.spans_per_word).long(), num_candidates).clamp(min=1)
        max_keep = int(keep.max().item())
        _, best = mention_scores.topk(max_keep, dim=1)
        rank = torch.arange(max_keep, device=best.device).unsqueeze(0)
        top_mask = rank < keep.unsqueeze(1)
        best = best.masked_fill(~top_mask, spans.size(1))  # sorts the extras last
        top_indices = best.sort(dim=1).values.clamp(max=spans.size(1) - 1)
        top_spans = util.batched_index_select(safe_spans, top_indices)
        top_embeddings = util.batched_index_select(span_embeddings, top_indices)
        top_mention_scores = util.batched_index_select(mention_scores.unsqueeze(-1), top_indices).squeeze(-1)

        # Antecedents: the (up to) K kept spans right before each kept span.
        num_antecedents = min(self.max_antecedents, max_keep)
        offsets = torch.arange(1, num_antecedents + 1, device=top_indices.device)
        antecedent_indices = torch.arange(max_keep, device=top_indices.device).unsqueeze(1) - offsets.unsqueeze(0)
        # An antecedent comes before its span, so it is a real kept span whenever the span is one.
        antecedent_mask = (antecedent_indices >= 0).unsqueeze(0) & top_mask.unsqueeze(2)  # (batch, kept, K)
        antecedent_indices = antecedent_indices.clamp(min=0).unsqueeze(0).expand(batch, -1, -1)

        pair_features = self._pair_features(top_spans, antecedent_indices, offsets, speaker_ids, metadata)
        pair_scores = self._pair_scores(top_embeddings, antecedent_indices, pair_features)
        antecedent_mention_scores = util.flattened_index_select(
            top_mention_scores.unsqueeze(-1), antecedent_indices[0]
        ).squeeze(-1)
        scores = pair_scores + top_mention_scores.unsqueeze(-1) + antecedent_mention_scores
        scores = scores.masked_fill(~antecedent_mask, util.min_value_of_dtype(scores.dtype))
        scores = torch.cat([scores.new_zeros(batch, max_keep, 1), scores], dim=-1)  # dummy antecedent first

        best_choice = scores.argmax(dim=-1) - 1  # -1: the dummy
        predicted_antecedents = best_choice.masked_fill(~top_mask, -1)
        clusters = [
            self._clusters(top_spans[b], antecedent_indices[b], predicted_antecedents[b], int(keep[b].item()))
            for b in range(batch)
        ]
        output: Dict[str, Any] = {
            "top_spans": top_spans,
            "antecedent_indices": antecedent_indices,
            "predicted_antecedents": predicted_antecedents,
            "clusters": clusters,
        }
        for b in range(batch):
            pairs_here = int(antecedent_mask[b].sum().item())
            logger.debug(
                "%s: %d tokens, %d candidate spans, %d kept, %d antecedent pairs",
                metadata[b].get("name", ""),
                int(num_tokens[b]),
                int(num_candidates[b]),
                int(keep[b]),
                pairs_here,
            )
            self.candidate_spans_per_document(int(num_candidates[b]))
            self.kept_spans_per_document(int(keep[b]))
            self.antecedent_pairs_per_document(pairs_here)

        if span_labels is not None:
            top_labels = util.batched_index_select(span_labels.unsqueeze(-1), top_indices).squeeze(-1)
            top_labels = top_labels.masked_fill(~top_mask, -1)
            antecedent_labels = util.flattened_index_select(top_labels.unsqueeze(-1), antecedent_indices[0]).squeeze(-1)
            antecedent_labels = antecedent_labels.masked_fill(~antecedent_mask, -1)
            gold = (antecedent_labels == top_labels.unsqueeze(-1)) & (top_labels.unsqueeze(-1) >= 0)
            dummy_gold = ~gold.any(dim=-1, keepdim=True)
            gold = torch.cat([dummy_gold, gold], dim=-1)
            log_norm = torch.logsumexp(scores, dim=-1)
            gold_scores = scores.masked_fill(~gold, util.min_value_of_dtype(scores.dtype))
            log_likelihood = torch.logsumexp(gold_scores, dim=-1) - log_norm
            output["loss"] = -(log_likelihood * top_mask.float()).sum()
            for b in range(batch):
                gold_mentions = int((span_labels[b] >= 0).logical_and(span_mask[b]).sum().item())
                if gold_mentions:
                    self.gold_mention_recall_after_pruning(int((top_labels[b] >= 0).sum().item()) / gold_mentions)
        if metadata and all("clusters" in m for m in metadata):
            self.conll_scores(clusters, [m["clusters"] for m in metadata])
        output["document"] = [[word for sentence in m["sentences"] for word in sentence] for m in metadata]
        output["name"] = [m.get("name", "") for m in metadata]
        return output

    def _span_embeddings(
        self,
        document_contextual: torch.Tensor,
        document_embedded: torch.Tensor,
        spans: torch.Tensor,
        document_mask: torch.Tensor,
        span_mask: torch.Tensor,
    ) -> torch.Tensor:
        """The span representations g_i, (batch, spans, span dim).

        The head attention gathers every word of every span, padded to the widest span, twice: a
        (spans x max_span_width x word dim) tensor, about 2.6 GB for a 300-sentence document at the
        full-data sizes if all candidate spans went through at once. Outside training they go
        through ``span_chunk_size`` at a time, so that part of memory stays flat however long the
        document. Each chunk also carries each document's widest span (its output dropped), so
        every chunk pads to the same width as one pass does and gives exactly its numbers. In
        training one pass keeps the graph as it was.
        """
        num_spans = spans.size(1)
        if self.training or num_spans <= self.span_chunk_size:
            return self._embed_spans(document_contextual, document_embedded, spans, document_mask, span_mask)
        widths = (spans[:, :, 1] - spans[:, :, 0]).masked_fill(~span_mask, -1)
        widest = widths.argmax(dim=1, keepdim=True)  # (batch, 1)
        widest_span = util.batched_index_select(spans, widest)  # (batch, 1, 2)
        widest_mask = span_mask.gather(1, widest)
        pieces = []
        for first in range(0, num_spans, self.span_chunk_size):
            last = min(first + self.span_chunk_size, num_spans)
            chunk = self._embed_spans(
                document_contextual,
                document_embedded,
                torch.cat([spans[:, first:last], widest_span], dim=1),
                document_mask,
                torch.cat([span_mask[:, first:last], widest_mask], dim=1),
            )
            pieces.append(chunk[:, :-1])
        return torch.cat(pieces, dim=1)

    def _embed_spans(
        self,
        document_contextual: torch.Tensor,
        document_embedded: torch.Tensor,
        spans: torch.Tensor,
        document_mask: torch.Tensor,
        span_mask: torch.Tensor,
    ) -> torch.Tensor:
        """g_i of the given spans, in one pass: [BiLSTM end points + width embedding; head attention]."""
        return torch.cat(
            [
                self.endpoint_span_extractor(document_contextual, spans, document_mask, span_mask),
                self.attentive_span_extractor(document_embedded, spans, document_mask, span_mask),
            ],
            dim=-1,
        )

    def _pair_scores(
        self, top_embeddings: torch.Tensor, antecedent_indices: torch.Tensor, pair_features: torch.Tensor
    ) -> torch.Tensor:
        """FFNN([g_i, g_j, g_i * g_j, phi(i, j)]) for every span and antecedent, (batch, kept, K).

        The pair tensor is the model's largest (kept x K x ~4,600 floats); it is built for
        ``pair_chunk_size`` spans at a time and, in training, recomputed in the backward pass
        (``torch.utils.checkpoint``) instead of kept, so memory stays flat on long documents.
        """
        kept = antecedent_indices.size(1)
        pieces = []
        for first in range(0, kept, self.pair_chunk_size):
            last = min(first + self.pair_chunk_size, kept)
            arguments = (
                top_embeddings,
                top_embeddings[:, first:last],
                antecedent_indices[0, first:last],
                pair_features[:, first:last],
            )
            if torch.is_grad_enabled():
                pieces.append(checkpoint(self._score_pair_chunk, *arguments, use_reentrant=False))
            else:
                pieces.append(self._score_pair_chunk(*arguments))
        return torch.cat(pieces, dim=1)

    def _score_pair_chunk(
        self,
        top_embeddings: torch.Tensor,
        span_embeddings: torch.Tensor,
        antecedent_indices: torch.Tensor,
        pair_features: torch.Tensor,
    ) -> torch.Tensor:
        antecedent_embeddings = util.flattened_index_select(top_embeddings, antecedent_indices)
        span_expanded = span_embeddings.unsqueeze(2).expand_as(antecedent_embeddings)
        pairs = torch.cat(
            [span_expanded, antecedent_embeddings, span_expanded * antecedent_embeddings, pair_features], -1
        )
        return self.antecedent_scorer(self.antecedent_feedforward(pairs)).squeeze(-1)

    def _pair_features(
        self,
        top_spans: torch.Tensor,
        antecedent_indices: torch.Tensor,
        offsets: torch.Tensor,
        speaker_ids: torch.Tensor,
        metadata: List[Dict[str, Any]],
    ) -> torch.Tensor:
        """[distance bucket; same speaker; genre] embeddings, (batch, kept, K, 3 * feature_size)."""
        batch, kept, num_antecedents = antecedent_indices.shape
        distance = self.distance_embedding(util.bucket_values(offsets, num_total_buckets=NUM_DISTANCE_BUCKETS))
        distance = distance.view(1, 1, num_antecedents, -1).expand(batch, kept, -1, -1)
        span_speakers = util.batched_index_select(speaker_ids.clamp(min=0).unsqueeze(-1), top_spans[:, :, 0]).squeeze(
            -1
        )
        antecedent_speakers = util.flattened_index_select(span_speakers.unsqueeze(-1), antecedent_indices[0]).squeeze(
            -1
        )
        same_speaker = self.speaker_embedding((span_speakers.unsqueeze(-1) == antecedent_speakers).long())
        genre_ids = torch.tensor(
            [self.genres.index(m["genre"]) if m.get("genre") in self.genres else len(self.genres) for m in metadata],
            device=top_spans.device,
        )
        genre = self.genre_embedding(genre_ids).view(batch, 1, 1, -1).expand(-1, kept, num_antecedents, -1)
        return torch.cat([distance, same_speaker, genre], dim=-1)

    @staticmethod
    def _clusters(
        top_spans: torch.Tensor, antecedent_indices: torch.Tensor, predicted: torch.Tensor, keep: int
    ) -> List[List[Tuple[int, int]]]:
        """Clusters from each kept span's best antecedent, following links back to the first mention."""
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

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """``clusters`` stay token spans; adds ``cluster_strings`` (the words of every mention)."""
        output_dict["cluster_strings"] = [
            [[" ".join(tokens[start : end + 1]) for start, end in cluster] for cluster in clusters]
            for tokens, clusters in zip(output_dict["document"], output_dict["clusters"])
        ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self.conll_scores.get_metric(reset)
        metrics["candidate_spans_per_doc"] = self.candidate_spans_per_document.get_metric(reset)
        metrics["kept_spans_per_doc"] = self.kept_spans_per_document.get_metric(reset)
        metrics["antecedent_pairs_per_doc"] = self.antecedent_pairs_per_document.get_metric(reset)
        metrics["gold_mention_recall_after_pruning"] = self.gold_mention_recall_after_pruning.get_metric(reset)
        return metrics
