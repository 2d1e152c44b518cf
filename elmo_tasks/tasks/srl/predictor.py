"""``allennlp predict`` for SRL: a raw sentence (and optionally its predicates) in, roles out."""

from typing import Any, Dict, List

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import SequenceLabelField
from allennlp.predictors.predictor import Predictor

from elmo_tasks.tasks.predictor_input import JsonLinesPredictor
from elmo_tasks.tasks.srl.reader import ROLE_NAMESPACE
from elmo_tasks.tasks.srl.verbs import METHOD, guess_verbs
from elmo_tasks.tokenization import blank_english_tokenizer


@Predictor.register("srl")
class SrlPredictor(JsonLinesPredictor):
    """Input lines ``{"sentence": "raw text", "verbs": [token indices]}`` (``verbs`` optional).

    The sentence is split with spaCy's blank English tokenizer. Output: ``words``, ``verbs_given``
    (true when the input named the predicates), ``verbs_found_by`` (how they were found) and
    ``verbs``: per predicate ``index``, ``verb``, ``tags`` (BIO) and ``description``
    (``[ARG0: The cat] [V: chased] [ARG1: the mouse] .``). Without ``verbs`` the predicates come
    from the fallback in elmo_tasks/tasks/srl/verbs.py (no POS tagger is available offline).
    All predicates of a sentence go through the model in one batch (one biLM pass with ELMo).

    With ``--use-dataset-reader`` the output is one line per predicate of the data file.
    """

    input_keys = {"sentence": "the raw text (verbs, an optional list of token indices, may name the predicates)"}

    def __init__(self, model, dataset_reader) -> None:
        super().__init__(model, dataset_reader)
        self._tokenizer = blank_english_tokenizer()

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _words_and_verbs(self, json_dict: JsonDict):
        self.check_input(json_dict)
        sentence = json_dict.get("sentence") if isinstance(json_dict, dict) else None
        if not isinstance(sentence, str):
            raise ValueError(
                f'each input line must be a JSON object with a "sentence" string and optionally '
                f'"verbs" (a list of token indices); got {json_dict!r}'
            )
        words = [token.text for token in self._tokenizer.tokenize(sentence)]
        if not words:
            raise ValueError(f"the sentence has no tokens: {sentence!r}")
        given = "verbs" in json_dict
        verbs = json_dict["verbs"] if given else guess_verbs(words)
        if not isinstance(verbs, list) or not all(isinstance(v, int) and 0 <= v < len(words) for v in verbs):
            raise ValueError(
                f'"verbs" must be a list of token indices between 0 and {len(words) - 1} for the '
                f"{len(words)} tokens {words}; got {verbs!r}"
            )
        return sentence, words, sorted(set(verbs)), given

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """The first predicate's instance (``allennlp predict`` calls predict_batch_json instead)."""
        _sentence, words, verbs, _given = self._words_and_verbs(json_dict)
        if not verbs:
            raise ValueError("the sentence has no predicate to label")
        return self._dataset_reader.text_to_instance(words, verbs[0])

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted BIO tags as its gold tags (for AllenNLP's interpretation tools)."""
        labeled = instance.duplicate()
        labeled.add_field(
            "tags", SequenceLabelField(outputs["tags"], labeled["tokens"], label_namespace=ROLE_NAMESPACE)
        )
        return [labeled]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        prepared = [self._words_and_verbs(item) for item in inputs]
        instances = [
            self._dataset_reader.text_to_instance(words, verb)
            for _sentence, words, verbs, _given in prepared
            for verb in verbs
        ]
        outputs = self.predict_batch_instance(instances) if instances else []
        results, cursor = [], 0
        for sentence, words, verbs, given in prepared:
            frames = []
            for verb in verbs:
                output = outputs[cursor]
                cursor += 1
                frames.append(
                    {"index": verb, "verb": words[verb], "tags": output["tags"], "description": output["description"]}
                )
            results.append(
                {
                    "sentence": sentence,
                    "words": words,
                    "verbs_given": given,
                    "verbs_found_by": "input" if given else METHOD,
                    "verbs": frames,
                }
            )
        return results

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances)
        return [_readable(output) for output in outputs]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]


def _readable(output: Dict[str, Any]) -> JsonDict:
    keep = ("words", "predicate_index", "tags", "props", "description")
    return sanitize({key: output[key] for key in keep if key in output})
