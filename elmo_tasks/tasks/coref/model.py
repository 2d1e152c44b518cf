"""End-to-end coreference resolution (Lee et al. 2017), with ELMo at the input as configuration.

For each document: word representations (embeddings, character CNN, optionally ELMo) of each
sentence; a BiLSTM over each sentence; every candidate span up to ``max_span_width`` tokens
represented by [BiLSTM states at its two ends + a width embedding (AllenNLP's
``EndpointSpanExtractor``); an attention-weighted sum of its word representations (the "head-finding"
attention: with ``head_attention_from_context``, Lee et al.'s, its logits from the BiLSTM states,
``head_attention.py``; otherwise AllenNLP's ``SelfAttentiveSpanExtractor``, its logits from the words
it sums)]; a mention score per span; then span ranking (``antecedents.py``: pruning, with Lee et al.'s
check that no kept span crosses another under ``non_crossing_pruning``, the pair scores, the loss, the
clusters).

The mention scores of all candidate spans are computed by the parts of the mention FFNN's first
layer (``mention_scores.py``: per token and per width, the head attention summing projected words),
so the representations g_i themselves are built, by the two extractors, only for the spans
pruning keeps: the same numbers as building every g_i, up to float rounding, in far less time.

ELMo sits only at the input, as a ``fast_elmo`` embedder in ``text_field_embedder``. Sentences
are embedded ``sentences_per_embedding_batch`` at a time and, outside training, the candidate
spans are scored ``span_chunk_size`` at a time, so long documents need no more memory than
one batch (``span_representations.py``).

Dropout as Lee et al. (2017): ``lexical_dropout`` on the word representations, ``context_dropout``
on the BiLSTM's outputs (its recurrent dropout is the context layer's own), ``feature_dropout`` on
the width embedding of every span and on the distance, speaker and genre embeddings of every pair
(each span's width embedding dropped out once, for its mention score and its pair scores alike), the
feedforwards' own between their layers.

Both switches default to off, the model as it was before they existed (the committed runs' and
allennlp-models'); the `full` configs, the paper's recipe, turn them on.

Outputs: ``top_spans`` (batch, kept, 2) inclusive token spans, ``antecedent_indices``
(batch, kept, antecedents) indices into the kept spans, ``predicted_antecedents`` (batch, kept)
index into ``antecedent_indices`` or -1 for none, ``clusters`` (per document, lists of spans),
``document`` (its words) and ``name``; ``make_output_human_readable`` adds ``cluster_strings``.
"""

from typing import Any, Dict, List, Optional, Sequence, Union

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.span_extractors import EndpointSpanExtractor, SelfAttentiveSpanExtractor
from allennlp.nn import InitializerApplicator, util

from elmo_tasks.allennlp_internals import head_attention
from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.coref import antecedents as ranking
from elmo_tasks.tasks.coref.feedforward import LayeredFeedForward
from elmo_tasks.tasks.coref.head_attention import ContextScoredHeadAttention
from elmo_tasks.tasks.coref.mention_scores import (
    MentionLayerParts,
    first_layer_of_spans,
    mention_layer_parts,
    mention_scores_from_first_layer,
)
from elmo_tasks.tasks.coref.metric import ConllCorefScores
from elmo_tasks.tasks.coref.names import NAMES, OLD_MODEL
from elmo_tasks.tasks.coref.settings import check_dropouts, check_settings, check_widths, pair_width, span_width
from elmo_tasks.tasks.coref.span_representations import document_representations, spans_in_chunks
from elmo_tasks.tasks.registration import register_task_model

ONTONOTES_GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")


