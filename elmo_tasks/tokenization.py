"""A spaCy tokenizer that needs no downloaded model.

AllenNLP's ``spacy`` tokenizer loads (and, when missing, downloads) a full pipeline such as
``en_core_web_sm``. Predictors only need spaCy's rule-based English tokenizer, which ships
with spaCy itself as ``spacy.blank("en")``; this wrapper uses that, so ``allennlp predict``
works offline.
"""

from functools import lru_cache
from typing import List

import spacy
from allennlp.data.tokenizers import Token, Tokenizer


@lru_cache(maxsize=None)
def _blank_pipeline(language: str) -> "spacy.language.Language":
    return spacy.blank(language)


@Tokenizer.register("spacy_blank")
class SpacyBlankTokenizer(Tokenizer):
    """spaCy's rule-based tokenizer for ``language`` (no tagger, parser or NER).

    Tokens keep their character offset (``idx``) so callers can map spans back to the text.
    """

    def __init__(self, language: str = "en") -> None:
        self._nlp = _blank_pipeline(language)

    def tokenize(self, text: str) -> List[Token]:
        tokens = []
        for token in self._nlp(text):
            if token.is_space:
                continue
            tokens.append(Token(token.text, idx=token.idx, idx_end=token.idx + len(token.text)))
        return tokens


def blank_english_tokenizer() -> SpacyBlankTokenizer:
    """The tokenizer predictors use for raw English sentences."""
    return SpacyBlankTokenizer("en")
