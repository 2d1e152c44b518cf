"""`allennlp predict` for SST: one ``{"sentence": "raw text"}`` per line in, the sentiment out."""

from typing import Any, Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer


@Predictor.register("sst_sentiment")
class SstSentimentPredictor(JsonLinesPredictor):
    """Input ``{"sentence": "A gorgeous, witty film."}``; output ``tokens``, ``label`` (the class
    name, "very negative" .. "very positive") and ``label_probs`` ({class name: probability}).

    Sentences are split with spaCy's rule-based English tokenizer (no model download), which
    splits clitics ("n't", "'s") much as the treebank's PTB tokenization does.
    """

    input_keys = {"sentence": "raw text"}

    def __init__(
        self, model: Model, dataset_reader: DatasetReader, frozen: bool = True, tokenizer: Optional[Tokenizer] = None
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = tokenizer or blank_english_tokenizer()

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        words = [token.text for token in self._tokenizer.tokenize(json_dict["sentence"])]
        if not words:
            raise PredictorInputError(f"the sentence has no tokens: {json_dict['sentence']!r}")
        return self._dataset_reader.text_to_instance(words)  # type: ignore[call-arg]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        return [self._simplify(output) for output in self._model.forward_on_instances(instances)]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the instance labelled with the predicted class."""
        new_instance = instance.duplicate()
        label = int(numpy.argmax(outputs["label_probs"]))
        new_instance.add_field("label", LabelField(label, skip_indexing=True))
        return [new_instance]

    def _simplify(self, output: Dict[str, Any]) -> JsonDict:
        names = self._model.class_names  # type: ignore[attr-defined]
        return sanitize(
            {
                "tokens": output["words"],
                "label": output["label"],
                "label_probs": {name: float(p) for name, p in zip(names, output["label_probs"])},
            }
        )
