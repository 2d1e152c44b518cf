"""`allennlp predict` for SNLI: one ``{"premise": ..., "hypothesis": ...}`` per line in,
``{"premise", "hypothesis", "label", "label_probs": {label: p}}`` per line out.

With ``--use-dataset-reader`` the input is an SNLI jsonl file instead, and each output line
has the tokens (``premise_tokens``, ``hypothesis_tokens``) in place of the raw text.
"""

from typing import Any, Dict, List

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.snli.names import OLD_PREDICTOR, PREDICTOR
from elmo_tasks.tasks.text_pair_predictor import TextLimit, TextPairPredictor

#: The longest premise or hypothesis taken, in tokens: ESIM compares every premise token with every
#: hypothesis token.
MAX_SENTENCE_TOKENS = 5_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"


@Predictor.register(PREDICTOR)
@Predictor.register(OLD_PREDICTOR)
class SnliPairPredictor(TextPairPredictor):
    """Predicts the entailment label of a premise/hypothesis pair with an SNLI model (``snli_model``).

    Premises and hypotheses over ``max_sentence_tokens`` are refused (``TextPairPredictor``)."""

    input_keys = {"premise": "the first sentence", "hypothesis": "the sentence judged against it"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen, OWNER)
        self.max_sentence_tokens = positive_count(max_sentence_tokens, "max_sentence_tokens", OWNER)

    def text_limits(self) -> List[TextLimit]:
        return [
            TextLimit(key, self.max_sentence_tokens, "max_sentence_tokens", f"shorten the {key}")
            for key in ("premise", "hypothesis")
        ]

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        return self._dataset_reader.text_to_instance(json_dict["premise"], json_dict["hypothesis"])

    def _answer(self, output: Dict[str, Any]) -> Dict[str, Any]:
        """The predicted label and {label name: probability} (names in the vocabulary's order)."""
        namespace: str = getattr(self._model, "label_namespace")  # noqa: B009  # why: Model declares none; snli_model's
        names = self._model.vocab.get_index_to_token_vocabulary(namespace)
        probs = [float(p) for p in output["label_probs"]]
        return {"label": output["label"], "label_probs": {names[i]: p for i, p in enumerate(probs)}}

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = self._forward(self._batch_json_to_instances(inputs))
        return [
            sanitize({"premise": given["premise"], "hypothesis": given["hypothesis"], **self._answer(output)})
            for given, output in zip(inputs, outputs, strict=True)
        ]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._forward(instances)
        return [
            sanitize(
                {
                    "premise_tokens": output["metadata"]["premise_tokens"],
                    "hypothesis_tokens": output["metadata"]["hypothesis_tokens"],
                    **self._answer(output),
                }
            )
            for output in outputs
        ]

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For interpretation tools: the pair labelled with the model's predicted label."""
        labeled = instance.duplicate()
        labeled.add_field("label", LabelField(str(outputs["label"])))
        return [labeled]
