"""Word vectors in the GloVe text format: writing them, and reading or checking any such file.

The format: UTF-8 text, one word per line followed by its values, all separated by single spaces,
no header (``the 0.418000 0.249680 ...``). It is what AllenNLP's ``embedding`` token embedder reads
from ``pretrained_file`` (plain, ``.gz``, ``.bz2`` or ``.xz``), so vectors we write and the published
GloVe files are interchangeable. We write words from the most frequent down and every value with the
same number of decimals, so equal vectors give byte-identical files.

Why a checker of our own: AllenNLP's reader (``_read_pretrained_embeddings_file`` in
``allennlp/modules/token_embedders/embedding.py``) looks only at the lines of words in the model's
vocabulary, skips a line with the wrong number of values with a log warning (a file of the wrong
dimension ends in "No embeddings of correct dimension found", naming neither file nor line), and
fails on a value that is not a number with numpy's bare ``could not convert string to float``.
It also accepts ``nan`` and ``inf``, which then spread into the random vectors of every word the
file lacks (their mean and spread are taken over the file). :func:`check_glove_file` reads every line
as AllenNLP splits it and names the first bad one: ``FILE, line N: what was wrong; expected ...``.

It accepts what AllenNLP reads correctly: a first line of one or two whole numbers is a header
(word2vec and fastText ``.vec`` files have one; AllenNLP skips it), blank lines are ignored, and a
line whose word holds spaces (the published 840B-token GloVe file has a few, such as ``. . .``) is
counted and reported, not refused: AllenNLP skips those lines, which costs nothing unless such a
"word" is in the vocabulary. A line is taken for one of those when its last values are numbers and
some field between the first and those values is not; more numbers than expected are an error.

A word on two lines is listed too (``repeated_words``), or refused with ``unique_words=True``:
AllenNLP keeps the vector of the word's last line (and counts both in the mean and spread of the
random vectors). The published 840B-token file repeats a few words, so listing is the default.
"""

import bz2
import dataclasses
import gzip
import io
import lzma
import re
import tarfile
import zipfile
from pathlib import Path
from typing import IO, BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy

from elmo_tasks.counted_nouns import counted
from elmo_tasks.word_vectors.errors import GloveFormatError, WordVectorsError

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
# Characters a word cannot hold in this format: the separator, and line ends as Python's text files
# (and so AllenNLP's reader) see them.
_UNWRITABLE = re.compile("[ \n\r]")
LINE_EXPECTED = "a word, then its values, separated by single spaces"
COMPRESSED: Dict[str, Callable[..., IO[str]]] = {
    ".gz": gzip.open,
    ".bz2": bz2.open,
    ".xz": lzma.open,
    ".lzma": lzma.open,
}


@dataclasses.dataclass
class GloveFileSummary:
    """What :func:`check_glove_file` found: the vectors' dimension and count (``vectors``), whether a header line
    came first, the (1-based) lines of words holding spaces, which AllenNLP's reader skips, and the words
    given again: ``(line, line of the word's first vector)``."""

    path: Path
    dim: int
    vectors: int
    header: bool = False
    words_with_spaces: List[int] = dataclasses.field(default_factory=list)
    repeated_words: List[Tuple[int, int]] = dataclasses.field(default_factory=list)


def write_glove_file(
    path: Path, words: Sequence[str], vectors: numpy.ndarray, decimals: int = 6, compress: Optional[bool] = None
) -> None:
    """Writes ``words[i]`` with ``vectors[i]``, in that order, each value with ``decimals`` decimals.

    ``compress`` (default: when the path ends in ``.gz``) writes gzip, with no time stamp or name inside, so
    equal vectors give equal bytes.
    Raises WordVectorsError for a word this format cannot hold (empty, or with a space or line break) or a
    value that is not finite.
    """
    vectors = numpy.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise WordVectorsError(f"expected one vector per word: {len(words)} words, vectors of shape {vectors.shape}")
    for index, word in enumerate(words):
        if not word or _UNWRITABLE.search(word):
            raise WordVectorsError(
                f"word {index + 1} ({word!r}) cannot be written in the GloVe text format; "
                "expected a non-empty word without spaces or line breaks"
            )
    finite = numpy.isfinite(vectors).all(axis=1)
    if not finite.all():
        bad = int(numpy.flatnonzero(~finite)[0])
        raise WordVectorsError(f"the vector of {words[bad]!r} holds values that are not finite numbers")
    row_format = " ".join([f"%.{decimals}f"] * vectors.shape[1])
    path = Path(path)
    with _open_for_writing(path, path.suffix.lower() == ".gz" if compress is None else compress) as handle:
        for word, row in zip(words, vectors, strict=True):
            handle.write(f"{word} {row_format % tuple(row.tolist())}\n")


