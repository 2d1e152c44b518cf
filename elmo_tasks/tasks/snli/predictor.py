"""`allennlp predict` for SNLI: one ``{"premise": ..., "hypothesis": ...}`` per line in,
``{"premise", "hypothesis", "label", "label_probs": {label: p}}`` per line out.

With ``--use-dataset-reader`` the input is an SNLI jsonl file instead, and each output line
has the tokens (``premise_tokens``, ``hypothesis_tokens``) in place of the raw text.
"""

from typing import Any, Callable, Dict, List, Optional

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model
from allennlp.predictors import Predictor

from elmo_tasks.tasks.input_limits import check_at_most, forward_in_bounded_batches, positive_limit, predictor_args
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor
from elmo_tasks.tasks.snli.names import OLD_PREDICTOR, PREDICTOR

#: The longest premise or hypothesis taken, in tokens: ESIM compares every premise token with every
#: hypothesis token.
MAX_SENTENCE_TOKENS = 5_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"


def _pair_length(instance: Instance) -> int:
    return max(len(instance["premise"]), len(instance["hypothesis"]))


@Predictor.register(PREDICTOR)
@Predictor.register(OLD_PREDICTOR)
class SnliPairPredictor(JsonLinesPredictor):
    """Predicts the entailment label of a premise/hypothesis pair with an SNLI model (``snli_model``)."""

    input_keys = {"premise": "the first sentence", "hypothesis": "the sentence judged against it"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self.max_sentence_tokens = positive_limit(max_sentence_tokens, "max_sentence_tokens", OWNER)

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then each sentence's length (``max_sentence_tokens``).

        Premises and hypotheses over the limit are refused; a batch goes through the model in passes
        of bounded padded size (README, "Input limits")."""
        super().check_input(record, where)
        assert isinstance(record, dict)  # JsonLinesPredictor.check_input raised otherwise
        tokenizer: Tokenizer = getattr(self._dataset_reader, "tokenizer")  # snli_reader's, or a reader like it
        for key in ("premise", "hypothesis"):
            count = len(tokenizer.tokenize(record[key]))
            check_at_most(
                count,
                self.max_sentence_tokens,
                f"tokens in the {key}",
                OWNER,
                f"shorten the {key}",
                predictor_args("max_sentence_tokens", count),
                where,
            )

    def _forward(self, instances: List[Instance]) -> List[Dict[str, Any]]:
        return forward_in_bounded_batches(self._model, instances, _pair_length, max_pairs=self.max_sentence_tokens**2)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        self.check_input(json_dict)
        return self._dataset_reader.text_to_instance(json_dict["premise"], json_dict["hypothesis"])

    def _answer(self, output: Dict[str, Any]) -> Dict[str, Any]:
        """The predicted label and {label name: probability} (names in the vocabulary's order)."""
        namespace: str = getattr(self._model, "label_namespace")  # snli_model's
        names = self._model.vocab.get_index_to_token_vocabulary(namespace)
        probs = [float(p) for p in output["label_probs"]]
        return {"label": output["label"], "label_probs": {names[i]: p for i, p in enumerate(probs)}}

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = self._forward(self._batch_json_to_instances(inputs))
        return [
            sanitize({"premise": given["premise"], "hypothesis": given["hypothesis"], **self._answer(output)})
            for given, output in zip(inputs, outputs)
        ]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

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
