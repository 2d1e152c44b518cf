"""``allennlp predict`` for the NER tagger: raw sentences in, tags and entity spans out."""

from typing import Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import SequenceLabelField, TextField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.ner.names import OLD_PREDICTOR, PREDICTOR
from elmo_tasks.tasks.sentence_predictor import SentencePredictor

#: The longest sentence taken, in tokens (the tagger is linear in length: about 1.6 GB at the limit).
MAX_SENTENCE_TOKENS = 10_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"


@Predictor.register(PREDICTOR)
@Predictor.register(OLD_PREDICTOR)
class NerTaggerPredictor(SentencePredictor):
    """Input lines ``{"sentence": "raw text"}``; the sentence is split with spaCy's blank English
    tokenizer (the CoNLL-2003 tokenization is close to it).

    Output: ``words``, ``tags`` (BIOUL), ``iob1_tags`` (CoNLL-2003's scheme) and ``entities``,
    each ``{"text", "type", "start", "end"}`` with inclusive token indices, plus ``char_start``/
    ``char_end`` (end exclusive) into the input sentence, whose slice is then the ``text``.
    With ``--use-dataset-reader`` (CoNLL files) there are no character offsets.

    Limits on the input, and the model's passes over a batch: ``SentencePredictor``.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        tokenizer: Optional[Tokenizer] = None,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, True, tokenizer, max_sentence_tokens, OWNER)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(self.sentence_tokens(json_dict))

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._forward(instances)
        return [_with_offsets(instance, output) for instance, output in zip(instances, outputs, strict=True)]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the sentence tagged with the model's predicted (BIOUL) tags."""
        labeled = instance.duplicate()
        namespace: str = getattr(self._model, "label_namespace")  # noqa: B009  # why: Model declares none; our tagger's, or AllenNLP's crf_tagger's
        labeled.add_field(
            "tags", SequenceLabelField(list(outputs["tags"]), field_of(labeled, "tokens", TextField), namespace)
        )
        return [labeled]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        results = self.predict_batch_instance(self._batch_json_to_instances(inputs))
        return [_with_surface_text(item["sentence"], result) for item, result in zip(inputs, results, strict=True)]


def _with_surface_text(sentence: str, output: JsonDict) -> JsonDict:
    """Entity text as written in the input (spacing kept), and the input sentence itself."""
    for entity in output.get("entities", []):
        if "char_start" in entity:
            entity["text"] = sentence[entity["char_start"] : entity["char_end"]]
    return {"sentence": sentence, **output}


def _with_offsets(instance: Instance, output: JsonDict) -> JsonDict:
    """Add character offsets (and exact surface text) to entities when the tokens carry them."""
    output = sanitize(output)
    tokens = field_of(instance, "tokens", TextField).tokens
    if not tokens or tokens[0].idx is None:
        return output
    for entity in output.get("entities", []):
        first, last = tokens[entity["start"]], tokens[entity["end"]]
        entity["char_start"] = first.idx
        entity["char_end"] = last.idx + len(last.text)
    return output
