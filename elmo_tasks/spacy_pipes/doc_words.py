"""What the models read from a Doc: its words, the predictors' way, and where each one sits in the Doc.

The task predictors split raw text with spaCy's blank English tokenizer and drop whitespace tokens
(elmo_tasks/tokenization.py); here the Doc's own tokens are used, whatever tokenizer made them, with
whitespace tokens dropped the same way, so on ``spacy.blank("en")`` a component sees exactly the words
the predictor sees for the same text. Sentence boundaries come from the pipeline (a ``sentencizer``,
``senter`` or ``parser`` before the component), when it set any.
"""

from dataclasses import dataclass
from typing import Iterable, List, Tuple

from spacy.tokens import Doc, Token

#: How many characters of a Doc's text the error messages show.
PREVIEW_CHARACTERS = 40


@dataclass(frozen=True)
class Words:
    """Some of a Doc's words and the index in the Doc of each (its token's ``i``)."""

    words: List[str]
    positions: List[int]

    def __len__(self) -> int:
        return len(self.words)

    def span(self, start: int, end: int) -> Tuple[int, int]:
        """The Doc's ``[start, end)`` token span of words ``start..end`` (inclusive, as the predictors count)."""
        return self.positions[start], self.positions[end] + 1


def words_of(tokens: Iterable[Token]) -> Words:
    """The tokens' words, whitespace tokens left out."""
    kept = [token for token in tokens if not token.is_space]
    return Words([token.text for token in kept], [token.i for token in kept])


def has_sentences(doc: Doc) -> bool:
    """Whether the pipeline set sentence boundaries on ``doc`` (``doc.sents`` works)."""
    return len(doc) > 0 and doc.has_annotation("SENT_START")


def sentences_of(doc: Doc) -> List[Words]:
    """The words of each sentence that has any (the whole Doc as one, without sentence boundaries)."""
    parts = [words_of(sentence) for sentence in doc.sents] if has_sentences(doc) else [words_of(doc)]
    return [part for part in parts if len(part)]


def joined(parts: List[Words]) -> Words:
    """The parts one after another, as one list of words (a document of sentences)."""
    return Words([w for part in parts for w in part.words], [p for part in parts for p in part.positions])


def preview(doc: Doc) -> str:
    """The start of the Doc's text, for messages: ``the Doc 'Marta Velkin visited…'``."""
    text = " ".join(doc.text.split())
    shown = text if len(text) <= PREVIEW_CHARACTERS else text[:PREVIEW_CHARACTERS] + "..."
    return f"the Doc {shown!r}"