def check_glove_file(path: Path, dim: Optional[int] = None, unique_words: bool = False) -> GloveFileSummary:
    """Reads every line of a GloVe-format file and raises GloveFormatError at the first one AllenNLP would
    misread or fail on; ``dim``: the dimension the vectors must have (default: the first vector's);
    ``unique_words``: a word given again is an error too (else it is listed in ``repeated_words``).
    Holds every word in memory, with its line number."""
    summary = GloveFileSummary(Path(path), dim or 0, 0)
    first_lines: Dict[str, int] = {}
    for line_number, word, _ in _vectors(summary, dim):
        first = first_lines.setdefault(word, line_number)
        if first == line_number:
            continue
        if unique_words:
            raise GloveFormatError(
                f"{summary.path}, line {line_number}: {word!r} repeats the word of line {first}; expected each word "
                "once (AllenNLP would keep this line's vector and drop the other): delete one of the two lines"
            )
        summary.repeated_words.append((line_number, first))
    return summary


def read_glove_file(path: Path, dim: Optional[int] = None) -> Tuple[List[str], numpy.ndarray]:
    """The words and vectors (float32, one row per word, in file order) of a GloVe-format file, checked as
    :func:`check_glove_file` does; lines of words holding spaces are left out, as AllenNLP leaves them out."""
    summary = GloveFileSummary(Path(path), dim or 0, 0)
    words, rows = [], []
    for _, word, vector in _vectors(summary, dim):
        words.append(word)
        rows.append(vector)
    return words, numpy.stack(rows)  # _vectors raised if there were none


def _vectors(summary: GloveFileSummary, dim: Optional[int]) -> Iterator[Tuple[int, str, numpy.ndarray]]:
    """Each (line number, word, float32 vector) of ``summary.path``, checked; fills in ``summary`` as it goes."""
    path = summary.path
    expected_from = "the dimension asked for" if dim else ""
    with _open_for_reading(path) as handle:
        for line_number, line in enumerate(handle, start=1):
            where = f"{path}, line {line_number}"
            escaped = None if line.isascii() else _ESCAPED_BYTE.search(line)
            if escaped is not None:
                raise GloveFormatError(
                    f"{where}: bytes that are not UTF-8 (the first at character {escaped.start() + 1}); "
                    "expected UTF-8 text"
                )
            if line_number == 1 and _is_header(line):
                summary.header = True
                numbers = [int(field) for field in line.split(" ")]
                if len(numbers) == 2:
                    if dim and numbers[1] != dim:
                        raise GloveFormatError(
                            f"{where}: the header line says the vectors have {numbers[1]} values; expected {dim} "
                            "(the dimension asked for)"
                        )
                    dim, expected_from = numbers[1], "as the header line (line 1) says"
                    summary.dim = dim
                continue
            fields = line.rstrip().split(" ")  # as AllenNLP splits a line
            if fields == [""]:
                continue  # a blank line: AllenNLP finds no word there either
            word, values = fields[0], fields[1:]
            if word == "":
                raise GloveFormatError(f"{where}: the line starts with a space; expected {LINE_EXPECTED}")
            if not values:
                tabs = " (it holds tabs: the separator is a single space)" if "\t" in line else ""
                raise GloveFormatError(f"{where}: {word[:40]!r} has no values after it{tabs}; expected {LINE_EXPECTED}")
            if not dim:
                dim, expected_from = len(values), f"as the first vector (line {line_number}) has"
                summary.dim = dim
            if len(values) != dim:
                if len(values) > dim and _word_holds_spaces(fields, dim):
                    summary.words_with_spaces.append(line_number)
                    continue
                raise GloveFormatError(
                    f"{where}: {word!r} has {counted(len(values), 'value')}; expected {dim}, {expected_from}"
                    + (f" (is this a {len(values)}-dimensional file?)" if summary.vectors == 0 else "")
                )
            vector = _numbers(values, word, where)
            summary.vectors += 1
            yield line_number, word, vector
    if summary.vectors == 0:
        raise GloveFormatError(f"{path} holds no word vectors; expected lines of {LINE_EXPECTED}")


