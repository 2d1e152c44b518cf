"""``allennlp predict`` for the NER tagger: raw sentences in, tags and entity spans out."""

from typing import Callable, Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import SequenceLabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from elmo_tasks.tasks.input_limits import check_sentence_tokens, forward_in_bounded_batches, positive_limit
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer

#: The longest sentence taken, in tokens (the tagger is linear in length: about 1.6 GB at the limit).
MAX_SENTENCE_TOKENS = 10_000


@Predictor.register("ner_tagger")
class NerTaggerPredictor(JsonLinesPredictor):
    """Input lines ``{"sentence": "raw text"}``; the sentence is split with spaCy's blank English
    tokenizer (the CoNLL-2003 tokenization is close to it).

    Output: ``words``, ``tags`` (BIOUL), ``iob1_tags`` (CoNLL-2003's scheme) and ``entities``,
    each ``{"text", "type", "start", "end"}`` with inclusive token indices, plus ``char_start``/
    ``char_end`` (end exclusive) into the input sentence, whose slice is then the ``text``.
    With ``--use-dataset-reader`` (CoNLL files) there are no character offsets.

    Sentences over ``max_sentence_tokens`` tokens are refused, and a batch goes through the model
    in passes of bounded padded size, so memory stays bounded (README, "Input limits").
    """

    input_keys = {"sentence": "raw text"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        tokenizer: Optional[Tokenizer] = None,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader)
        self._tokenizer = tokenizer or blank_english_tokenizer()
        self.max_sentence_tokens = positive_limit(
            max_sentence_tokens, "max_sentence_tokens", "the ner_tagger predictor"
        )

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then the sentence's length (``max_sentence_tokens``)."""
        super().check_input(record, where)
        check_sentence_tokens(
            self._tokenizer,
            record["sentence"],  # type: ignore[index]
            self.max_sentence_tokens,
            "the ner_tagger predictor",
            where,
        )

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        sentence = json_dict["sentence"]
        tokens = self._tokenizer.tokenize(sentence)
        if not tokens:
            raise PredictorInputError(f"the sentence has no tokens: {sentence!r}")
        return self._dataset_reader.text_to_instance(tokens)

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = forward_in_bounded_batches(self._model, instances, lambda instance: len(instance["tokens"]))
        return [_with_offsets(instance, output) for instance, output in zip(instances, outputs)]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the sentence tagged with the model's predicted (BIOUL) tags."""
        labeled = instance.duplicate()
        namespace = self._model.label_namespace  # type: ignore[attr-defined]
        labeled.add_field("tags", SequenceLabelField(list(outputs["tags"]), labeled["tokens"], namespace))
        return [labeled]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results = self.predict_batch_instance(self._batch_json_to_instances(inputs))
        return [_with_surface_text(item["sentence"], result) for item, result in zip(inputs, results)]


def _with_surface_text(sentence: str, output: JsonDict) -> JsonDict:
    """Entity text as written in the input (spacing kept), and the input sentence itself."""
    for entity in output.get("entities", []):
        if "char_start" in entity:
            entity["text"] = sentence[entity["char_start"] : entity["char_end"]]
    return {"sentence": sentence, **output}


def _with_offsets(instance: Instance, output: JsonDict) -> JsonDict:
    """Add character offsets (and exact surface text) to entities when the tokens carry them."""
    output = sanitize(output)
    tokens = instance["tokens"].tokens  # type: ignore[attr-defined]
    if not tokens or tokens[0].idx is None:
        return output
    for entity in output.get("entities", []):
        first, last = tokens[entity["start"]], tokens[entity["end"]]
        entity["char_start"] = first.idx
        entity["char_end"] = last.idx + len(last.text)
    return output
