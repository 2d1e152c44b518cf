"""BiLSTM-CRF tagger for CoNLL-2003 NER (Peters et al. 2017, the ELMo paper's NER baseline).

Everything that differs between the baseline and "+ ELMo" lives in the config: ELMo is one
more token embedder in ``text_field_embedder`` (so it is concatenated with the word vectors and
the character CNN at the input of the lowest BiLSTM), and its mixing-weight penalty is the
model's ``regularizer``.
"""

from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.modules.conditional_random_field import ConditionalRandomField, allowed_transitions
from allennlp.modules.token_embedders import TokenCharactersEncoder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask

from elmo_tasks.modules.distinct_words import encode_each_distinct_word_once
from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.ner.crf_likelihood import crf_log_likelihood
from elmo_tasks.tasks.ner.metric import DistributedSpanBasedF1Measure
from elmo_tasks.tasks.ner.names import NAMES, OLD_MODEL
from elmo_tasks.tasks.ner.tags import bioul_to_iob1, entities
from elmo_tasks.tasks.ner.viterbi import allowed_matrix, viterbi_paths
from elmo_tasks.tasks.registration import register_task_model

LOSS_REDUCTIONS = ("sum", "mean")


@register_task_model(NAMES, old_name=OLD_MODEL)
class ElmoCrfTagger(ConfigSizedModel):
    """Embed tokens, run a BiLSTM, score tags per token, decode with a constrained CRF.

    # Parameters
    text_field_embedder : word vectors, character CNN and (optionally) ELMo, concatenated.
    encoder : the BiLSTM stack (2 layers in the paper).
    label_namespace : vocabulary namespace of the tags (the ``conll2003`` reader's ``labels``).
    label_encoding : tag scheme the model predicts; BIOUL as in the paper. Constrains the CRF's
        transitions and tells the span F1 metric how to read spans.
    dropout : on the embedded input and on the encoder output.
    feedforward : optional layer between the encoder and the tag scores.

    From a config (``from_partial_objects``) the encoder is given WITHOUT ``input_size`` and the
    feedforward without ``input_dim``: they are the embedder's and the encoder's output widths,
    which depend on the biLM's options file when ELMo is used.

    decode_during_training : Viterbi-decode the training batches too, for the span F1 on the training
        data. Off by default: the loss does not need the paths, and decoding each sentence in
        Python took about a sixth of a training run (docs/BENCHMARKS.md). Validation, evaluation
        and prediction (the model in eval mode) always decode.

    loss_reduction : how the CRF's negative log-likelihoods of a batch's sentences make its loss.
        ``"sum"``, as AllenNLP's CRF tagger and the paper's recipe (where the lambda = 0.1 penalty
        on ELMo's mixing weights is weighed against a batch's summed loss); ``"mean"`` divides by the
        number of sentences, which makes the penalty batch-size times stronger relative to the data
        (the mini budget's records before 2026-11-29 were trained so).

    Outputs: ``logits``, ``mask`` and, whenever decoded, ``tags`` (the Viterbi path of each
    sentence, tag ids; tag strings after ``make_output_human_readable``).
    """

    sized_layers = ("encoder", "feedforward")
    allowed_transitions: torch.Tensor  # a buffer: which tag may follow which, start and end included

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        label_namespace: str = "labels",
        label_encoding: str = "BIOUL",
        dropout: float = 0.5,
        feedforward: Optional[FeedForward] = None,
        include_start_end_transitions: bool = True,
        decode_during_training: bool = False,
        loss_reduction: str = "sum",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        check_dimensions_match(
            text_field_embedder.get_output_dim(),
            encoder.get_input_dim(),
            "the text_field_embedder's output dim",
            "the encoder's input_size (leave it out of the encoder's config: the model derives it)",
        )
        if feedforward is not None:
            check_dimensions_match(
                encoder.get_output_dim(),
                feedforward.get_input_dim(),
                "the encoder's output dim",
                "the feedforward's input_dim (leave it out of the config: the model derives it)",
            )
        if loss_reduction not in LOSS_REDUCTIONS:
            raise ConfigurationError(
                f"loss_reduction must be one of {', '.join(LOSS_REDUCTIONS)}, got {loss_reduction!r}"
            )
        self.loss_reduction = loss_reduction
        self.label_namespace = label_namespace
        self.label_encoding = label_encoding
        self.decode_during_training = decode_during_training
        self.text_field_embedder = text_field_embedder
        for module in text_field_embedder.modules():
            if isinstance(module, TokenCharactersEncoder):
                encode_each_distinct_word_once(module)  # the same outputs, a fraction of the work
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(dropout)
        self.feedforward = feedforward
        hidden_dim = feedforward.get_output_dim() if feedforward else encoder.get_output_dim()
        labels = vocab.get_index_to_token_vocabulary(label_namespace)
        if not labels:
            raise ConfigurationError(
                f"the vocabulary has no tags in namespace '{label_namespace}': set label_namespace to the "
                "namespace of the reader's tag field (the conll2003 reader's is 'labels')"
            )
        self.num_tags = len(labels)
        self.tag_projection = TimeDistributed(torch.nn.Linear(hidden_dim, self.num_tags))
        allowed = allowed_transitions(label_encoding, labels)
        self.crf = ConditionalRandomField(
            self.num_tags, constraints=allowed, include_start_end_transitions=include_start_end_transitions
        )
        # the same constraints for the batched Viterbi (not saved: archives keep the CRF's own)
        self.register_buffer("allowed_transitions", allowed_matrix(allowed, self.num_tags), persistent=False)
        # summed over the workers in distributed training (AllenNLP's SpanBasedF1Measure refuses to)
        self.span_f1 = DistributedSpanBasedF1Measure(
            vocab, tag_namespace=label_namespace, label_encoding=label_encoding
        )
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """The encoder reads the embedder's output (an RNN-style ``input_size``), the feedforward, if
        any, the encoder's."""
        encoder = config.build("encoder", input_size=config.embedding_dim)
        config.build("feedforward", input_dim=encoder.get_output_dim())

    def forward(  # type: ignore[override]  # why: Model.forward declares *inputs; AllenNLP passes fields by name
        self,
        tokens: TextFieldTensors,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        **kwargs: Any,
    ) -> Dict[str, Any]:
        """``tokens`` from the reader's TextField, ``tags`` (batch, tokens) gold tag ids when known.

        Extra reader fields (e.g. POS tags as features) are accepted and ignored.
        """
        mask = get_text_field_mask(tokens)
        embedded = self.dropout(self.text_field_embedder(tokens))
        encoded = self.dropout(self.encoder(embedded, mask))
        if self.feedforward is not None:
            encoded = self.feedforward(encoded)
        logits = self.tag_projection(encoded)
        output: Dict[str, Any] = {"logits": logits, "mask": mask}
        if tags is not None:
            summed = -crf_log_likelihood(self.crf, logits, tags, mask)  # self.crf's likelihood, faster
            output["loss"] = summed / logits.size(0) if self.loss_reduction == "mean" else summed
        if not self.training or self.decode_during_training:
            best_paths = viterbi_paths(self.crf, self.allowed_transitions, logits, mask)  # crf.viterbi_tags' paths
            output["tags"] = best_paths
            if tags is not None:
                self.span_f1(self._one_hot_paths(logits, best_paths), tags, mask)
        if metadata is not None:
            output["words"] = [item["words"] for item in metadata]
        return output

    @staticmethod
    def _one_hot_paths(logits: torch.Tensor, paths: List[List[int]]) -> torch.Tensor:
        """The span metric takes scores; a one-hot of each Viterbi path makes its argmax that path."""
        decoded = torch.zeros_like(logits)
        for row, path in enumerate(paths):
            decoded[row, torch.arange(len(path)), torch.tensor(path, dtype=torch.long)] = 1.0
        return decoded

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Tag ids to strings in ``tags``; for BIOUL models also CoNLL's IOB1 (``iob1_tags``) and
        ``entities``."""
        tag_strings = [
            [self.vocab.get_token_from_index(int(tag), self.label_namespace) for tag in path]
            for path in output_dict["tags"]
        ]
        output_dict["tags"] = tag_strings
        # Scores are of no use to readers of predictions and make the output large.
        output_dict.pop("logits", None)
        output_dict.pop("mask", None)
        if self.label_encoding == "BIOUL":
            output_dict["iob1_tags"] = [bioul_to_iob1(path) for path in tag_strings]
            if "words" in output_dict:
                output_dict["entities"] = [
                    entities(words, path) for words, path in zip(output_dict["words"], tag_strings, strict=True)
                ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        """Span precision/recall/F1 per type and ``*-overall`` (conlleval's numbers, as fractions);
        none while training without ``decode_during_training`` (no paths, so no spans to count)."""
        if self.training and not self.decode_during_training:
            return {}
        return self.span_f1.get_metric(reset=reset)