@register_task_model(NAMES, old_name=OLD_MODEL)
class CorefElmo(ConfigSizedModel):
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
    context_dropout : dropout on the BiLSTM's outputs (Lee et al.: 0.2; default 0, as before it existed).
    feature_dropout : dropout on the width, distance, speaker and genre embeddings (Lee et al.: 0.2;
        default 0, as before it existed).
    sentences_per_embedding_batch : sentences embedded together (see the module docstring).
    pair_chunk_size : spans whose antecedent pairs are scored together (memory, see
        ``antecedents.score_pairs``).
    pairs_per_chunk : at most this many antecedent pairs are scored together: with K = 250 a chunk
        holds fewer than ``pair_chunk_size`` spans, so memory does not grow with K (the default,
        64 x 50, leaves chunks of 64 spans wherever K <= 50).
    genres : genre names with an embedding each; any other genre shares one more embedding.
    span_chunk_size : candidate spans whose mention scores' first layer is computed together outside
        training (memory, see ``span_representations.spans_in_chunks``).
    non_crossing_pruning : Lee et al.'s pruning, which passes over a span crossing one kept before it
        (``antecedents.non_crossing_best``; default False, AllenNLP's pruning without the check).
    head_attention_from_context : Lee et al.'s head attention, scored from the BiLSTM states, summing
        the word representations (default False: AllenNLP's extractor, scored from the words).

    From a config the context layer is given without ``input_size`` and the feedforwards without
    ``input_dim``: ``from_partial_objects`` derives them from the embedder's width.
    """

    sized_layers = ("context_layer", "mention_feedforward", "antecedent_feedforward")

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        context_layer: Seq2SeqEncoder,
        mention_feedforward: LayeredFeedForward,
        antecedent_feedforward: LayeredFeedForward,
        feature_size: int = 20,
        max_span_width: int = 10,
        spans_per_word: float = 0.4,
        max_antecedents: int = 250,
        lexical_dropout: float = 0.5,
        context_dropout: float = 0.0,
        feature_dropout: float = 0.0,
        sentences_per_embedding_batch: int = 64,
        pair_chunk_size: int = 64,
        pairs_per_chunk: int = 64 * 50,
        genres: Sequence[str] = ONTONOTES_GENRES,
        initializer: InitializerApplicator = InitializerApplicator(),
        span_chunk_size: int = 2048,
        non_crossing_pruning: bool = False,
        head_attention_from_context: bool = False,
        **kwargs: Any,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        check_settings(
            text_field_embedder, spans_per_word, max_antecedents, max_span_width, sentences_per_embedding_batch
        )
        check_dropouts(lexical=lexical_dropout, context=context_dropout, feature=feature_dropout)
        check_widths(text_field_embedder, context_layer, mention_feedforward, antecedent_feedforward, feature_size)
        self.text_field_embedder = text_field_embedder
        self.context_layer = context_layer
        self.max_span_width = max_span_width
        self.spans_per_word = spans_per_word
        self.max_antecedents = max_antecedents
        self.sentences_per_embedding_batch = sentences_per_embedding_batch
        self.pair_chunk_size = max(1, pair_chunk_size)
        self.pairs_per_chunk = max(1, pairs_per_chunk)
        self.span_chunk_size = max(1, span_chunk_size)
        self.genres = list(genres)
        self.feature_size = feature_size

        self.endpoint_span_extractor = EndpointSpanExtractor(
            context_layer.get_output_dim(),
            combination="x,y",
            num_width_embeddings=max_span_width,
            span_width_embedding_dim=feature_size,
        )
        self.non_crossing_pruning = non_crossing_pruning
        self.head_attention_from_context = head_attention_from_context
        # One attribute either way: the parameter names (``attentive_span_extractor._global_attention...``)
        # are the same, only the attention's input width differs.
        self.attentive_span_extractor: Union[SelfAttentiveSpanExtractor, ContextScoredHeadAttention] = (
            ContextScoredHeadAttention(context_layer.get_output_dim(), text_field_embedder.get_output_dim())
            if head_attention_from_context
            else SelfAttentiveSpanExtractor(text_field_embedder.get_output_dim())
        )
        self.mention_feedforward = mention_feedforward
        self.mention_scorer = torch.nn.Linear(mention_feedforward.get_output_dim(), 1)
        self.antecedent_feedforward = antecedent_feedforward
        self.antecedent_scorer = torch.nn.Linear(antecedent_feedforward.get_output_dim(), 1)
        self.distance_embedding = torch.nn.Embedding(ranking.NUM_DISTANCE_BUCKETS, feature_size)
        self.speaker_embedding = torch.nn.Embedding(2, feature_size)
        self.genre_embedding = torch.nn.Embedding(len(self.genres) + 1, feature_size)
        self.lexical_dropout = torch.nn.Dropout(lexical_dropout)
        self.context_dropout = torch.nn.Dropout(context_dropout)
        self.feature_dropout = torch.nn.Dropout(feature_dropout)

        self.conll_scores = ConllCorefScores()
        self.pruning_statistics = ranking.PruningStatistics()
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """Every input size from the embedder's width (ELMo's comes from its options file)."""
        context = config.build("context_layer", input_size=config.embedding_dim)
        feature_size = config.setting("feature_size")
        span_dim = span_width(config.embedding_dim, context.get_output_dim(), feature_size)
        config.build("mention_feedforward", input_dim=span_dim)
        config.build("antecedent_feedforward", input_dim=pair_width(span_dim, feature_size))

    def _mention_scores(
        self,
        document_contextual: torch.Tensor,
        document_embedded: torch.Tensor,
        spans: torch.Tensor,
        span_mask: torch.Tensor,
        width_keep: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """s_m(i) of every candidate span, (batch, spans), masked spans lowest: s_m(FFNN(g_i)) by the
        parts of the first layer (``mention_scores.py``), without forming g_i; ``width_keep``: the
        spans' width-embedding dropout mask (training only)."""
        parts = mention_layer_parts(
            self.endpoint_span_extractor,
            self.mention_feedforward.first_layer,
            document_contextual,
            document_embedded,
            self._head_logits(document_contextual, document_embedded),
        )
        hidden = self._mention_first_layer(parts, spans, span_mask, width_keep)
        scores = mention_scores_from_first_layer(self.mention_feedforward, self.mention_scorer, hidden)
        return scores.masked_fill(~span_mask, util.min_value_of_dtype(scores.dtype))

    def _head_logits(self, document_contextual: torch.Tensor, document_embedded: torch.Tensor) -> torch.Tensor:
        """The head attention's logit of every token, (batch, tokens, 1): from the BiLSTM states
        (``head_attention_from_context``) or from the word representations (AllenNLP's extractor)."""
        if isinstance(self.attentive_span_extractor, ContextScoredHeadAttention):
            return self.attentive_span_extractor.logits(document_contextual)
        return head_attention(self.attentive_span_extractor)(document_embedded)

    def _mention_first_layer(
        self,
        parts: MentionLayerParts,
        spans: torch.Tensor,
        span_mask: torch.Tensor,
        width_keep: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """The mention FFNN's first layer on every candidate span, (batch, spans, hidden): in one pass in
        training (the graph stays that of one pass), else ``span_chunk_size`` spans at a time with
        the same numbers."""
        if width_keep is not None:
            return first_layer_of_spans(parts, spans, width_keep)
        if self.training or spans.size(1) <= self.span_chunk_size:
            return first_layer_of_spans(parts, spans)
        return spans_in_chunks(
            lambda chunk, _chunk_mask: first_layer_of_spans(parts, chunk), spans, span_mask, self.span_chunk_size
        )

    def _embed_spans(
        self,
        document_contextual: torch.Tensor,
        document_embedded: torch.Tensor,
        spans: torch.Tensor,
        document_mask: torch.Tensor,
        span_mask: torch.Tensor,
        width_keep: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """g_i of the given spans (the kept ones), in one pass: [BiLSTM end points + width embedding;
        head attention], AllenNLP's extractors (ours for the head attention from the BiLSTM states);
        ``width_keep``: the spans' width-embedding dropout mask (training only), the one their mention
        scores had."""
        endpoints = self.endpoint_span_extractor(document_contextual, spans, document_mask, span_mask)
        if width_keep is not None:  # the width embedding is the extractor's last part
            width_dim = width_keep.size(-1)
            endpoints = torch.cat([endpoints[..., :-width_dim], endpoints[..., -width_dim:] * width_keep], dim=-1)
        if isinstance(self.attentive_span_extractor, ContextScoredHeadAttention):
            heads = self.attentive_span_extractor(document_contextual, document_embedded, spans, span_mask)
        else:
            heads = self.attentive_span_extractor(document_embedded, spans, document_mask, span_mask)
        return torch.cat([endpoints, heads], dim=-1)

    def forward(
        self,
        text: TextFieldTensors,
        spans: torch.LongTensor,
        speaker_ids: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        span_labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        document_embedded, document_contextual, document_mask = document_representations(
            self.text_field_embedder, self.context_layer, self.lexical_dropout, text, self.sentences_per_embedding_batch
        )
        if self.training and self.context_dropout.p > 0:
            document_contextual = self.context_dropout(document_contextual)
        num_tokens = document_mask.sum(dim=1)  # (batch,)
        span_mask = spans[:, :, 0] >= 0  # padding spans are (-1, -1)
        safe_spans = spans.clamp(min=0)
        width_keep = self._width_keep(safe_spans)
        mention_scores = self._mention_scores(document_contextual, document_embedded, safe_spans, span_mask, width_keep)
        crossing_checked = safe_spans if self.non_crossing_pruning else None
        kept = ranking.prune_spans(mention_scores, span_mask, num_tokens, self.spans_per_word, crossing_checked)
        top_spans = util.batched_index_select(safe_spans, kept.indices)
        top_width_keep = None if width_keep is None else util.batched_index_select(width_keep, kept.indices)
        top_embeddings = self._embed_spans(
            document_contextual, document_embedded, top_spans, document_mask, kept.mask, top_width_keep
        )
        antecedents = ranking.antecedent_candidates(kept, self.max_antecedents)
        scores = self._antecedent_scores(
            top_embeddings, mention_scores, top_spans, kept, antecedents, speaker_ids, metadata
        )
        predicted_antecedents, clusters = ranking.predicted_clusters(scores, top_spans, kept, antecedents)
        output: Dict[str, Any] = {
            "top_spans": top_spans,
            "antecedent_indices": antecedents.indices,
            "predicted_antecedents": predicted_antecedents,
            "clusters": clusters,
        }
        self.pruning_statistics.count_spans(
            [m.get("name", "") for m in metadata], num_tokens, span_mask, kept, antecedents
        )
        if span_labels is not None:
            top_labels = util.batched_index_select(span_labels.unsqueeze(-1), kept.indices).squeeze(-1)
            top_labels = top_labels.masked_fill(~kept.mask, -1)
            output["loss"] = ranking.marginal_likelihood_loss(scores, top_labels, kept, antecedents)
            self.pruning_statistics.count_gold_mentions_kept(span_labels, span_mask, top_labels)
        if metadata and all("clusters" in m for m in metadata):
            self.conll_scores(clusters, [m["clusters"] for m in metadata])
        output["document"] = [[word for sentence in m["sentences"] for word in sentence] for m in metadata]
        output["name"] = [m.get("name", "") for m in metadata]
        return output

    def _width_keep(self, spans: torch.Tensor) -> Optional[torch.Tensor]:
        """In training with ``feature_dropout``, a dropout mask per span on its width embedding, (batch,
        spans, feature size): zeros and 1 / (1 - p); otherwise None."""
        if not (self.training and self.feature_dropout.p > 0):
            return None
        ones = spans.new_ones(*spans.shape[:2], self.feature_size, dtype=self.distance_embedding.weight.dtype)
        return self.feature_dropout(ones)

    def _antecedent_scores(
        self,
        top_embeddings: torch.Tensor,
        mention_scores: torch.Tensor,
        top_spans: torch.Tensor,
        kept: ranking.KeptSpans,
        antecedents: ranking.Antecedents,
        speaker_ids: torch.Tensor,
        metadata: List[Dict[str, Any]],
    ) -> torch.Tensor:
        """s(i, j) of every kept span and its antecedents, the dummy first: (batch, kept, K + 1);
        ``top_embeddings``: g_i of the kept spans."""
        top_mention_scores = util.batched_index_select(mention_scores.unsqueeze(-1), kept.indices).squeeze(-1)
        embeddings = (self.distance_embedding, self.speaker_embedding, self.genre_embedding)
        features = ranking.pair_features(embeddings, self.genres, top_spans, antecedents, speaker_ids, metadata)
        if self.training and self.feature_dropout.p > 0:
            features = self.feature_dropout(features)
        pair_scores = ranking.score_pairs(
            self.antecedent_feedforward,
            self.antecedent_scorer,
            top_embeddings,
            antecedents,
            features,
            self.pair_chunk_size,
            self.pairs_per_chunk,
        )
        return ranking.antecedent_scores(pair_scores, top_mention_scores, antecedents)

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """``clusters`` stay token spans; adds ``cluster_strings`` (the words of every mention)."""
        output_dict["cluster_strings"] = [
            [[" ".join(tokens[start : end + 1]) for start, end in cluster] for cluster in clusters]
            for tokens, clusters in zip(output_dict["document"], output_dict["clusters"], strict=True)
        ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        """MUC, B-cubed, CEAF-phi4 and ``coref_f1``, and what pruning left per document."""
        return {**self.conll_scores.get_metric(reset), **self.pruning_statistics.get_metrics(reset)}
