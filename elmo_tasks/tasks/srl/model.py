"""He et al. (2017)'s deep highway BiLSTM tagger for SRL, with ELMo at the input as configuration.

Per predicate: word vectors (and, for "+ ELMo", the ELMo vector of each word) concatenated with
an embedding of the binary predicate indicator, a stack of LSTMs whose directions alternate from
layer to layer with highway connections and recurrent dropout (AllenNLP's
``StackedAlternatingLstm``, ``alternating_lstm`` in configs; the paper's recipe uses
``variational_alternating_lstm``, with He et al.'s dropout of each layer's output), a per-token softmax over BIO tags
trained with cross-entropy (per sentence, the words' negative log-likelihoods summed, as He et
al.'s code does, or averaged: ``sentence_loss``), and at prediction time Viterbi decoding
constrained to valid BIO sequences (``I-X`` only after ``B-X`` or ``I-X``).

ELMo sees the sentence only, not the predicate, so all predicates of one sentence share one
biLM pass: ``fast_elmo``'s layer cache runs the biLM once per distinct sentence (also within a
batch) when the biLM is frozen.
"""

from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.modules.conditional_random_field import allowed_transitions
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import (
    get_lengths_from_binary_sequence_mask,
    get_text_field_mask,
    sequence_cross_entropy_with_logits,
    viterbi_decode,
)

from elmo_tasks.tasks.config_sized_model import ConfigArguments, ConfigSizedModel
from elmo_tasks.tasks.registration import register_task_model
from elmo_tasks.tasks.srl.metric import SrlEvalMetric
from elmo_tasks.tasks.srl.names import MODEL, NAMES, OLD_MODEL, READER
from elmo_tasks.tasks.srl.props import bio_to_start_end
from elmo_tasks.tasks.srl.reader import ROLE_NAMESPACE

#: ``sentence_loss`` values: how a sentence's per-word losses combine.
SENTENCE_LOSSES = ("mean", "sum")


