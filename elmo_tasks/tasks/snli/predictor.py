"""`allennlp predict` for SNLI: one ``{"premise": ..., "hypothesis": ...}`` per line in,
``{"premise", "hypothesis", "label", "probabilities": {label: p}}`` per line out.

With ``--use-dataset-reader`` the input is an SNLI jsonl file instead, and each output line
has the tokens (``premise_tokens``, ``hypothesis_tokens``) in place of the raw text.
"""
from typing import Any, Dict, List

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.predictors import Predictor


@Predictor.register("snli_pair")
class SnliPairPredictor(Predictor):
    """Predicts the entailment label of a premise/hypothesis pair with an ``esim_elmo`` model."""

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        missing = [key for key in ("premise", "hypothesis")
                   if not isinstance(json_dict.get(key), str)]
        if missing:
            raise ConfigurationError(
                f"snli_pair input needs string fields 'premise' and 'hypothesis'; missing or not a "
                f"string: {', '.join(missing)} in {json_dict!r}"
            )
        return self._dataset_reader.text_to_instance(json_dict["premise"], json_dict["hypothesis"])

    @staticmethod
    def _answer(output: Dict[str, Any]) -> Dict[str, Any]:
        return {"label": output["label"], "probabilities": output["label_probs"]}

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = self._model.forward_on_instances(self._batch_json_to_instances(inputs))
        return [
            sanitize({"premise": given["premise"], "hypothesis": given["hypothesis"],
                      **self._answer(output)})
            for given, output in zip(inputs, outputs)
        ]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._model.forward_on_instances(instances)
        return [
            sanitize({"premise_tokens": output["metadata"]["premise_tokens"],
                      "hypothesis_tokens": output["metadata"]["hypothesis_tokens"],
                      **self._answer(output)})
            for output in outputs
        ]
