"""`allennlp predict` for coreference: ``{"document": "raw text"}`` per line in, clusters out.

The text is tokenized with spaCy's rule-based English tokenizer (no model download) and split
into sentences after ``.``, ``!`` or ``?`` tokens (and any closing quotes or brackets right
after them). Optional keys: ``"genre"`` (an OntoNotes genre such as ``nw`` or ``bc``; default
``nw``). Output: ``document`` (the tokens), ``sentences``, ``clusters`` (lists of inclusive
``[start, end]`` token spans over ``document``) and ``cluster_strings`` (their words).

With ``--use-dataset-reader`` the input is a CoNLL-2012 file instead; each output line also has
the document's ``name``.

Memory grows with the document: about ten candidate spans per token, and every sentence padded
to the longest one. Documents over ``max_document_tokens`` tokens (10,000), or whose sentence
count times longest sentence is over ``max_padded_tokens`` (100,000), are refused with an
``InputTooLong`` naming the limit (``--predictor-args`` raises them). At the limits a full-size
model with the shipped biLM peaks under 3 GB (README, "Input limits").
"""

import functools
from typing import Any, Callable, Dict, List, Optional

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import ListField, MetadataField, SequenceLabelField, SpanField
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.coref.names import PREDICTOR
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader
from elmo_tasks.tasks.input_limits import check_at_most, predictor_args
from elmo_tasks.tasks.instance_fields import field_of, items_of
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer

#: The longest document taken, in tokens (OntoNotes' longest are about 2,300).
MAX_DOCUMENT_TOKENS = 10_000
#: The most sentences x longest sentence: the model pads every sentence to the longest one.
MAX_PADDED_TOKENS = 100_000
#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"

SENTENCE_END = {".", "!", "?", "..."}
CLOSERS = {'"', "'", "”", "’", ")", "]", "}", "''"}


def split_sentences(words: List[str]) -> List[List[str]]:
    """Sentences ending after terminal punctuation (plus closing quotes/brackets that follow it)."""
    sentences: List[List[str]] = []
    current: List[str] = []
    ended = False
    for word in words:
        if ended and word not in CLOSERS:
            sentences.append(current)
            current, ended = [], False
        current.append(word)
        if word in SENTENCE_END or (word and set(word) <= {".", "!", "?"}):
            ended = True
    if current:
        sentences.append(current)
    return sentences


def check_document_size(
    sentences: List[List[str]],
    max_document_tokens: int,
    max_padded_tokens: int,
    owner: str,
    raise_with: Optional[Callable[[str, int], str]],
    where: Optional[Callable[[], str]] = None,
) -> None:
    """Raises InputTooLong for a document over either limit (see the module docstring).

    ``raise_with(argument, value)`` says how to raise the limit named ``argument`` to ``value``
    (None: the caller has no option for it).
    """
    tokens = sum(len(sentence) for sentence in sentences)
    advice = "split the document into parts (coreference is then found within each part only)"
    check_at_most(
        tokens,
        max_document_tokens,
        "tokens in the document",
        owner,
        advice,
        raise_with("max_document_tokens", tokens) if raise_with else None,
        where,
    )
    longest = max((len(sentence) for sentence in sentences), default=0)
    check_at_most(
        len(sentences) * longest,
        max_padded_tokens,
        f"padded tokens in the document ({len(sentences):,} sentences x its longest sentence, {longest:,} tokens: "
        "the model pads every sentence to the longest)",
        owner,
        "split its longest sentences",
        raise_with("max_padded_tokens", len(sentences) * longest) if raise_with else None,
        where,
    )


def _padded_tokens(documents: List[Instance]) -> int:
    """Documents x most sentences x longest sentence: the size of the padded batch."""
    sentences = [field_of(instance, "metadata", MetadataField)["sentences"] for instance in documents]
    longest = max((len(sentence) for document in sentences for sentence in document), default=0)
    return len(documents) * max(len(document) for document in sentences) * longest


