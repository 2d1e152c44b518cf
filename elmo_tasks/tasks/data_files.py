"""Reading the tasks' data files: one way to open them, one error for a file that cannot be used.

Every reader of a benchmark file (SNLI jsonl, CoNLL-2005/2012 columns, SRL props, SQuAD json,
SST trees, CoNLL-2003) reports a problem in its data as a :class:`DataFileError` whose message
starts with the place, ``FILE, line N: `` (1-based, as editors count; SQuAD's one-line json
files name the question id instead), then says what was wrong and what was expected. The old
per-task names (``SnliFormatError``, ``SrlFormatError``, ``ConllFormatError``, ...) are kept as
aliases of it, so code that catches them keeps working.

Mistakes in a config, including a data path whose ``#`` suffixes cannot be read
(:class:`elmo_tasks.tasks.data_selection.DataPathError`), are ``ConfigurationError`` instead:
what to change is the config or the command line, not the file.

:func:`read_lines` is the one way the readers open a file: local or a URL (through AllenNLP's
download cache), plain or compressed (``.gz``, ``.bz2``, ``.lzma``; a name without ``.gz`` also finds
the gzipped file and the reverse, :mod:`elmo_tasks.tasks.official_files`), UTF-8; a line with bytes that
are not UTF-8 is a DataFileError naming its line, where Python's own decoder would name neither
the file nor the line.
"""

import re
from typing import Iterator, Optional

from allennlp.common.file_utils import open_compressed

from elmo_tasks.data_file_error import DataFileError  # defined there so that AllenNLP-free code raises it too
from elmo_tasks.tasks.official_files import with_or_without_gz

# What Python's "surrogateescape" error handler makes of bytes that are not UTF-8.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def first_bad_byte(line: str) -> Optional[int]:
    """The 0-based position of the first byte that was not UTF-8 in a line read with ``surrogateescape``."""
    if line.isascii():
        return None
    escaped = _ESCAPED_BYTE.search(line)
    return escaped.start() if escaped is not None else None


def not_utf8(position: int) -> str:
    """What to say about a line whose character ``position`` (0-based) was a byte that is not UTF-8."""
    return (
        f"bytes that are not UTF-8 (the first at character {position + 1}); expected UTF-8 text: convert the "
        "file, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8"
    )


def read_lines(path: str) -> Iterator[str]:
    """The lines of a UTF-8 text file (newlines kept), plain or compressed, local or a URL.

    Raises DataFileError, naming the file and line, at the first line that is not UTF-8, and
    FileNotFoundError for a missing file.
    """
    with open_compressed(with_or_without_gz(str(path)), encoding="utf-8", errors="surrogateescape") as handle:
        for line_number, line in enumerate(handle, start=1):
            position = first_bad_byte(line)
            if position is not None:
                raise DataFileError(f"{path}, line {line_number}: {not_utf8(position)}")
            yield line
