"""The biattentive classification network (BCN) of McCann et al. (2017), the ELMo paper's SST model.

For a single sentence the "biattention" is self-attention: the sentence X attends to itself,
``Y = softmax(X X^T) X``, and the integrator BiLSTM reads ``[X; X - Y; X * Y]``. With
``elmo_at_output`` the integrator's output is concatenated with a second, independent ELMo mix of
the same biLM pass (Peters et al. 2018, section 3.3) before pooling: ``ElmoAtOutput.embed`` returns
it with the embedded sentence.
"""

from typing import Any, Dict, List, Optional, Sequence, Union, cast

import torch
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.matrix_attention import DotProductMatrixAttention
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy

from elmo_tasks.modules.elmo_at_output import ElmoAtOutput, accept_state_dicts_with_elmo_twice, embed_text, output_dim
from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.registration import register_task_model
from elmo_tasks.tasks.sst.labels import class_names
from elmo_tasks.tasks.sst.names import MODEL, NAMES, OLD_MODEL
from elmo_tasks.tasks.sst.pooling import POOLINGS, MultiPooling


@register_task_model(NAMES, old_name=OLD_MODEL)
class BiattentiveClassifier(ConfigSizedModel):
    """Sentence classifier: embed -> ReLU feedforward -> BiLSTM -> self-biattention -> BiLSTM
    integrator (+ ELMo) -> max/min/mean/self-attentive pooling -> feedforward -> classes.

    # Parameters
    text_field_embedder : embeds ``tokens`` (word embeddings and/or ``fast_elmo``).
    pre_encode_feedforward : applied to every token before the encoder (use ReLU).
    encoder : a bidirectional Seq2SeqEncoder (X).
    integrator : a Seq2SeqEncoder over ``[X; X - Y; X * Y]``; input dim must be 3x the encoder's.
    feedforward : optional hidden layers of the head; a linear layer to ``num_classes`` follows.
    num_classes : 5 for SST-5, 2 for binary SST.
    embedding_dropout, integrator_dropout : dropout after embedding (ELMo's input mix included) / on
        the pooled vector (the integrator's output and ELMo's output mix, pooled).
    poolings : which of ``max``, ``min``, ``mean``, ``self_attentive`` to concatenate.
    elmo_at_output : concatenate the second mix of the ``fast_elmo`` embedder inside
        ``text_field_embedder`` to the integrator output (needs ``num_output_representations >= 2``).
        True in a config; ``from_partial_objects`` builds the ``ElmoAtOutput`` once and passes it on.

    From a config (``from_partial_objects``), leave the input sizes out of ``pre_encode_feedforward``,
    ``encoder``, ``integrator`` and ``feedforward``: they are filled in from the embedder (whose
    width depends on the biLM chosen at run time, ELMO_OPTIONS), the layer before, and the pooled
    size, so the same config works with any biLM and one ``-o`` changes one size.

    Output: ``label_logits`` and ``label_probs`` (batch, classes); ``make_output_human_readable``
    adds ``label``, the class name (e.g. "very positive").
    """

    sized_layers = ("pre_encode_feedforward", "encoder", "integrator", "feedforward")

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        pre_encode_feedforward: FeedForward,
        encoder: Seq2SeqEncoder,
        integrator: Seq2SeqEncoder,
        feedforward: Optional[FeedForward] = None,
        num_classes: int = 5,
        embedding_dropout: float = 0.5,
        integrator_dropout: float = 0.1,
        poolings: Sequence[str] = POOLINGS,
        elmo_at_output: Union[bool, ElmoAtOutput, None] = False,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        self.class_names = class_names(num_classes)
        self.num_classes = num_classes
        self.text_field_embedder = text_field_embedder
        self.pre_encode_feedforward = pre_encode_feedforward
        self.encoder = encoder
        self.integrator = integrator
        self.feedforward = feedforward
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout)
        self.integrator_dropout = torch.nn.Dropout(integrator_dropout)
        self.self_attention = DotProductMatrixAttention()
        self._elmo_at_output = ElmoAtOutput.for_model(elmo_at_output, text_field_embedder, MODEL)
        accept_state_dicts_with_elmo_twice(self)

        check_dimensions_match(
            text_field_embedder.get_output_dim(),
            pre_encode_feedforward.get_input_dim(),
            "text field embedder output",
            "pre_encode_feedforward input",
        )
        check_dimensions_match(
            pre_encode_feedforward.get_output_dim(),
            encoder.get_input_dim(),
            "pre_encode_feedforward output",
            "encoder input",
        )
        check_dimensions_match(
            3 * encoder.get_output_dim(),
            integrator.get_input_dim(),
            "3 x encoder output ([X; X-Y; X*Y])",
            "integrator input",
        )
        pooled_input_dim = integrator.get_output_dim() + output_dim(self._elmo_at_output)
        self.pooling = MultiPooling(pooled_input_dim, poolings)
        head_input_dim = self.pooling.get_output_dim()
        if feedforward is not None:
            check_dimensions_match(head_input_dim, feedforward.get_input_dim(), "pooled output", "feedforward input")
            head_input_dim = feedforward.get_output_dim()
        self.classification_layer = torch.nn.Linear(head_input_dim, num_classes)
        self.accuracy = CategoricalAccuracy()
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """Each layer once its input size is known: the integrator reads ``[X; X - Y; X * Y]``, 3x the
        encoder's output; the head, if any, every pooling of the integrator's output [+ ELMo's output mix]."""
        pre_encode = config.build("pre_encode_feedforward", input_dim=config.embedding_dim)
        encoder = config.build("encoder", input_size=pre_encode.get_output_dim())
        integrator = config.build("integrator", input_size=3 * encoder.get_output_dim())
        pooled_dim = integrator.get_output_dim() + config.elmo_at_output_dim(MODEL)
        config.build("feedforward", input_dim=pooled_dim * len(config.setting("poolings")))

    def forward(
        self,
        tokens: TextFieldTensors,
        label: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        mask = util.get_text_field_mask(tokens)
        embedded, elmo_output = embed_text(self.text_field_embedder, self._elmo_at_output, tokens)

        x = self.pre_encode_feedforward(self.embedding_dropout(embedded))
        encoded = self.encoder(x, mask)
        scores = self.self_attention(encoded, encoded)
        weights = util.masked_softmax(scores, cast(torch.BoolTensor, mask.unsqueeze(1)))
        attended = util.weighted_sum(encoded, weights)
        integrator_input = torch.cat([encoded, encoded - attended, encoded * attended], dim=-1)
        integrated = self.integrator(integrator_input, mask)
        if elmo_output is not None:
            integrated = torch.cat([integrated, elmo_output], dim=-1)

        # Dropout on the pooled vector, as AllenNLP's BCN: the one dropout ELMo's output mix gets.
        pooled = self.integrator_dropout(self.pooling(integrated, mask))
        hidden = self.feedforward(pooled) if self.feedforward is not None else pooled
        logits = self.classification_layer(hidden)
        output = {"label_logits": logits, "label_probs": torch.softmax(logits, dim=-1)}
        if metadata is not None:
            output["words"] = [m["words"] for m in metadata]
        if label is not None:
            if int(label.max()) >= self.num_classes or int(label.min()) < 0:
                raise ConfigurationError(
                    f"labels must be 0..{self.num_classes - 1} but the batch holds {label.tolist()}; "
                    "for binary SST set the reader's binary=true AND the model's num_classes=2"
                )
            output["loss"] = torch.nn.functional.cross_entropy(logits, label.long())
            self.accuracy(logits, label)
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds ``label``: the class name of each prediction (e.g. "very positive")."""
        probs = output_dict["label_probs"]
        rows = probs if probs.dim() == 2 else probs.unsqueeze(0)
        output_dict["label"] = [self.class_names[index] for index in rows.argmax(dim=-1).tolist()]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset)}
