"""The base of the predictors whose input lines hold two texts that the model compares token by
token: SNLI's premise and hypothesis, SQuAD's passage and question.

Both check their input the same way: the keys (``JsonLinesPredictor``), then each text's length
in tokens of the dataset reader's tokenizer, against a limit of its own (README, "Input limits").
Both run a batch through the model in passes bounded by the longer text of each input, and by its
square, since every token of one text meets every token of the other. What they build and return
is their own.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from allennlp.data import DatasetReader, Instance
from allennlp.data.tokenizers import Tokenizer
from allennlp.models import Model

from elmo_tasks.tasks.input_limits import check_at_most, forward_in_bounded_batches, predictor_args
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor


@dataclass(frozen=True)
class TextLimit:
    """The most tokens one text of an input may have."""

    #: The input key, which is also the instance's field, e.g. "passage".
    key: str
    limit: int
    #: The ``--predictor-args`` option that sets the limit.
    argument: str
    #: How to shorten a text over the limit.
    advice: str


class TextPairPredictor(JsonLinesPredictor):
    """Input lines with two texts, each limited in the dataset reader's tokens (:meth:`text_limits`),
    in messages that name ``owner``."""

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool, owner: str) -> None:
        super().__init__(model, dataset_reader, frozen)
        self.owner = owner

    def text_limits(self) -> List[TextLimit]:
        """Each text's limit, in the order they are checked; the first also bounds the model's
        passes (texts x tokens², see :meth:`_forward`)."""
        raise NotImplementedError

    def check_input(self, record: object, where: Optional[Callable[[], str]] = None) -> None:
        """The keys (JsonLinesPredictor's check), then each text's length (:meth:`text_limits`)."""
        super().check_input(record, where)
        assert isinstance(record, dict)  # JsonLinesPredictor.check_input raised otherwise
        tokenizer: Tokenizer = getattr(self._dataset_reader, "tokenizer")  # noqa: B009  # why: DatasetReader declares none; the task's reader's, or one like it
        counts = {text.key: len(tokenizer.tokenize(record[text.key])) for text in self.text_limits()}
        self.check_lengths(counts, True, where)

    def check_lengths(
        self, counts: Mapping[str, int], from_command_line: bool, where: Optional[Callable[[], str]]
    ) -> None:
        """Refuses a text over its limit (``counts``: tokens per key); the option that raises the
        limit is named only where ``--predictor-args`` applies."""
        for text in self.text_limits():
            count = counts[text.key]
            raise_with = predictor_args(text.argument, count) if from_command_line else None
            check_at_most(count, text.limit, f"tokens in the {text.key}", self.owner, text.advice, raise_with, where)

    def _forward(self, instances: List[Instance]) -> List[Dict[str, Any]]:
        """The model's outputs for ``instances``, in order, in passes of bounded padded size."""
        texts = self.text_limits()
        return forward_in_bounded_batches(
            self._model,
            instances,
            lambda instance: max(len(instance[text.key]) for text in texts),
            max_pairs=texts[0].limit ** 2,
        )
