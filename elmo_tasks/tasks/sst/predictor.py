"""Predictor: raw sentence in, sentiment class and class probabilities out."""
from typing import Any, Dict, List, Optional

import numpy
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tokenization import blank_english_tokenizer


@Predictor.register("sst_sentiment")
class SstSentimentPredictor(Predictor):
    """Input ``{"sentence": "A gorgeous, witty film."}``; output ``tokens``, ``label`` (class index,
    0 very negative .. 4 very positive), ``label_name`` and ``class_probabilities``.

    Sentences are split with spaCy's rule-based English tokenizer (no model download), which
    splits clitics ("n't", "'s") much as the treebank's PTB tokenization does.
    """

    def __init__(
        self, model: Model, dataset_reader: DatasetReader, frozen: bool = True, tokenizer: Optional[Tokenizer] = None
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = tokenizer or blank_english_tokenizer()

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentence = json_dict.get("sentence")
        if not isinstance(sentence, str) or not sentence.strip():
            raise ConfigurationError(
                f'sst_sentiment expects {{"sentence": "some text"}} with non-empty text; got {json_dict!r}'
            )
        words = [token.text for token in self._tokenizer.tokenize(sentence)]
        return self._dataset_reader.text_to_instance(words)  # type: ignore[call-arg]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._simplify(super().predict_instance(instance))

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        return [self._simplify(output) for output in super().predict_batch_instance(instances)]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the instance labelled with the predicted class."""
        new_instance = instance.duplicate()
        label = int(numpy.argmax(outputs["class_probabilities"]))
        new_instance.add_field("label", LabelField(label, skip_indexing=True))
        return [new_instance]

    @staticmethod
    def _simplify(output: Dict[str, Any]) -> JsonDict:
        return {
            "tokens": output["words"],
            "label": output["label"],
            "label_name": output["label_name"],
            "class_probabilities": output["class_probabilities"],
        }
