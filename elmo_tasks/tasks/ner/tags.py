"""Tag-scheme helpers for CoNLL-2003 NER: the model predicts BIOUL, the data (and conlleval) use IOB1.

Why no metric of our own: conlleval starts a chunk at ``B-X``, at ``I-X`` after ``O`` and at
``I-X`` after a tag of another type, and ends it at anything that is not ``I-X``. AllenNLP's
``to_bioul`` (used by the ``conll2003`` reader) makes exactly those chunks, and constrained
Viterbi decoding always yields well-formed BIOUL, so ``SpanBasedF1Measure(label_encoding="BIOUL")``
counts the same spans as conlleval on the original IOB1 tags (tests/tasks/ner/test_ner_tags.py
checks the edge cases and, when the real data is present (docs/DATA.md), every sentence of CoNLL-2003).
"""

from typing import Dict, List, Sequence, Union

from allennlp.data.dataset_readers.dataset_utils.span_utils import (
    InvalidTagSequence,
    bioul_tags_to_spans,
)

Entity = Dict[str, Union[str, int]]


def bioul_spans(tags: Sequence[str]) -> List[tuple]:
    """``(type, (start, end))`` spans (inclusive token indices) of a BIOUL sequence, left to right.

    Raises ``ValueError`` naming the sequence when it is not well-formed BIOUL.
    """
    try:
        spans = bioul_tags_to_spans(list(tags))
    except InvalidTagSequence as error:
        raise ValueError(f"not a well-formed BIOUL tag sequence: {list(tags)}") from error
    return sorted(spans, key=lambda span: span[1][0])


def bioul_to_iob1(tags: Sequence[str]) -> List[str]:
    """Rewrite BIOUL tags in CoNLL-2003's IOB1: every entity token is ``I-X`` except the first
    token of an entity that directly follows another entity of the same type, which is ``B-X``."""
    iob1 = ["O"] * len(tags)
    previous_end, previous_type = -2, None
    for span_type, (start, end) in bioul_spans(tags):
        for index in range(start, end + 1):
            iob1[index] = f"I-{span_type}"
        if start == previous_end + 1 and span_type == previous_type:
            iob1[start] = f"B-{span_type}"
        previous_end, previous_type = end, span_type
    return iob1


def entities(words: Sequence[str], tags: Sequence[str]) -> List[Entity]:
    """The entities of a BIOUL-tagged sentence: text (words joined by spaces), type and
    inclusive token ``start``/``end``."""
    if len(words) != len(tags):
        raise ValueError(f"{len(words)} words but {len(tags)} tags: {list(words)} / {list(tags)}")
    return [
        {"text": " ".join(words[start : end + 1]), "type": span_type, "start": start, "end": end}
        for span_type, (start, end) in bioul_spans(tags)
    ]
