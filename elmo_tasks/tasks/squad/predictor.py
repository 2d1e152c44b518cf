"""`allennlp predict` for SQuAD: ``{"question": ..., "passage": ...}`` per line in; per line out
``{"question", "answer", "answer_start", "answer_end", "span_probability"}`` where
``passage[answer_start:answer_end] == answer`` (character offsets, end exclusive) and
``span_probability`` is p(start) * p(end) of the chosen span.

With ``--use-dataset-reader`` the input is a SQuAD v1.1 json file (a ``#fold=K/N`` suffix
works) and each output line also has the ``question_id``; ``allennlp squad-predict`` writes the
official ``{question_id: answer}`` file instead.
"""

from typing import Any, Dict, List

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import IndexField, MetadataField, TextField
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.predictor_input import PredictorInputError
from elmo_tasks.tasks.squad.names import OLD_PREDICTOR, PREDICTOR
from elmo_tasks.tasks.text_pair_predictor import TextLimit, TextPairPredictor

#: The longest passage taken, in tokens: self-attention compares every passage token with every other
#: (XQuAD's longest passage has 579).
MAX_PASSAGE_TOKENS = 5_000
#: The longest question taken, in tokens.
MAX_QUESTION_TOKENS = 1_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"


@Predictor.register(PREDICTOR)
@Predictor.register(OLD_PREDICTOR)
class SquadQaPredictor(TextPairPredictor):
    """Extracts the answer span of a question from its passage with a SQuAD model (``squad_model``).

    Passages over ``max_passage_tokens`` and questions over ``max_question_tokens`` are refused
    (``TextPairPredictor``)."""

    input_keys = {"question": "the question", "passage": "the text that holds the answer"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        max_passage_tokens: int = MAX_PASSAGE_TOKENS,
        max_question_tokens: int = MAX_QUESTION_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen, OWNER)
        self.max_passage_tokens = positive_count(max_passage_tokens, "max_passage_tokens", OWNER)
        self.max_question_tokens = positive_count(max_question_tokens, "max_question_tokens", OWNER)

    def text_limits(self) -> List[TextLimit]:
        """The passage first: self-attention over it bounds the model's passes."""
        return [
            TextLimit(
                "passage",
                self.max_passage_tokens,
                "max_passage_tokens",
                "shorten the passage (one paragraph at a time)",
            ),
            TextLimit("question", self.max_question_tokens, "max_question_tokens", "shorten the question"),
        ]

    def check_instance(self, instance: Instance) -> None:
        """Raises InputTooLong, naming the question id, for a question of a SQuAD file over the limits."""
        where = f"question {field_of(instance, 'metadata', MetadataField)['question_id']!r}"
        self.check_lengths({key: len(instance[key]) for key in ("passage", "question")}, False, lambda: where)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        missing = [
            key
            for key in ("question", "passage")
            if not isinstance(json_dict.get(key), str) or not json_dict[key].strip()
        ]
        if missing:
            raise PredictorInputError(
                f"{PREDICTOR} input needs non-empty string fields 'question' and 'passage'; missing, "
                f"empty or not a string: {', '.join(missing)} in {str(json_dict)[:300]}"
            )
        return self._dataset_reader.text_to_instance(json_dict["question"], json_dict["passage"])

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted span as its gold span (for AllenNLP's interpretation tools)."""
        labeled = instance.duplicate()
        start, end = (int(index) for index in outputs["best_span"])
        passage = field_of(labeled, "passage", TextField)
        labeled.add_field("span_start", IndexField(start, passage))
        labeled.add_field("span_end", IndexField(end, passage))
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

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = self._forward(self._batch_json_to_instances(inputs))
        return [
            sanitize({"question": given["question"], **self._answer(output)})
            for given, output in zip(inputs, outputs, strict=True)
        ]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        """Questions of a SQuAD file (``--use-dataset-reader``, ``allennlp squad-predict``), checked
        against the same limits."""
        for instance in instances:
            self.check_instance(instance)
        outputs = self._forward(instances)
        return [
            sanitize(
                {
                    "question_id": output["question_id"],
                    "question": " ".join(field_of(instance, "metadata", MetadataField)["question_tokens"]),
                    **self._answer(output),
                }
            )
            for instance, output in zip(instances, outputs, strict=True)
        ]
