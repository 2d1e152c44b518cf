"""The base of the predictors that take one raw sentence a line, ``{"sentence": "raw text"}``.

NER and SST-5 read the same input and check it the same way: the keys (``JsonLinesPredictor``),
then the sentence's length in tokens of the predictor's tokenizer (``max_sentence_tokens``, README
"Input limits"). What they build from the tokens, and what they return, is their own.
"""

from typing import Callable, List, Optional

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.tokenizers import Token, Tokenizer
from allennlp.models import Model

from elmo_tasks.tasks.input_limits import check_sentence_tokens, positive_limit
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor, PredictorInputError
from elmo_tasks.tokenization import blank_english_tokenizer


class SentencePredictor(JsonLinesPredictor):
    """Input lines ``{"sentence": "raw text"}``, split by ``tokenizer`` (spaCy's blank English
    tokenizer by default); sentences over ``max_sentence_tokens`` tokens are refused (README, "Input
    limits"), in messages that name ``owner``."""

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
        self.max_sentence_tokens = positive_limit(max_sentence_tokens, "max_sentence_tokens", owner)

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

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]
