"""The base of the predictors that take one raw sentence a line, ``{"sentence": "raw text"}``.

NER and SST-5 read the same input and check it the same way: the keys (``JsonLinesPredictor``),
then the sentence's length in tokens of the predictor's tokenizer (``max_sentence_tokens``, README
"Input limits"); both run a batch through the model in passes of bounded padded size. What they
build from the tokens, and what they return, is their own.
"""

from typing import Any, Callable, Dict, List, Optional

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.tokenizers import Token, Tokenizer
from allennlp.models import Model

from elmo_tasks.setting_checks import positive_count
from elmo_tasks.tasks.input_limits import check_sentence_tokens, forward_in_bounded_batches
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer


class SentencePredictor(JsonLinesPredictor):
    """Input lines ``{"sentence": "raw text"}``, split by ``tokenizer`` (spaCy's blank English
    tokenizer by default); sentences over ``max_sentence_tokens`` tokens are refused (README, "Input
    limits"), in messages that name ``owner``. A batch goes through the model in passes of bounded
    padded size (:meth:`_forward`), so memory stays bounded."""

    input_keys = {"sentence": "raw text"}

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool,
        tokenizer: Optional[Tokenizer],
        max_sentence_tokens: int,
        owner: str,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._tokenizer = tokenizer or blank_english_tokenizer()
        self.owner = owner
        self.max_sentence_tokens = positive_count(max_sentence_tokens, "max_sentence_tokens", owner)

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then the sentence's length (``max_sentence_tokens``)."""
        super().check_input(record, where)
        assert isinstance(record, dict)  # JsonLinesPredictor.check_input raised otherwise
        check_sentence_tokens(self._tokenizer, record["sentence"], self.max_sentence_tokens, self.owner, where)

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def sentence_tokens(self, json_dict: JsonDict) -> List[Token]:
        """The checked input's sentence as tokens; a sentence with none is refused."""
        self.check_input(json_dict)
        tokens = self._tokenizer.tokenize(json_dict["sentence"])
        if not tokens:
            raise PredictorInputError(f"the sentence has no tokens: {json_dict['sentence']!r}")
        return tokens

    def _forward(self, instances: List[Instance], max_pairs: Optional[int] = None) -> List[Dict[str, Any]]:
        """The model's outputs for ``instances`` (indexed here), in order, in passes of bounded padded
        size; ``max_pairs`` also bounds sentences x tokens² for models that compare every token
        with every other."""
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        return forward_in_bounded_batches(
            self._model, instances, lambda instance: len(instance["tokens"]), max_pairs=max_pairs
        )
