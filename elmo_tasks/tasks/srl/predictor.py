"""``allennlp predict`` for SRL: a raw sentence (and optionally its predicates) in, roles out."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import SequenceLabelField, TextField
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.input_limits import bounded_batches, check_at_most, predictor_args
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tasks.srl.names import PREDICTOR
from elmo_tasks.tasks.srl.reader import ROLE_NAMESPACE
from elmo_tasks.tasks.srl.sentence_prediction import TOKENS_PER_BATCH, predict_predicates
from elmo_tasks.tasks.srl.verbs import FoundVerbs, PosVerbFinder
from elmo_tasks.tokenization import blank_english_tokenizer

#: The longest sentence taken, in tokens. The model itself runs in bounded batches, but the output
#: holds one tag per token for every predicate (tokens x predicates), so a limit keeps it bounded too.
MAX_SENTENCE_TOKENS = 4_000

#: Whose limits the messages name.
OWNER = f"the {PREDICTOR} predictor"

#: One input ready for the model: its raw text (None when given as words), its words, its predicates,
#: and how they were found (None: the input named them).
PreparedSentence = Tuple[Optional[str], List[str], List[int], Optional[FoundVerbs]]


@Predictor.register(PREDICTOR)
class SrlPredictor(JsonLinesPredictor):
    """Input lines ``{"sentence": "raw text", "verbs": [token indices]}`` (``verbs`` optional).

    The sentence is split with spaCy's blank English tokenizer. Output: ``words``, ``verbs_given``
    (true when the input named the predicates), ``verbs_found_by`` and ``verbs``: per predicate
    ``index``, ``verb``, ``tags`` (BIO) and ``description`` (``[ARG0: The cat] [V: chased]
    [ARG1: the mouse] .``). Given ``verbs`` are used exactly (``verbs_found_by: "input"``).
    Without them the shipped POS tagger on the shipped biLM tags the sentence, whatever the SRL
    model's own embedder (``"pos_tagger"``, with its ``pos_tags``), and its ``VB*`` words except
    *be* and auxiliary *have*/*do* are the predicates (CoNLL-2005's convention; the rules and the
    reasons are in elmo_tasks/tasks/srl/verbs.py). Only if those files are missing from the
    installation does a word-list heuristic stand in (``"heuristic"``, with ``verbs_note``
    saying why). The tagger is loaded on first use, once per predictor; all sentences of a batch
    are tagged in one biLM pass.

    Memory: the model sees one copy of the sentence per predicate, so the predicates go through it
    in passes of at most ``tokens_per_batch`` copies x padded tokens, their instances built for
    each pass and dropped after it (elmo_tasks/tasks/srl/sentence_prediction.py); a sentence's biLM
    layers are computed once and reused from ``fast_elmo``'s cache. A normal batch is one pass.
    Sentences over ``max_sentence_tokens`` tokens are refused (``InputTooLong``). Both can be set
    with ``--predictor-args``.

    With ``--use-dataset-reader`` the output is one line per predicate of the data file.
    """

    input_keys = {"sentence": "the raw text (verbs, an optional list of token indices, may name the predicates)"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        verb_finder: Optional[PosVerbFinder] = None,
        max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
        tokens_per_batch: int = TOKENS_PER_BATCH,
    ) -> None:
        super().__init__(model, dataset_reader)
        self._tokenizer = blank_english_tokenizer()
        self._verb_finder = verb_finder if verb_finder is not None else PosVerbFinder()
        self.max_sentence_tokens = positive_count(max_sentence_tokens, "max_sentence_tokens", OWNER)
        self.tokens_per_batch = positive_count(tokens_per_batch, "tokens_per_batch", OWNER)

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _tokenize(self, sentence: str) -> List[str]:
        return [token.ensure_text() for token in self._tokenizer.tokenize(sentence)]

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then the sentence's length (``max_sentence_tokens``)."""
        super().check_input(record, where)
        assert isinstance(record, dict)  # JsonLinesPredictor.check_input raised otherwise
        words = self._tokenize(record["sentence"])
        check_at_most(
            len(words),
            self.max_sentence_tokens,
            "tokens in the sentence",
            OWNER,
            "split it into sentences (each is labelled on its own)",
            predictor_args("max_sentence_tokens", len(words)),
            where,
        )
        verbs = record.get("verbs", [])  # optional: the predicates' token indices
        if not (isinstance(verbs, list) and all(type(v) is int and 0 <= v < len(words) for v in verbs)):
            raise PredictorInputError(
                f'{where() if where is not None else "input"}: "verbs" must be a list of token indices between 0 and '
                f"{len(words) - 1} for the {len(words)} tokens {words[:50]}; got {verbs!r:.200}"
            )

    def _words(self, json_dict: JsonDict) -> Tuple[str, List[str]]:
        """The sentence and its tokens, after checking the input line and any ``verbs`` it gives."""
        self.check_input(json_dict)
        sentence = json_dict.get("sentence") if isinstance(json_dict, dict) else None
        if not isinstance(sentence, str):
            raise PredictorInputError(
                f'each input line must be a JSON object with a "sentence" string and optionally '
                f'"verbs" (a list of token indices); got {json_dict!r}'
            )
        words = self._tokenize(sentence)
        if not words:
            raise PredictorInputError(f"the sentence has no tokens: {sentence!r}")
        verbs = json_dict.get("verbs")
        if "verbs" in json_dict and not (
            isinstance(verbs, list) and all(isinstance(v, int) and 0 <= v < len(words) for v in verbs)
        ):
            raise PredictorInputError(
                f'"verbs" must be a list of token indices between 0 and {len(words) - 1} for the '
                f"{len(words)} tokens {words}; got {verbs!r}"
            )
        return sentence, words

    def _prepare(self, inputs: List[JsonDict]) -> List[PreparedSentence]:
        """(sentence, words, predicates, how they were found: None when given) per input; the
        sentences without ``verbs`` are tagged together."""
        parsed = [self._words(item) for item in inputs]
        unnamed = [i for i, item in enumerate(inputs) if "verbs" not in item]
        found = (
            dict(zip(unnamed, self._verb_finder.find([parsed[i][1] for i in unnamed]), strict=True)) if unnamed else {}
        )
        prepared: List[PreparedSentence] = []
        for i, (item, (sentence, words)) in enumerate(zip(inputs, parsed, strict=True)):
            verbs = found[i].indices if i in found else item["verbs"]
            prepared.append((sentence, words, sorted(set(verbs)), found.get(i)))
        return prepared

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """The first predicate's instance (``allennlp predict`` calls predict_batch_json instead)."""
        [(_sentence, words, verbs, _found)] = self._prepare([json_dict])
        if not verbs:
            raise PredictorInputError("the sentence has no predicate to label")
        return self._dataset_reader.text_to_instance(words, verbs[0])

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, Any]) -> List[Instance]:
        """The instance with the predicted BIO tags as its gold tags (for AllenNLP's interpretation tools)."""
        labeled = instance.duplicate()
        labeled.add_field(
            "tags",
            SequenceLabelField(outputs["tags"], field_of(labeled, "tokens", TextField), label_namespace=ROLE_NAMESPACE),
        )
        return [labeled]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return self._results(self._prepare(inputs))

    def predict_words(self, sentences: Sequence[Sequence[str]]) -> List[JsonDict]:
        """:meth:`predict_batch_json`'s output for sentences already split into words (no ``"sentence"``
        key): the predicates found as for an input without ``verbs``, all sentences tagged together.
        Used by the spaCy component ``elmo_srl`` (elmo_tasks/spacy_pipes/srl.py) on a Doc's tokens;
        the callers check the limits (``max_sentence_tokens``) and leave out sentences without words."""
        words = [list(sentence) for sentence in sentences]
        found = self._verb_finder.find(words) if words else []
        return self._results(
            [(None, sentence, sorted(set(verbs.indices)), verbs) for sentence, verbs in zip(words, found, strict=True)]
        )

    def _results(self, prepared: List[PreparedSentence]) -> List[JsonDict]:
        """One output per prepared sentence (see :meth:`_prepare`), every predicate through the model in
        bounded passes; ``"sentence"`` only where the input had one."""
        predicates = [(words, verb) for _sentence, words, verbs, _found in prepared for verb in verbs]
        outputs = predict_predicates(self._model, self._dataset_reader, predicates, self.tokens_per_batch)
        results = []
        for sentence, words, verbs, found in prepared:
            frames = []
            for verb in verbs:
                output = next(outputs)  # keep only these two: every output (words, props) is as long as the sentence
                frames.append(
                    {
                        "index": verb,
                        "verb": words[verb],
                        "tags": list(output["tags"]),
                        "description": output["description"],
                    }
                )
            result: JsonDict = {} if sentence is None else {"sentence": sentence}
            result.update({"words": words, "verbs_given": found is None})
            result["verbs_found_by"] = "input" if found is None else found.method
            if found is not None and found.pos_tags is not None:
                result["pos_tags"] = found.pos_tags
            if found is not None and found.note is not None:
                result["verbs_note"] = found.note
            result["verbs"] = frames
            results.append(result)
        return results

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        """One output per instance, in order; the model runs on batches of at most ``tokens_per_batch``."""
        results: List[JsonDict] = []
        for batch in bounded_batches(instances, lambda instance: len(instance["tokens"]), self.tokens_per_batch):
            for instance in batch:
                self._dataset_reader.apply_token_indexers(instance)
            results.extend(_readable(output) for output in self._model.forward_on_instances(batch))
        return results


def _readable(output: Dict[str, Any]) -> JsonDict:
    keep = ("words", "predicate_index", "tags", "props", "description")
    return sanitize({key: output[key] for key in keep if key in output})
