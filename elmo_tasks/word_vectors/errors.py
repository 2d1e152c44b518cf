"""Errors the word-vector builder and the GloVe-format reader raise, each meant to be read by a user.

Messages name the place to fix first (``FILE, line N: `` for a line of a file, 1-based as editors
count), then what was wrong and what was expected, on one line.
"""


class WordVectorsError(ValueError):
    """Base class: a corpus, an option or an output path that the user can fix."""


class GloveFormatError(WordVectorsError):
    """A word-vector file that AllenNLP's ``embedding`` would misread or fail on (the message names the line)."""


class CorpusError(WordVectorsError):
    """A training corpus that cannot be read or holds too little text."""