def _numbers(values: List[str], word: str, where: str) -> numpy.ndarray:
    """``values`` as float32, converted as AllenNLP converts them; GloveFormatError names the first bad one."""
    try:
        vector = numpy.asarray(values, dtype="float32")
    except ValueError:
        for position, value in enumerate(values, start=1):
            try:
                numpy.float32(value)
            except ValueError:
                shown = "an empty value (two spaces in a row?)" if value == "" else f"{value[:40]!r}"
                raise GloveFormatError(
                    f"{where}: value {position} of {word!r} is {shown}, not a number; expected {LINE_EXPECTED}"
                ) from None
        raise  # numpy refused the list but no single value: not expected to happen
    if not numpy.isfinite(vector).all():
        position = int(numpy.flatnonzero(~numpy.isfinite(vector))[0])
        raise GloveFormatError(
            f"{where}: value {position + 1} of {word!r} is {values[position]!r}; expected finite numbers "
            "(AllenNLP would carry it into the random vectors of the words the file lacks)"
        )
    return vector


def _is_header(line: str) -> bool:
    """AllenNLP's test for a header line: one or two fields, all whole numbers."""
    fields = line.split(" ")
    if not 1 <= len(fields) <= 2:
        return False
    try:
        [int(field) for field in fields]
    except ValueError:
        return False
    return True


def _word_holds_spaces(fields: List[str], dim: int) -> bool:
    """Whether a line of too many fields is a word with spaces in it followed by ``dim`` numbers."""
    inner = fields[1:-dim]
    try:
        numpy.asarray(fields[-dim:], dtype="float32")
    except ValueError:
        return False
    return any(not _is_number(field) for field in inner)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _open_for_reading(path: Path) -> IO[str]:
    if not path.exists():
        raise GloveFormatError(f"{path} does not exist; expected a word-vector file in the GloVe text format")
    if path.is_dir():
        raise GloveFormatError(f"{path} is a folder; expected a word-vector file in the GloVe text format")
    if zipfile.is_zipfile(path) or tarfile.is_tarfile(path):
        raise GloveFormatError(
            f"{path} is an archive (zip or tar); extract the vectors file from it (e.g. unzip) and give that file"
        )
    opener = COMPRESSED.get(path.suffix.lower())
    if opener is None:
        return open(path, encoding="utf-8", errors="surrogateescape")
    return opener(path, "rt", encoding="utf-8", errors="surrogateescape")


def _open_for_writing(path: Path, compress: bool) -> IO[str]:
    if compress:
        raw_file = open(path, "wb")  # noqa: SIM115  # why: returned inside the wrapper, which closes it
        return _ClosingText(gzip.GzipFile(filename="", mode="wb", fileobj=raw_file, mtime=0), raw_file)
    return open(path, "w", encoding="utf-8", newline="\n")


class _ClosingText(io.TextIOWrapper):
    """A text wrapper over a GzipFile that also closes the file the GzipFile writes to."""

    def __init__(self, binary: gzip.GzipFile, raw_file: BinaryIO) -> None:
        super().__init__(binary, encoding="utf-8", newline="\n")
        self._raw_file = raw_file

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw_file.close()
