"""AllenNLP's ``conll2003`` reader with the checks that make a bad line an error naming its file and line.

AllenNLP's reader does what NER needs (``tag_label: 'ner'``, ``convert_to_coding_scheme:
'BIOUL'``) but fails on a malformed line with a bare ``ValueError`` ("not enough values to
unpack") that names neither the file nor the line, or reads a shifted tag column silently.
``ner_reader`` reads every file with AllenNLP's reader after checking it once: UTF-8, four
columns (word, POS, chunk, NER tag) on every line that is not blank or ``-DOCSTART-``, and chunk
and NER tags that are ``O`` or ``B-TYPE``/``I-TYPE`` (IOB1 or BIO, what the conversion to BIOUL
reads). A bad line is a :class:`~elmo_tasks.tasks.data_files.DataFileError`
(``FILE, line N: ...``). On good files it gives exactly the instances of ``conll2003``; the
experiment configs name ``ner_reader`` for its errors, and either can be used.
"""

import re
from typing import Iterable

from allennlp.data import DatasetReader, Instance
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.dataset_readers.dataset_reader import PathOrStr

from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.ner.names import READER

DOCUMENT_START = "-DOCSTART-"
COLUMNS = ("word", "POS tag", "chunk tag", "NER tag")
_IOB_TAG = re.compile(r"^(O|[BI]-\S+)$")


def check_conll2003_file(path: str) -> int:
    """Raises DataFileError at the first line that is not CoNLL-2003; returns the number of token lines."""
    tokens = 0
    for line_number, line in enumerate(read_lines(path), start=1):
        columns = line.split()
        if not columns or columns[0] == DOCUMENT_START:
            continue
        if len(columns) != len(COLUMNS):
            raise DataFileError(
                f"{path}, line {line_number}: {len(columns)} columns, expected {len(COLUMNS)} "
                f"({', '.join(COLUMNS)}) as in CoNLL-2003: {line.rstrip()!r}"
            )
        for name, tag in zip(COLUMNS[2:], columns[2:], strict=True):
            if not _IOB_TAG.match(tag):
                raise DataFileError(
                    f"{path}, line {line_number}: the {name} {tag!r} is not 'O', 'B-TYPE' or 'I-TYPE' "
                    f"(IOB1, as in CoNLL-2003): {line.rstrip()!r}"
                )
        tokens += 1
    return tokens


@DatasetReader.register(READER)
class CheckedConll2003Reader(Conll2003DatasetReader):
    """``conll2003`` (same arguments, same instances) that checks each file first; see the module docstring."""

    def _read(self, file_path: PathOrStr) -> Iterable[Instance]:
        check_conll2003_file(str(file_path))
        yield from super()._read(file_path)
