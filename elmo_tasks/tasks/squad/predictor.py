"""`allennlp predict` for SQuAD: ``{"question": ..., "passage": ...}`` per line in; per line out
``{"question", "answer", "answer_start", "answer_end", "span_probability"}`` where
``passage[answer_start:answer_end] == answer`` (character offsets, end exclusive) and
``span_probability`` is p(start) * p(end) of the chosen span.

With ``--use-dataset-reader`` the input is a SQuAD v1.1 json file (a ``#fold=K/N`` suffix
works) and each output line also has the ``question_id``; ``allennlp squad-predict`` writes the
official ``{question_id: answer}`` file instead.
"""

from typing import Any, Dict, List

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import IndexField
from allennlp.predictors import Predictor

from elmo_tasks.tasks.predictor_input import JsonLinesPredictor


@Predictor.register("squad_qa")
class SquadQaPredictor(JsonLinesPredictor):
    """Extracts the answer span of a question from its passage with a ``bidaf_self_attention`` model."""

    input_keys = {"question": "the question", "passage": "the text that holds the answer"}

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        missing = [
            key
            for key in ("question", "passage")
            if not isinstance(json_dict.get(key), str) or not json_dict[key].strip()
        ]
        if missing:
            raise ConfigurationError(
                f"squad_qa input needs non-empty string fields 'question' and 'passage'; missing, "
                f"empty or not a string: {', '.join(missing)} in {str(json_dict)[:300]}"
            )
        return self._dataset_reader.text_to_instance(json_dict["question"], json_dict["passage"])

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted span as its gold span (for AllenNLP's interpretation tools)."""
        labeled = instance.duplicate()
        start, end = (int(index) for index in outputs["best_span"])
        labeled.add_field("span_start", IndexField(start, labeled["passage"]))
        labeled.add_field("span_end", IndexField(end, labeled["passage"]))
        return [labeled]

    @staticmethod
    def _answer(output: Dict[str, Any]) -> Dict[str, Any]:
        start, end = output["answer_offsets"]
        return {
            "answer": output["best_span_str"],
            "answer_start": start,
            "answer_end": end,
            "span_probability": output["best_span_prob"],
        }

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = self._model.forward_on_instances(self._batch_json_to_instances(inputs))
        return [
            sanitize({"question": given["question"], **self._answer(output)}) for given, output in zip(inputs, outputs)
        ]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._model.forward_on_instances(instances)
        return [
            sanitize(
                {
                    "question_id": output["question_id"],
                    "question": " ".join(instance["metadata"]["question_tokens"]),
                    **self._answer(output),
                }
            )
            for instance, output in zip(instances, outputs)
        ]