@Predictor.register(PREDICTOR)
class CorefPredictor(JsonLinesPredictor):
    """Finds coreference clusters in raw English text with a coreference model (``coref_model``)."""

    input_keys = {"document": "the raw text of the document"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        max_document_tokens: int = MAX_DOCUMENT_TOKENS,
        max_padded_tokens: int = MAX_PADDED_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = blank_english_tokenizer()
        self.max_document_tokens = positive_count(max_document_tokens, "max_document_tokens", OWNER)
        self.max_padded_tokens = positive_count(max_padded_tokens, "max_padded_tokens", OWNER)

    def _sentences(self, text: str) -> List[List[str]]:
        return split_sentences([token.ensure_text() for token in self._tokenizer.tokenize(text)])

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then the document's size against the two limits."""
        super().check_input(record, where)
        assert isinstance(record, dict)  # JsonLinesPredictor.check_input raised otherwise
        sentences = self._sentences(record["document"])
        check_document_size(sentences, self.max_document_tokens, self.max_padded_tokens, OWNER, predictor_args, where)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        text = json_dict.get("document")
        if not isinstance(text, str) or not text.strip():
            raise PredictorInputError(
                f"coref input needs a non-empty string field 'document' (and optionally 'genre'); got {json_dict!r}"
            )
        genre = json_dict.get("genre", "nw")
        reader = self._dataset_reader
        assert isinstance(reader, Conll2012CorefReader)  # the coref model reads the fields this reader writes
        instance = reader.text_to_instance(self._sentences(text), genre=str(genre), name="input")
        reader.apply_token_indexers(instance)
        return instance

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted clusters as its gold span labels (for AllenNLP's
        interpretation tools): each candidate span gets its cluster's number, or -1."""
        labeled = instance.duplicate()
        cluster_of = {tuple(span): number for number, cluster in enumerate(outputs["clusters"]) for span in cluster}
        labels = [
            cluster_of.get((span.span_start, span.span_end), -1) for span in items_of(labeled, "spans", SpanField)
        ]
        labeled.add_field("span_labels", SequenceLabelField(labels, field_of(labeled, "spans", ListField)))
        return [labeled]

    @staticmethod
    def _answer(output: Dict[str, Any]) -> Dict[str, Any]:
        return {"clusters": output["clusters"], "cluster_strings": output["cluster_strings"]}

    def _forward(self, instances: List[Instance]) -> List[Dict[str, Any]]:
        """The documents of a ``--batch-size`` batch in passes of at most ``max_padded_tokens``
        padded tokens in all (one document at the limit), in order."""
        outputs: List[Dict[str, Any]] = []
        batch: List[Instance] = []
        for instance in instances:
            if batch and _padded_tokens(batch + [instance]) > self.max_padded_tokens:
                outputs.extend(self._model.forward_on_instances(batch))
                batch = []
            batch.append(instance)
        if batch:
            outputs.extend(self._model.forward_on_instances(batch))
        return outputs

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        instances = self._batch_json_to_instances(inputs)
        outputs = self._forward(instances)
        return [
            sanitize(
                {
                    "document": output["document"],
                    "sentences": field_of(instance, "metadata", MetadataField)["sentences"],
                    **self._answer(output),
                }
            )
            for instance, output in zip(instances, outputs, strict=True)
        ]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        """Documents of a CoNLL-2012 file (``--use-dataset-reader``), checked against the same limits."""
        for instance in instances:
            metadata = field_of(instance, "metadata", MetadataField)
            check_document_size(
                metadata["sentences"],
                self.max_document_tokens,
                self.max_padded_tokens,
                OWNER,
                predictor_args,
                functools.partial("document {!r}".format, metadata.get("name", "")),
            )
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._forward(instances)
        return [
            sanitize({"name": output["name"], "document": output["document"], **self._answer(output)})
            for output in outputs
        ]
