"""Size limits of predictor inputs, so that no input line can take unbounded memory.

A model's memory grows with its input: linearly for a tagger, with the square of the length for
attention over a passage or for SRL's one tag sequence per predicate. Each predictor refuses an
input above its documented limit (README, "Input limits") with an :class:`InputTooLong` that says
how long the input is, the limit, and what to do: shorten or split the input, or raise the limit
with ``allennlp predict --predictor-args '{"max_...": N}'`` on a machine with the memory for it.

Predictors check sizes in ``check_input``, which ``JsonLinesPredictor.load_line`` calls with the
input line's place (so the message names the file and line) and ``_json_to_instance`` calls when
the predictor is used from Python. ``allennlp predict --batch-size N`` puts N inputs into one
batch; :func:`bounded_batches` splits a batch whose padded size is too large, so that N long
inputs never go through the model at once.
"""

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, TypeVar

from allennlp.data import Instance
from allennlp.models import Model

from elmo_tasks.tasks.predictor_input import PredictorInputError

T = TypeVar("T")

#: Padded tokens (inputs x longest input) per pass of a model when ``allennlp predict --batch-size``
#: groups inputs: the experiments' batches (e.g. 32 SQuAD questions with passages of up to 800
#: tokens, 80 SRL predicates of 120-token sentences) fit in one pass, as before.
TOKENS_PER_BATCH = 32_768


class InputTooLong(PredictorInputError):
    """An input above a size limit; the message gives the size, the limit and what to do."""


def predictor_args(argument: str, value: int) -> str:
    """How to raise a predictor's limit from the command line."""
    return f"--predictor-args '{{\"{argument}\": {value}}}'"


def check_at_most(
    count: int,
    limit: int,
    what: str,
    owner: str,
    advice: str,
    raise_with: Optional[str],
    where: Optional[Callable[[], str]] = None,
) -> None:
    """Raises InputTooLong when ``count`` (of ``what``, e.g. "tokens in the sentence") is above ``limit``.

    ``owner`` names whose limit it is (e.g. "the srl predictor"), ``advice`` how to shorten the
    input, ``raise_with`` the option that raises the limit (None where there is none); ``where``
    gives the input's place.
    """
    if count <= limit:
        return
    place = where() if where is not None else "input"
    raised = f", or raise the limit with {raise_with} on a machine with the memory for it" if raise_with else ""
    raise InputTooLong(
        f"{place}: {count:,} {what}, more than {owner}'s limit of {limit:,}, which keeps its memory "
        f"bounded (README, 'Input limits'); {advice}{raised}"
    )


def check_sentence_tokens(
    tokenizer: Any, sentence: str, limit: int, owner: str, where: Optional[Callable[[], str]] = None
) -> None:
    """The one-sentence predictors' check: at most ``limit`` tokens (``max_sentence_tokens``)."""
    count = len(tokenizer.tokenize(sentence))
    check_at_most(
        count,
        limit,
        "tokens in the sentence",
        owner,
        "split it into sentences",
        predictor_args("max_sentence_tokens", count),
        where,
    )


def bounded_batches(
    items: Sequence[T],
    length: Callable[[T], int],
    max_tokens: int = TOKENS_PER_BATCH,
    max_pairs: Optional[int] = None,
) -> Iterator[List[T]]:
    """Consecutive runs of ``items`` (in order) whose padded size, count x longest ``length``, stays
    within ``max_tokens`` and, for models that compare every token with every other, whose count x
    longest² stays within ``max_pairs``. An item over either on its own makes a run of one.
    Batches of ordinary inputs (the experiments' batch sizes) stay whole."""
    batch: List[T] = []
    longest = 0
    for item in items:
        size = length(item)
        new_longest = max(longest, size)
        count = len(batch) + 1
        over = count * new_longest > max_tokens or (max_pairs is not None and count * new_longest**2 > max_pairs)
        if batch and over:
            yield batch
            batch, new_longest = [], size
        batch.append(item)
        longest = new_longest
    if batch:
        yield batch


def forward_in_bounded_batches(
    model: Model,
    instances: Sequence[Instance],
    length: Callable[[Instance], int],
    max_tokens: int = TOKENS_PER_BATCH,
    max_pairs: Optional[int] = None,
) -> List[Dict[str, Any]]:
    """``model.forward_on_instances`` over :func:`bounded_batches` of ``instances``: one output per
    instance, in order."""
    outputs: List[Dict[str, Any]] = []
    for batch in bounded_batches(instances, length, max_tokens, max_pairs):
        outputs.extend(model.forward_on_instances(list(batch)))
    return outputs
