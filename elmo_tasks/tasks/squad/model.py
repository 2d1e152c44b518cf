"""BiDAF with self-attention (Clark & Gardner 2017), the SQuAD model of Peters et al. (2018).

Layers, in order (all GRUs bidirectional; ``vdrop`` is variational dropout, one mask per
sequence, on the input of every GRU and every attention):

1. Embedding: the ``text_field_embedder`` (words + character CNN, and ELMo at the input).
2. Contextual encoder ``phrase_layer``, shared by question and passage. **ELMo at the output**
   goes here: its second mix of the same biLM pass (returned with the embedding by
   ``ElmoAtOutput.embed``) is concatenated to this biRNN's output for question and passage, which
   is where Peters et al. (2018, section 3.3) put it ("replacing h_k with [h_k; ELMo_k]" at the
   task biRNN's output).
3. Bi-attention: trilinear similarity ``w . [p; q; p*q]``; passage-to-question attention ``c``;
   question-to-passage attention ``q_c`` from the max similarity per passage word; then
   ``ReLU(W [p; c; p*c; q_c*c])`` (width ``attention_dim``).
4. Self-attention: a GRU (``residual_encoder``), trilinear attention of the passage over itself
   (a word may not attend to itself), ``ReLU(W [r; s; r*s])``, added to the layer's input
   (residual).
5. Span prediction: ``span_start_encoder`` GRU -> linear -> start logits; its output
   concatenated with its input goes through ``span_end_encoder`` GRU -> linear -> end logits.

Loss: negative log-likelihood of the gold start plus that of the gold end. Decoding: the span
maximising p(start) * p(end) with start <= end < start + ``max_span_length`` (17 in the
paper's setups), computed over a band of width ``max_span_length`` so memory stays linear in
the passage length (only the attention matrices are quadratic).

Questions on the same passage: rows of a batch whose passage tensors are identical are embedded
and encoded up to the bi-attention once (the embedder sees each distinct passage once per
batch; with a frozen biLM its cache then holds each distinct passage once per epoch).

Outputs: ``span_start_logits``, ``span_start_probs``, ``span_end_logits``, ``span_end_probs``,
``best_span`` (inclusive token indices), ``best_span_prob``, and the instances' ``metadata`` when
given; ``make_output_human_readable`` adds from them ``best_span_str`` (the passage text between
the span's character offsets), ``answer_offsets`` (character start, end-exclusive, in the passage)
and ``question_id``.
"""

from typing import Any, Dict, List, Optional, Tuple, Union, cast

import torch
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.input_variational_dropout import InputVariationalDropout
from allennlp.modules.matrix_attention import LinearMatrixAttention
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import (
    get_text_field_mask,
    masked_log_softmax,
    masked_softmax,
    min_value_of_dtype,
    replace_masked_values,
    weighted_sum,
)

from elmo_tasks.modules.elmo_at_output import ElmoAtOutput, accept_state_dicts_with_elmo_twice, embed_text, output_dim
from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.registration import register_task_model
from elmo_tasks.tasks.squad.distinct_passages import distinct_rows, select_rows
from elmo_tasks.tasks.squad.metric import SquadEmAndF1
from elmo_tasks.tasks.squad.names import MODEL, NAMES, OLD_MODEL
from elmo_tasks.tasks.squad.spans import best_spans, span_texts


