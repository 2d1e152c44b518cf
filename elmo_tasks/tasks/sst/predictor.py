"""`allennlp predict` for SST: one ``{"sentence": "raw text"}`` per line in, the sentiment out."""

from typing import Any, Callable, Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.input_limits import check_sentence_tokens, forward_in_bounded_batches, positive_limit
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer

#: The longest sentence taken, in tokens: the biattention compares every token with every other.
MAX_SENTENCE_TOKENS = 5_000


@Predictor.register("sst_sentiment")
class SstSentimentPredictor(JsonLinesPredictor):
    """Input ``{"sentence": "A gorgeous, witty film."}``; output ``tokens``, ``label`` (the class
    name, "very negative" .. "very positive") and ``label_probs`` ({class name: probability}).

    Sentences are split with spaCy's rule-based English tokenizer (no model download), which
    splits clitics ("n't", "'s") much as the treebank's PTB tokenization does.

    Sentences over ``max_sentence_tokens`` tokens are refused, and a batch goes through the model
    in passes of bounded padded size, so memory stays bounded (README, "Input limits").
    """

    input_keys = {"sentence": "raw text"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        tokenizer: Optional[Tokenizer] = None,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = tokenizer or blank_english_tokenizer()
        self.max_sentence_tokens = positive_limit(
            max_sentence_tokens, "max_sentence_tokens", "the sst_sentiment predictor"
        )

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then the sentence's length (``max_sentence_tokens``)."""
        super().check_input(record, where)
        check_sentence_tokens(
            self._tokenizer,
            record["sentence"],  # type: ignore[index]
            self.max_sentence_tokens,
            "the sst_sentiment predictor",
            where,
        )

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
        outputs = forward_in_bounded_batches(
            self._model, instances, lambda instance: len(instance["tokens"]), max_pairs=self.max_sentence_tokens**2
        )
        return [self._simplify(output) for output in outputs]

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
