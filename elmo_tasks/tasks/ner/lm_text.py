"""The sentences of a CoNLL-2003 file, one per line, for fine-tuning a biLM on them.

The paper (appendix) fine-tuned its biLM on each task's training text before training the task
model. The biLM training reader (``bilm_raw_text`` with ``text_format: sentence_per_line``) reads
the file this writes: each sentence's words (the first column) joined by single spaces, in file
order; ``-DOCSTART-`` lines and the blank lines between sentences are dropped, no word is.
"""

from pathlib import Path
from typing import Dict, Iterator, List, Tuple, Union

from elmo_tasks.tasks.data_files import DataFileError, read_lines

DOCUMENT_START = "-DOCSTART-"


def conll2003_sentences(file_path: Union[str, Path]) -> Iterator[Tuple[int, List[str]]]:
    """``(first line number, words)`` of each sentence of a CoNLL-2003 file (4 columns a line)."""
    words: List[str] = []
    first_line = 0
    for line_number, line in enumerate(read_lines(str(file_path)), start=1):
        columns = line.split()
        if not columns or columns[0] == DOCUMENT_START:
            if words:
                yield first_line, words
            words = []
            continue
        if len(columns) != 4:
            raise DataFileError(
                f"{file_path}, line {line_number}: expected 4 columns (word, POS, chunk, NER tag) as in "
                f"CoNLL-2003, found {len(columns)}: {line.rstrip()!r}; is this a CoNLL-2003 file?"
            )
        if not words:
            first_line = line_number
        words.append(columns[0])
    if words:
        yield first_line, words


def write_lm_text(file_path: Union[str, Path], output: Union[str, Path]) -> Dict[str, int]:
    """Writes the sentences of ``file_path`` to ``output``; returns the counts."""
    sentences = words = 0
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", encoding="utf-8") as out:
        for _, sentence in conll2003_sentences(file_path):
            out.write(" ".join(sentence) + "\n")
            sentences += 1
            words += len(sentence)
    return {"sentences": sentences, "words": words}
