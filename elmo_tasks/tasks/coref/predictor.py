"""`allennlp predict` for coreference: ``{"document": "raw text"}`` per line in, clusters out.

The text is tokenized with spaCy's rule-based English tokenizer (no model download) and split
into sentences after ``.``, ``!`` or ``?`` tokens (and any closing quotes or brackets right
after them). Optional keys: ``"genre"`` (an OntoNotes genre such as ``nw`` or ``bc``; default
``nw``). Output: ``document`` (the tokens), ``sentences``, ``clusters`` (lists of inclusive
``[start, end]`` token spans over ``document``) and ``cluster_strings`` (their words).

With ``--use-dataset-reader`` the input is a CoNLL-2012 file instead; each output line also has
the document's ``name``.
"""

from typing import Any, Dict, List

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import SequenceLabelField
from allennlp.predictors import Predictor

from elmo_tasks.tasks.predictor_input import JsonLinesPredictor
from elmo_tasks.tokenization import blank_english_tokenizer

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


@Predictor.register("coref")
class CorefPredictor(JsonLinesPredictor):
    """Finds coreference clusters in raw English text with a ``coref_elmo`` model."""

    input_keys = {"document": "the raw text of the document"}

    def __init__(self, model, dataset_reader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = blank_english_tokenizer()

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        text = json_dict.get("document")
        if not isinstance(text, str) or not text.strip():
            raise ConfigurationError(
                f"coref input needs a non-empty string field 'document' (and optionally 'genre'); got {json_dict!r}"
            )
        words = [token.text for token in self._tokenizer.tokenize(text)]
        genre = json_dict.get("genre", "nw")
        instance = self._dataset_reader.text_to_instance(split_sentences(words), genre=str(genre), name="input")
        self._dataset_reader.apply_token_indexers(instance)
        return instance

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted clusters as its gold span labels (for AllenNLP's
        interpretation tools): each candidate span gets its cluster's number, or -1."""
        labeled = instance.duplicate()
        cluster_of = {tuple(span): number for number, cluster in enumerate(outputs["clusters"]) for span in cluster}
        spans = labeled["spans"]
        labels = [cluster_of.get((span.span_start, span.span_end), -1) for span in spans.field_list]
        labeled.add_field("span_labels", SequenceLabelField(labels, spans))
        return [labeled]

    @staticmethod
    def _answer(output: Dict[str, Any]) -> Dict[str, Any]:
        return {"clusters": output["clusters"], "cluster_strings": output["cluster_strings"]}

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        instances = self._batch_json_to_instances(inputs)
        outputs = self._model.forward_on_instances(instances)
        return [
            sanitize(
                {"document": output["document"], "sentences": instance["metadata"]["sentences"], **self._answer(output)}
            )
            for instance, output in zip(instances, outputs)
        ]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances)
        return [
            sanitize({"name": output["name"], "document": output["document"], **self._answer(output)})
            for output in outputs
        ]
