"""`allennlp predict` for SST: one ``{"sentence": "raw text"}`` per line in, the sentiment out."""

from typing import Any, Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.sentence_predictor import SentencePredictor
from elmo_tasks.tasks.sst.names import OLD_PREDICTOR, PREDICTOR

#: The longest sentence taken, in tokens: the biattention compares every token with every other.
MAX_SENTENCE_TOKENS = 5_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"


@Predictor.register(PREDICTOR)
@Predictor.register(OLD_PREDICTOR)
class SstSentimentPredictor(SentencePredictor):
    """Input ``{"sentence": "A gorgeous, witty film."}``; output ``tokens``, ``label`` (the class
    name, "very negative" .. "very positive") and ``label_probs`` ({class name: probability}).

    Sentences are split with spaCy's rule-based English tokenizer (no model download), which
    splits clitics ("n't", "'s") much as the treebank's PTB tokenization does.

    Limits on the input, and the model's passes over a batch: ``SentencePredictor``; the
    biattention compares every token with every other, so the passes are bounded in tokens² too.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        tokenizer: Optional[Tokenizer] = None,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen, tokenizer, max_sentence_tokens, OWNER)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        words = [token.text for token in self.sentence_tokens(json_dict)]
        return self._dataset_reader.text_to_instance(words)

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._forward(instances, max_pairs=self.max_sentence_tokens**2)
        return [self._simplify(output) for output in outputs]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the instance labelled with the predicted class."""
        new_instance = instance.duplicate()
        label = int(numpy.argmax(outputs["label_probs"]))
        new_instance.add_field("label", LabelField(label, skip_indexing=True))
        return [new_instance]

    def _simplify(self, output: Dict[str, Any]) -> JsonDict:
        names: List[str] = getattr(self._model, "class_names")  # noqa: B009  # why: Model declares none; sst5_model's
        return sanitize(
            {
                "tokens": output["words"],
                "label": output["label"],
                "label_probs": {name: float(p) for name, p in zip(names, output["label_probs"], strict=True)},
            }
        )
