"""The training text: a pre-tokenized file read one line at a time, as often as training asks.

The format is the biLM corpus's (``scripts/build_bilm_corpus.py``): UTF-8, one sentence per line,
tokens separated by single spaces, cased. Lines end where Python's text files end them (``\\n``,
``\\r\\n`` or ``\\r``), as AllenNLP's readers see them. Runs of spaces and blank lines are tolerated
(empty tokens and sentences are left out); a token keeps any other character, tabs included, since
the corpus was tokenized before it was written. Nothing is held in memory beyond one line.
"""

import os
import re
from pathlib import Path
from typing import Iterator, List, Optional

from elmo_tasks.word_vectors.errors import CorpusError

# What the "surrogateescape" error handler makes of bytes that are not UTF-8.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")

CORPUS_EXPECTED = "a UTF-8 text file with one sentence per line, tokens separated by spaces"


class TokenizedCorpus:
    """The sentences of ``path`` as lists of tokens; iterating again reads the file again (gensim reads it
    once for the vocabulary and once per epoch).

    ``max_sentence_tokens``: a longer line is given in pieces of at most this many tokens (gensim drops
    the tokens of a sentence past its limit of 10,000). ``lowercase``: every token lowercased.
    """

    def __init__(self, path: Path, max_sentence_tokens: Optional[int] = None, lowercase: bool = False) -> None:
        self.path = Path(path)
        self.max_sentence_tokens = max_sentence_tokens
        self.lowercase = lowercase
        check_corpus_path(self.path)

    def __iter__(self) -> Iterator[List[str]]:
        limit = self.max_sentence_tokens
        with open(self.path, encoding="utf-8", errors="surrogateescape") as handle:
            for line_number, line in enumerate(handle, start=1):
                escaped = None if line.isascii() else _ESCAPED_BYTE.search(line)
                if escaped is not None:
                    raise CorpusError(
                        f"{self.path}, line {line_number}: bytes that are not UTF-8 (the first at character "
                        f"{escaped.start() + 1}); expected UTF-8 text: convert the file, e.g. iconv -f latin1 -t utf-8"
                    )
                if self.lowercase:
                    line = line.lower()
                tokens = line.rstrip("\n").split(" ")
                if "" in tokens:
                    tokens = [token for token in tokens if token]
                if not tokens:
                    continue
                if limit is None or len(tokens) <= limit:
                    yield tokens
                else:
                    for start in range(0, len(tokens), limit):
                        yield tokens[start : start + limit]


def check_corpus_path(path: Path) -> None:
    """Raises CorpusError unless ``path`` is a file we can read."""
    if not path.exists():
        raise CorpusError(f"the corpus {path} does not exist; expected {CORPUS_EXPECTED}")
    if path.is_dir():
        raise CorpusError(f"the corpus {path} is a folder; expected {CORPUS_EXPECTED}")
    if not os.access(path, os.R_OK):
        raise CorpusError(f"the corpus {path} cannot be read (no permission)")
