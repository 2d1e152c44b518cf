"""Length-sorted passes: the inputs of a batch of Docs through a model with little padding.

A batch of ``nlp.pipe`` holds Docs in the order they come; their inputs (sentences or documents) are
sorted by length and cut into passes whose padded size, inputs x longest, stays within
``max_tokens``, as the predictors bound theirs (elmo_tasks/tasks/input_limits.py). Each input keeps
its place, so the outputs go back to their Docs in order.
"""

from typing import Callable, Dict, Iterator, List, Sequence, Sized, Tuple, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Document = TypeVar("Document")
Sentence = TypeVar("Sentence", bound=Sized)

#: Padded tokens per pass, the predictors' ``TOKENS_PER_BATCH``.
TOKENS_PER_PASS = 32_768


def length_sorted_passes(
    items: Sequence[T], length: Callable[[T], int], max_tokens: int = TOKENS_PER_PASS
) -> Iterator[List[int]]:
    """The indices of ``items``, shortest first, in runs whose count x longest ``length`` stays within
    ``max_tokens`` (an item over it on its own is a run of one)."""
    order = sorted(range(len(items)), key=lambda index: length(items[index]))
    run: List[int] = []
    for index in order:
        # sorted, so this item is the run's longest
        if run and (len(run) + 1) * length(items[index]) > max_tokens:
            yield run
            run = []
        run.append(index)
    if run:
        yield run


def in_length_sorted_passes(
    items: Sequence[T],
    length: Callable[[T], int],
    predict: Callable[[List[T]], Sequence[R]],
    max_tokens: int = TOKENS_PER_PASS,
) -> List[R]:
    """``predict`` on :func:`length_sorted_passes` of ``items``: one output per item, in the items' order."""
    outputs: Dict[int, R] = {}
    for run in length_sorted_passes(items, length, max_tokens):
        outputs.update(zip(run, predict([items[i] for i in run]), strict=True))
    return [outputs[index] for index in range(len(items))]


def each_sentence_predicted(
    batch: Sequence[Tuple[Document, Sequence[Sentence]]], predict: Callable[[List[Sentence]], Sequence[R]]
) -> Iterator[Tuple[Document, List[Tuple[Sentence, R]]]]:
    """Each Doc of ``batch`` (a Doc and its sentences) with each of its sentences' outputs: every
    sentence of the batch goes through ``predict`` in :func:`in_length_sorted_passes`, whatever its Doc."""
    sentences = [sentence for _, doc_sentences in batch for sentence in doc_sentences]
    outputs = iter(in_length_sorted_passes(sentences, len, predict))
    for doc, doc_sentences in batch:
        yield doc, [(sentence, next(outputs)) for sentence in doc_sentences]