@register_task_model(NAMES, old_name=OLD_MODEL)
class SrlElmo(ConfigSizedModel):
    sized_layers = ("encoder",)
    """BIO tagger for the arguments of one predicate.

    # Parameters
    text_field_embedder : word vectors and (optionally) ``fast_elmo``, concatenated.
    encoder : the deep BiLSTM (``alternating_lstm``: 8 layers of 300 units in the paper). From a
        config it is given without ``input_size``: that is the embedder's width plus
        ``predicate_embedding_dim``.
    predicate_embedding_dim : width of the learned embedding of the 0/1 predicate indicator.
    embedding_dropout : dropout on the concatenated input.
    sentence_loss : how a sentence's per-word negative log-likelihoods make its loss (a batch's loss is
        the mean over its sentences either way). ``"sum"``: the negative log-likelihood of the
        sentence's tag sequence, as He et al. (2017)'s code (deep_srl) trains and the paper's
        recipe says; ``"mean"`` (the default, AllenNLP's ``sequence_cross_entropy_with_logits`` as
        allennlp-models' SRL model uses it) divides each sentence's sum by its length, so the words
        of a short sentence weigh more (the mini budget's records were trained so).
    label_namespace : vocabulary namespace of the BIO tags (``srl_roles``, a namespace with an
        unknown-tag entry, so a rare role seen only in dev or test does not stop evaluation; the
        metric scores the gold props themselves, and constrained decoding never predicts the
        padding or unknown entries).

    Outputs: ``logits``, ``class_probabilities``, ``mask`` and, outside training, ``tags`` (the
    constrained Viterbi path of each row, tag ids: decoding every training batch would slow
    training down). ``make_output_human_readable`` turns ``tags`` into tag strings (decoding first
    if need be), adds ``props`` (the same as a props column) and ``description``
    (``[ARG0: The cat] [V: chased] ...``), and drops the scores.
    """

    # buffers (not saved): the allowed BIO transitions and starts, for constrained decoding
    _transitions: torch.Tensor
    _start_transitions: torch.Tensor

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        predicate_embedding_dim: int = 100,
        embedding_dropout: float = 0.0,
        sentence_loss: str = "mean",
        label_namespace: str = ROLE_NAMESPACE,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        # kwargs: the arguments of every AllenNLP Model (regularizer, serialization_dir, ddp_accelerator)
        super().__init__(vocab, **kwargs)
        check_dimensions_match(
            text_field_embedder.get_output_dim() + predicate_embedding_dim,
            encoder.get_input_dim(),
            "the text_field_embedder's output dim plus predicate_embedding_dim",
            "the encoder's input_size (leave it out of the encoder's config: the model derives it)",
        )
        if sentence_loss not in SENTENCE_LOSSES:
            raise ConfigurationError(
                f"{MODEL}: sentence_loss must be one of {', '.join(SENTENCE_LOSSES)}, got {sentence_loss!r}"
            )
        self.sentence_loss = sentence_loss
        self.text_field_embedder = text_field_embedder
        self.predicate_embedding = torch.nn.Embedding(2, predicate_embedding_dim)
        self.encoder = encoder
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout)
        self.label_namespace = label_namespace
        labels = vocab.get_index_to_token_vocabulary(label_namespace)
        if not labels:
            raise ConfigurationError(
                f"{MODEL}: the vocabulary has no tags in namespace '{label_namespace}': set label_namespace to "
                f"the namespace of the reader's tag field ({READER}'s is '{ROLE_NAMESPACE}')"
            )
        self.num_tags = len(labels)
        self.tag_projection = TimeDistributed(torch.nn.Linear(encoder.get_output_dim(), self.num_tags))
        transitions, start = self.bio_constraints(labels)
        self.register_buffer("_transitions", transitions, persistent=False)
        self.register_buffer("_start_transitions", start, persistent=False)
        self.srl_eval = SrlEvalMetric()
        initializer(self)

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """The encoder reads the embedder's output and the predicate embedding beside it."""
        config.build("encoder", input_size=config.embedding_dim + config.setting("predicate_embedding_dim"))

    @staticmethod
    def bio_constraints(labels: Dict[int, str]):
        """(num_tags x num_tags, num_tags) log-potentials: 0 where BIO allows the transition (or the
        first tag), -inf where it does not (``I-X`` after anything but ``B-X``/``I-X``)."""
        num_tags = len(labels)
        transitions = torch.full((num_tags, num_tags), float("-inf"))
        start = torch.full((num_tags,), float("-inf"))
        for previous, following in allowed_transitions("BIO", labels):
            if previous < num_tags and following < num_tags:
                transitions[previous, following] = 0.0
            elif previous == num_tags and following < num_tags:  # the START pseudo-tag
                start[following] = 0.0
        return transitions, start

    def forward(
        self,
        tokens: TextFieldTensors,
        predicate_indicator: torch.LongTensor,
        tags: Optional[torch.LongTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        mask = get_text_field_mask(tokens)
        embedded = self.text_field_embedder(tokens)
        predicate = self.predicate_embedding(predicate_indicator.long())
        encoder_input = self.embedding_dropout(torch.cat([embedded, predicate], dim=-1))
        encoded = self.encoder(encoder_input, mask)
        logits = self.tag_projection(encoded)
        probabilities = torch.softmax(logits, dim=-1)
        output: Dict[str, Any] = {"logits": logits, "class_probabilities": probabilities, "mask": mask}
        if not self.training:
            output["tags"] = self.decode_paths(probabilities, mask)
        if tags is not None:
            output["loss"] = self.tag_loss(logits, tags, mask)
            if "tags" in output and metadata is not None and "gold_props" in metadata[0]:
                self.srl_eval(self.tag_strings(output["tags"]), [item["gold_props"] for item in metadata])
        if metadata is not None:
            output["words"] = [item["words"] for item in metadata]
            output["predicate_index"] = [item["predicate_index"] for item in metadata]
        return output

    def tag_loss(self, logits: torch.FloatTensor, tags: torch.LongTensor, mask: torch.BoolTensor) -> torch.Tensor:
        """The batch's loss: the mean over its sentences of each sentence's summed or averaged (per
        ``sentence_loss``) per-word negative log-likelihoods."""
        if self.sentence_loss == "mean":
            return sequence_cross_entropy_with_logits(logits, tags, mask)
        log_probabilities = torch.log_softmax(logits, dim=-1)
        word_losses = -log_probabilities.gather(-1, tags.unsqueeze(-1)).squeeze(-1) * mask
        sentences = mask.any(dim=1)
        return word_losses.sum(dim=1).sum() / sentences.sum().clamp(min=1)

    def decode_paths(self, probabilities: torch.Tensor, mask: torch.BoolTensor) -> List[List[int]]:
        """The best valid BIO path of each row (Viterbi over log-probabilities)."""
        lengths = get_lengths_from_binary_sequence_mask(mask).tolist()
        log_probabilities = torch.log(probabilities.detach().cpu().clamp_min(1e-30))
        transitions, start = self._transitions.cpu(), self._start_transitions.cpu()
        paths = []
        for row, length in enumerate(lengths):
            path, _score = viterbi_decode(log_probabilities[row, :length], transitions, allowed_start_transitions=start)
            paths.append(path)
        return paths

    def tag_strings(self, paths: List[List[int]]) -> List[List[str]]:
        """Tag ids to tag strings, row by row."""
        return [[self.vocab.get_token_from_index(tag, self.label_namespace) for tag in path] for path in paths]

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """``tags`` as strings, and ``props`` and (when the words are known) ``description`` per row."""
        paths = output_dict.get("tags")
        if paths is None:  # an output of training mode
            paths = self.decode_paths(output_dict["class_probabilities"], output_dict["mask"])
        tags = self.tag_strings(paths)
        output_dict["tags"] = tags
        output_dict["props"] = [bio_to_start_end(row) for row in tags]
        if "words" in output_dict:
            output_dict["description"] = [
                describe(words, row) for words, row in zip(output_dict["words"], tags, strict=True)
            ]
        for key in ("logits", "class_probabilities", "mask"):
            output_dict.pop(key, None)
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        """srl-eval precision/recall/F1 (``*-overall`` and per label) over the evaluated batches.

        Only computed outside training (decoding every training batch would slow training down),
        so training reports only the loss.
        """
        if self.training:
            return {}
        return self.srl_eval.get_metric(reset=reset)


def describe(words: List[str], tags: List[str]) -> str:
    """``[ARG0: The cat] [V: chased] [ARG1: the mouse] .`` from words and BIO tags."""
    pieces: List[str] = []
    current: List[str] = []
    label = None

    def flush() -> None:
        if label is not None:
            pieces.append(f"[{label}: {' '.join(current)}]")

    for word, tag in zip(words, tags, strict=False):
        if tag.startswith("I-") and label == tag[2:]:
            current.append(word)
            continue
        flush()
        if tag == "O":
            label, current = None, []
            pieces.append(word)
        else:
            label, current = tag[2:], [word]
    flush()
    return " ".join(pieces)
