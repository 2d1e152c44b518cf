"""The word-level columns of CoNLL-2012 ``*_gold_conll`` files that the probes need.

Columns (0-based): 3 word, 4 part-of-speech tag, 6 lemma (filled for the words that carry a
predicate frameset or a word sense, ``-`` elsewhere), 8 OntoNotes word sense (``-`` when none).
"""

from dataclasses import dataclass
from typing import Iterator, List, Optional

from elmo_tasks.tasks.data_files import DataFileError, read_lines

WORD, POS, LEMMA, SENSE = 3, 4, 6, 8


@dataclass
class AnnotatedSentence:
    words: List[str]
    pos_tags: List[str]
    lemmas: List[Optional[str]]
    senses: List[Optional[str]]


#: The name of this reader's data errors before every data file had one error class (kept for code that catches it).
Conll2012FormatError = DataFileError


def read_sentences(path: str) -> Iterator[AnnotatedSentence]:
    """Every sentence of a ``*_gold_conll`` file (plain or ``.gz``), in file order."""
    rows: List[List[str]] = []
    for number, line in enumerate(read_lines(path), start=1):
        if line.startswith("#"):
            continue
        columns = line.split()
        if not columns:
            if rows:
                yield _sentence(rows)
                rows = []
            continue
        if len(columns) < 12:
            raise DataFileError(
                f"{path}, line {number}: {len(columns)} columns, a *_gold_conll line has at least 12 "
                "(document, part, index, word, POS, parse, lemma, frameset, sense, speaker, NE, ..., coref)"
            )
        rows.append(columns)
    if rows:
        yield _sentence(rows)


def _sentence(rows: List[List[str]]) -> AnnotatedSentence:
    def value(text: str) -> Optional[str]:
        return None if text == "-" else text

    return AnnotatedSentence(
        words=[r[WORD] for r in rows],
        pos_tags=[r[POS] for r in rows],
        lemmas=[value(r[LEMMA]) for r in rows],
        senses=[value(r[SENSE]) for r in rows],
    )
