"""ESIM (Chen et al. 2017) for SNLI, with ELMo at its input and, optionally, at its output.

Peters et al. (2018, appendix A.3) add ELMo to "the input and output of the lowest layer LSTM": at the
input (as a token embedder inside the ``text_field_embedder``) and at the output of the input-encoding
BiLSTM, before the attention. The second is another scalar mix of the SAME biLM pass:
``ElmoAtOutput.embed`` returns each sentence's embedding together with it, and it is concatenated to
the encoded sentence, so the soft alignment, the enhancement and the projection read it. With
``elmo_at_output=False`` and no ELMo in the embedder this is the plain ESIM baseline.
"""

from typing import Any, Dict, List, Optional, Union, cast

import torch
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.input_variational_dropout import InputVariationalDropout
from allennlp.modules.matrix_attention import DotProductMatrixAttention, MatrixAttention
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask, masked_max, masked_mean, masked_softmax, weighted_sum
from allennlp.training.metrics import CategoricalAccuracy

from elmo_tasks.modules.elmo_at_output import ElmoAtOutput, accept_state_dicts_with_elmo_twice, embed_text, output_dim
from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.registration import register_task_model
from elmo_tasks.tasks.snli.names import MODEL, NAMES, OLD_MODEL


@register_task_model(NAMES, old_name=OLD_MODEL)
class EsimElmo(ConfigSizedModel):
    """Enhanced Sequential Inference Model; 3-way classification of (premise, hypothesis).

    # Parameters
    text_field_embedder : embeds both sentences (word embeddings and/or ELMo).
    encoder : input-encoding BiLSTM, shared by premise and hypothesis.
    projection_feedforward : maps the enhanced ``[a; a~; a - a~; a * a~]`` back down (ReLU).
    inference_encoder : inference-composition BiLSTM.
    output_feedforward : the tanh hidden layer(s) of the classifier; a linear layer to the
        labels follows it.
    matrix_attention : scores every premise word against every hypothesis word for the soft
        alignment; default dot product, as in ESIM.
    elmo_at_output : concatenate ELMo's second mix to the input encoder's output, before the
        attention (the paper's place); needs a ``fast_elmo`` embedder with
        ``num_output_representations >= 2``. True in a config; ``from_partial_objects`` builds the
        ``ElmoAtOutput`` once and passes it on.
    dropout : on embeddings and composition inputs (variational, i.e. one mask per sequence)
        and on the pooled vector.
    attention_dropout : dropout on what the attention gives the projection, the enhanced vectors
        ``[a; a~; a - a~; a * a~]``: the paper's "50% dropout after the attention layer", which it
        adds with ELMo (appendix A.3). 0 (the default) leaves them as ESIM has them.

    From a config (``from_partial_objects``), ``encoder``, ``projection_feedforward``,
    ``inference_encoder`` and ``output_feedforward`` are given without their input sizes: they
    follow from the embedder (ELMo's width comes from the biLM's options file) and from the
    encoder's size, so the model fills them in and one ``-o`` changes one size.

    Output: ``label_logits`` and ``label_probs`` (batch, labels); ``make_output_human_readable``
    adds ``label``, the predicted label's name.
    """

    sized_layers = ("encoder", "projection_feedforward", "inference_encoder", "output_feedforward")

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        projection_feedforward: FeedForward,
        inference_encoder: Seq2SeqEncoder,
        output_feedforward: FeedForward,
        elmo_at_output: Union[bool, ElmoAtOutput, None] = False,
        dropout: float = 0.5,
        attention_dropout: float = 0.0,
        label_namespace: str = "labels",
        matrix_attention: Optional[MatrixAttention] = None,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        self.text_field_embedder = text_field_embedder
        self.encoder = encoder
        self.matrix_attention = matrix_attention or DotProductMatrixAttention()
        self.projection_feedforward = projection_feedforward
        self.inference_encoder = inference_encoder
        self.output_feedforward = output_feedforward
        self.label_namespace = label_namespace
        self.num_labels = vocab.get_vocab_size(label_namespace)
        self.output_logit = torch.nn.Linear(output_feedforward.get_output_dim(), self.num_labels)
        self.sequence_dropout = InputVariationalDropout(dropout)
        self.dropout = torch.nn.Dropout(dropout)
        self.attention_dropout = torch.nn.Dropout(attention_dropout)
        self._elmo_at_output = ElmoAtOutput.for_model(elmo_at_output, text_field_embedder, MODEL)
        accept_state_dicts_with_elmo_twice(self)

        check_dimensions_match(
            text_field_embedder.get_output_dim(),
            encoder.get_input_dim(),
            "text field embedding dim",
            "encoder input dim",
        )
        encoded = encoder.get_output_dim() + output_dim(self._elmo_at_output)
        check_dimensions_match(
            4 * encoded,
            projection_feedforward.get_input_dim(),
            "4 * (encoder output dim [+ ELMo dim])",
            "projection feedforward input dim",
        )
        check_dimensions_match(
            projection_feedforward.get_output_dim(),
            inference_encoder.get_input_dim(),
            "projection feedforward output dim",
            "inference encoder input dim",
        )
        check_dimensions_match(
            4 * inference_encoder.get_output_dim(),
            output_feedforward.get_input_dim(),
            "4 * inference encoder output dim",
            "output feedforward input dim",
        )
        self.accuracy = CategoricalAccuracy()
        self.loss = torch.nn.CrossEntropyLoss()
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """``encoder`` reads the embedding, the projection ``[a; a~; a - a~; a * a~]`` (4x the encoder's
        output [+ ELMo's output mix]), the inference encoder the projection's output and the output
        feedforward the four pooled vectors (4x the composition's width)."""
        encoder = config.build("encoder", input_size=config.embedding_dim)
        encoded = encoder.get_output_dim() + config.elmo_at_output_dim(MODEL)
        projection = config.build("projection_feedforward", input_dim=4 * encoded)
        inference = config.build("inference_encoder", input_size=projection.get_output_dim())
        config.build("output_feedforward", input_dim=4 * inference.get_output_dim())

    def forward(
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        premise_mask = get_text_field_mask(premise)
        hypothesis_mask = get_text_field_mask(hypothesis)
        # Embedding, and ELMo's output mix of each sentence (None without ELMo at the output).
        embedded_p, elmo_p = embed_text(self.text_field_embedder, self._elmo_at_output, premise)
        embedded_h, elmo_h = embed_text(self.text_field_embedder, self._elmo_at_output, hypothesis)

        # Input encoding (+ ELMo at its output: the paper's "output of the lowest layer LSTM").
        encoded_p = self.encoder(self.sequence_dropout(embedded_p), premise_mask)
        encoded_h = self.encoder(self.sequence_dropout(embedded_h), hypothesis_mask)
        if elmo_p is not None and elmo_h is not None:
            encoded_p = torch.cat([encoded_p, elmo_p], dim=-1)
            encoded_h = torch.cat([encoded_h, elmo_h], dim=-1)

        # Soft alignment: each word attends over the other sentence.
        similarity = self.matrix_attention(encoded_p, encoded_h)  # (batch, len_p, len_h)
        p2h = masked_softmax(similarity, hypothesis_mask)
        aligned_p = weighted_sum(encoded_h, p2h)  # hypothesis summary for each premise word
        h2p = masked_softmax(similarity.transpose(1, 2).contiguous(), premise_mask)
        aligned_h = weighted_sum(encoded_p, h2p)

        # Enhancement and projection.
        enhanced_p = torch.cat([encoded_p, aligned_p, encoded_p - aligned_p, encoded_p * aligned_p], dim=-1)
        enhanced_h = torch.cat([encoded_h, aligned_h, encoded_h - aligned_h, encoded_h * aligned_h], dim=-1)
        projected_p = self.projection_feedforward(self.attention_dropout(enhanced_p))
        projected_h = self.projection_feedforward(self.attention_dropout(enhanced_h))

        # Inference composition.
        composed_p = self.inference_encoder(self.sequence_dropout(projected_p), premise_mask)
        composed_h = self.inference_encoder(self.sequence_dropout(projected_h), hypothesis_mask)

        # Pooling: average and max over each sentence.
        premise_word_mask = cast(torch.BoolTensor, premise_mask.unsqueeze(-1))
        hypothesis_word_mask = cast(torch.BoolTensor, hypothesis_mask.unsqueeze(-1))
        pooled = torch.cat(
            [
                masked_mean(composed_p, premise_word_mask, dim=1),
                masked_max(composed_p, premise_word_mask, dim=1),
                masked_mean(composed_h, hypothesis_word_mask, dim=1),
                masked_max(composed_h, hypothesis_word_mask, dim=1),
            ],
            dim=-1,
        )
        hidden = self.output_feedforward(self.dropout(pooled))
        logits = self.output_logit(hidden)
        output: Dict[str, Any] = {"label_logits": logits, "label_probs": torch.softmax(logits, dim=-1)}
        if label is not None:
            output["loss"] = self.loss(logits, label.long().view(-1))
            self.accuracy(logits, label)
        if metadata is not None:
            output["metadata"] = metadata
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds ``label``: the name of the most probable label of each pair."""
        probs = output_dict["label_probs"]
        rows = probs if probs.dim() == 2 else probs.unsqueeze(0)
        output_dict["label"] = [
            self.vocab.get_token_from_index(int(index), self.label_namespace) for index in rows.argmax(dim=-1)
        ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset)}