@register_task_model(NAMES, old_name=OLD_MODEL)
class BidafSelfAttention(ConfigSizedModel):
    """Extractive QA: the answer is a span of the passage (see the module docstring).

    # Parameters
    text_field_embedder : embeds question and passage (words, characters, ELMo).
    phrase_layer : the shared contextual GRU (its input size is derived from the embedder).
    residual_encoder : the GRU before self-attention (input size ``attention_dim``).
    span_start_encoder, span_end_encoder : the GRUs predicting start, then end.
    attention_dim : width of the two ReLU layers after bi-attention and self-attention.
    elmo_at_output : concatenate ELMo's second mix to ``phrase_layer``'s output; needs a
        ``fast_elmo`` embedder with ``num_output_representations >= 2``. True in a config;
        ``from_partial_objects`` builds the ``ElmoAtOutput`` once and passes it on.
    dropout : variational dropout rate.
    max_span_length : longest span (in tokens) the decoder may return.
    """

    sized_layers = ("phrase_layer", "residual_encoder", "span_start_encoder", "span_end_encoder")

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        phrase_layer: Seq2SeqEncoder,
        residual_encoder: Seq2SeqEncoder,
        span_start_encoder: Seq2SeqEncoder,
        span_end_encoder: Seq2SeqEncoder,
        attention_dim: int = 200,
        elmo_at_output: Union[bool, ElmoAtOutput, None] = False,
        dropout: float = 0.2,
        max_span_length: int = 17,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        positive_count(max_span_length, "max_span_length", MODEL)
        self.text_field_embedder = text_field_embedder
        self.phrase_layer = phrase_layer
        self.residual_encoder = residual_encoder
        self.span_start_encoder = span_start_encoder
        self.span_end_encoder = span_end_encoder
        self.max_span_length = max_span_length
        self._elmo_at_output = ElmoAtOutput.for_model(elmo_at_output, text_field_embedder, MODEL)
        accept_state_dicts_with_elmo_twice(self)

        check_dimensions_match(
            text_field_embedder.get_output_dim(),
            phrase_layer.get_input_dim(),
            "text field embedding dim",
            "phrase_layer input dim",
        )
        encoded_dim = phrase_layer.get_output_dim() + output_dim(self._elmo_at_output)
        self.bi_attention = LinearMatrixAttention(encoded_dim, encoded_dim, "x,y,x*y")
        self.attention_projection = torch.nn.Linear(4 * encoded_dim, attention_dim)
        check_dimensions_match(
            attention_dim, residual_encoder.get_input_dim(), "attention_dim", "residual_encoder input dim"
        )
        residual_dim = residual_encoder.get_output_dim()
        self.self_attention = LinearMatrixAttention(residual_dim, residual_dim, "x,y,x*y")
        self.self_attention_projection = torch.nn.Linear(3 * residual_dim, attention_dim)
        check_dimensions_match(
            attention_dim, span_start_encoder.get_input_dim(), "attention_dim", "span_start_encoder input dim"
        )
        check_dimensions_match(
            attention_dim + span_start_encoder.get_output_dim(),
            span_end_encoder.get_input_dim(),
            "attention_dim + span_start_encoder output dim",
            "span_end_encoder input dim",
        )
        # No bias: a constant added to every position's logit cannot change a softmax over positions.
        self.span_start_predictor = torch.nn.Linear(span_start_encoder.get_output_dim(), 1, bias=False)
        self.span_end_predictor = torch.nn.Linear(span_end_encoder.get_output_dim(), 1, bias=False)
        self.variational_dropout = InputVariationalDropout(dropout)
        self.squad_metrics = SquadEmAndF1()
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """The GRUs' input sizes: the embedding, then ``attention_dim`` (the span end's GRU also reads the
        span start's output). ELMo at the output is built once here; the attention, not a GRU, reads it."""
        config.elmo_at_output_dim(MODEL)
        attention_dim = config.setting("attention_dim")
        # the span start's GRU first, as the records' runs built it: a seed gives each layer the same weights
        start_encoder = config.build("span_start_encoder", input_size=attention_dim)
        config.build("phrase_layer", input_size=config.embedding_dim)
        config.build("residual_encoder", input_size=attention_dim)
        config.build("span_end_encoder", input_size=attention_dim + start_encoder.get_output_dim())

    def _encode(self, text: TextFieldTensors, mask: torch.BoolTensor) -> torch.Tensor:
        """Embedding, the shared GRU and (with ELMo at the output) ELMo's output mix of the same biLM pass."""
        embedded, output_elmo = embed_text(self.text_field_embedder, self._elmo_at_output, text)
        encoded = self.phrase_layer(self.variational_dropout(embedded), mask)
        if output_elmo is not None:
            encoded = torch.cat([encoded, output_elmo], dim=-1)
        return encoded

    def _encode_distinct_passages(self, passage: TextFieldTensors, mask: torch.BoolTensor) -> torch.Tensor:
        """``_encode`` on each distinct passage of the batch once, copied to every row that has it."""
        first_rows, row_to_distinct = distinct_rows(passage)
        if len(first_rows) == mask.size(0):
            return self._encode(passage, mask)
        index = torch.tensor(first_rows, device=mask.device)
        distinct = select_rows(passage, index)
        encoded = self._encode(distinct, cast(torch.BoolTensor, mask.index_select(0, index)))
        return encoded.index_select(0, torch.tensor(row_to_distinct, device=mask.device))

    def forward(
        self,
        question: TextFieldTensors,
        passage: TextFieldTensors,
        span_start: Optional[torch.IntTensor] = None,
        span_end: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        question_mask = get_text_field_mask(question)
        passage_mask = get_text_field_mask(passage)
        encoded_question = self._encode(question, question_mask)
        encoded_passage = self._encode_distinct_passages(passage, passage_mask)
        attended = self._bi_attention(encoded_question, encoded_passage, question_mask, passage_mask)
        modeled = attended + self._self_attention(attended, passage_mask)
        start_log_probs, end_log_probs, output = self._span_predictions(modeled, passage_mask)
        if span_start is not None and span_end is not None:
            start_target = span_start.view(-1).long()
            end_target = span_end.view(-1).long()
            output["loss"] = -(
                start_log_probs.gather(1, start_target.unsqueeze(1)).mean()
                + end_log_probs.gather(1, end_target.unsqueeze(1)).mean()
            )
        if metadata is not None:
            output["metadata"] = metadata
            if all(entry.get("answer_texts") for entry in metadata):
                answers, _ = span_texts(output["best_span"].tolist(), metadata)
                self.squad_metrics(answers, [entry["answer_texts"] for entry in metadata])
        return output

    def _bi_attention(
        self,
        encoded_question: torch.Tensor,
        encoded_passage: torch.Tensor,
        question_mask: torch.BoolTensor,
        passage_mask: torch.BoolTensor,
    ) -> torch.Tensor:
        """Passage-to-question and question-to-passage attention, merged and projected (width ``attention_dim``)."""
        dropped_question = self.variational_dropout(encoded_question)
        dropped_passage = self.variational_dropout(encoded_passage)
        similarity = self.bi_attention(dropped_passage, dropped_question)  # (batch, P, Q)
        question_mask_per_word = cast(torch.BoolTensor, question_mask.unsqueeze(1))  # (batch, 1, Q)
        passage_to_question = masked_softmax(similarity, question_mask_per_word)
        attended_question = weighted_sum(encoded_question, passage_to_question)  # (batch, P, D)
        masked_similarity = replace_masked_values(
            similarity, question_mask_per_word, min_value_of_dtype(similarity.dtype)
        )
        question_to_passage = masked_softmax(masked_similarity.max(dim=-1).values, passage_mask)
        attended_passage = weighted_sum(encoded_passage, question_to_passage)  # (batch, D)
        attended_passage = attended_passage.unsqueeze(1).expand_as(attended_question)
        merged = torch.cat(
            [
                encoded_passage,
                attended_question,
                encoded_passage * attended_question,
                attended_passage * attended_question,
            ],
            dim=-1,
        )
        return torch.relu(self.attention_projection(merged))

    def _self_attention(self, attended: torch.Tensor, passage_mask: torch.BoolTensor) -> torch.Tensor:
        """What the residual connection adds: each passage word attends over the others (never itself)."""
        residual = self.residual_encoder(self.variational_dropout(attended), passage_mask)
        dropped_residual = self.variational_dropout(residual)
        self_similarity = self.self_attention(dropped_residual, dropped_residual)  # (batch, P, P)
        length = passage_mask.size(1)
        not_self = ~torch.eye(length, dtype=torch.bool, device=passage_mask.device).unsqueeze(0)
        self_weights = masked_softmax(self_similarity, cast(torch.BoolTensor, passage_mask.unsqueeze(1) & not_self))
        self_attended = weighted_sum(residual, self_weights)
        merged_self = torch.cat([residual, self_attended, residual * self_attended], dim=-1)
        return torch.relu(self.self_attention_projection(merged_self))

    def _span_predictions(
        self, modeled: torch.Tensor, passage_mask: torch.BoolTensor
    ) -> Tuple[torch.Tensor, torch.Tensor, Dict[str, Any]]:
        """The start, then the end (which reads the start encoder's output): their log-probabilities
        over the passage and the outputs, the best span among them."""
        start_encoded = self.span_start_encoder(self.variational_dropout(modeled), passage_mask)
        start_logits = self.span_start_predictor(start_encoded).squeeze(-1)
        end_input = torch.cat([modeled, start_encoded], dim=-1)
        end_encoded = self.span_end_encoder(self.variational_dropout(end_input), passage_mask)
        end_logits = self.span_end_predictor(end_encoded).squeeze(-1)
        very_negative = min_value_of_dtype(start_logits.dtype)
        start_logits = replace_masked_values(start_logits, passage_mask, very_negative)
        end_logits = replace_masked_values(end_logits, passage_mask, very_negative)
        start_log_probs = masked_log_softmax(start_logits, passage_mask)
        end_log_probs = masked_log_softmax(end_logits, passage_mask)
        best_span, best_log_prob = best_spans(start_log_probs, end_log_probs, passage_mask, self.max_span_length)
        output: Dict[str, Any] = {
            "span_start_logits": start_logits,
            "span_start_probs": start_log_probs.exp(),
            "span_end_logits": end_logits,
            "span_end_probs": end_log_probs.exp(),
            "best_span": best_span,
            "best_span_prob": best_log_prob.exp(),
        }
        return start_log_probs, end_log_probs, output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds each answer as text, from ``best_span`` and the ``metadata`` of a batch: ``best_span_str``
        (the passage between the span's character offsets), ``answer_offsets`` (character start,
        end-exclusive) and ``question_id``. Without metadata there is no text to cut: nothing is added."""
        metadata = output_dict.get("metadata")
        if metadata is None:
            return output_dict
        answers, offsets = span_texts(output_dict["best_span"].tolist(), metadata)
        output_dict["best_span_str"] = answers
        output_dict["answer_offsets"] = offsets
        output_dict["question_id"] = [entry.get("question_id") for entry in metadata]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self.squad_metrics.get_metric(reset)
