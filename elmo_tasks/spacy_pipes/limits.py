"""The components' size limits: the task predictors' (docs/REFERENCE.md, "Input limits"), as settings.

A model's memory grows with its input, so each component refuses a Doc (or a sentence of it) above
its predictor's limit, before any of its batch goes through the model, with one line: which Doc,
the size, the limit, what to do, and the setting that raises the limit.
"""

from typing import Any, List

from spacy.tokens import Doc

from elmo_tasks.spacy_pipes.doc_words import Words, has_sentences, preview, sentences_of
from elmo_tasks.spacy_pipes.errors import DocTooLong, ElmoPipeError


def positive_setting(value: Any, setting: str, component: str) -> int:
    """``value`` when it is a positive whole number; otherwise ElmoPipeError naming the setting."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ElmoPipeError(f"{component}: {setting} must be a positive whole number, got {value!r}")
    return value


def check_length(count: int, limit: int, what: str, where: str, component: str, setting: str, advice: str) -> None:
    """Raises DocTooLong when ``count`` (of ``what``, e.g. "tokens in the sentence") is above ``limit``, the
    component's ``setting``; ``where`` names the Doc (and sentence), ``advice`` how to shorten it."""
    if count <= limit:
        return
    raise DocTooLong(
        f"{component}: {where}: {count:,} {what}, more than the limit of {limit:,} ({setting}), which keeps "
        f"memory bounded (docs/REFERENCE.md, 'Input limits'); {advice}, or raise the limit on a machine with "
        f'the memory for it: config={{"{setting}": {count}}}'
    )


def checked_sentences(doc: Doc, limit: int, component: str) -> List[Words]:
    """The Doc's sentences (:func:`sentences_of`), each within ``limit`` words (``max_sentence_tokens``)."""
    sentenced = has_sentences(doc)
    if sentenced:
        advice = "split the sentence"
    else:
        advice = f'split the text into sentences first: nlp.add_pipe("sentencizer", before="{component}")'
    sentences = sentences_of(doc)
    for number, sentence in enumerate(sentences, start=1):
        where = preview(doc) + (f", sentence {number}" if sentenced else "")
        check_length(len(sentence), limit, "tokens in the sentence", where, component, "max_sentence_tokens", advice)
    return sentences
