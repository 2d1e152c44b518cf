"""Finding and decoding raw training text, with errors a user can act on.

Kept apart from the dataset reader so the checks (empty file, binary file, bad encoding) are
plain functions that are easy to test and reuse.
"""

import glob
import html
import logging
import os
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional

from allennlp.common.checks import ConfigurationError

from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.wording import counted

logger = logging.getLogger(__name__)

#: Separates several paths or globs in one ``data_path`` (``train_data_path`` is one string).
PATH_SEPARATOR = ","


#: The name of raw-text errors before every data file had one error class (kept for code that catches it).
#: A data path that names no file is a ConfigurationError instead (the config is what to change).
RawTextError = DataFileError


def expand_data_path(data_path: str) -> List[str]:
    """The files a ``data_path`` names: files, directories (every ``*.txt`` below) or globs.

    Several may be joined with ``,``. The order is sorted and stable so runs are reproducible.
    """
    files: List[str] = []
    for part in (p.strip() for p in str(data_path).split(PATH_SEPARATOR)):
        if not part:
            continue
        if os.path.isdir(part):
            found = sorted(glob.glob(os.path.join(part, "**", "*.txt"), recursive=True))
            if not found:
                raise ConfigurationError(f"directory {part} holds no *.txt files; point the data path at text files")
        elif os.path.isfile(part):
            found = [part]
        else:
            found = sorted(f for f in glob.glob(part, recursive=True) if os.path.isfile(f))
            if not found:
                raise ConfigurationError(
                    f"no file matches {part!r} (a file, a directory of *.txt files or a glob is expected)"
                )
        files.extend(found)
    if not files:
        raise ConfigurationError(f"data path {data_path!r} names no files")
    return files


@dataclass
class LineStats:
    """What was read and what was left out, so nothing is skipped silently."""

    lines: int = 0
    blank: int = 0
    markup: int = 0
    #: lines that were not UTF-8 and were decoded with the reader's ``fallback_encoding``
    fallback_decoded: int = 0
    per_file_text_lines: Dict[str, int] = field(default_factory=dict)

    def log(self, files: List[str]) -> None:
        logger.info(
            "read %s from %s: %d blank, %d WikiExtractor markup/title lines dropped, "
            "%d not UTF-8 and decoded with the fallback encoding",
            counted(self.lines, "line"),
            counted(len(files), "file"),
            self.blank,
            self.markup,
            self.fallback_decoded,
        )


def decoded_lines(
    path: str,
    stats: LineStats,
    drop_wikiextractor_markup: bool = False,
    unescape_html: bool = False,
    fallback_encoding: Optional[str] = None,
) -> Iterator[str]:
    """Yield the text lines of ``path`` (``\\r\\n`` handled), stripped; blank lines as ``""``.

    Raises :class:`DataFileError` naming the file and line for NUL bytes, for a file without any
    text, and for invalid UTF-8 unless ``fallback_encoding`` (e.g. ``"cp1252"``) is given: real
    corpora mix in a few Latin-1 lines, and such a line is then decoded with it and counted.
    """
    text_lines = 0
    file_lines = 0
    after_doc_open = False
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = _decoded_line(raw, path, number, stats, fallback_encoding)
            stats.lines += 1
            file_lines = number
            line = line.strip()
            if drop_wikiextractor_markup:
                if line.startswith("<doc ") or line == "</doc>":
                    stats.markup += 1
                    after_doc_open = line.startswith("<doc ")
                    continue
                if after_doc_open:  # the article title repeats on the line after <doc ...>
                    after_doc_open = False
                    stats.markup += 1
                    continue
            if not line:
                stats.blank += 1
                yield ""
                continue
            if unescape_html:
                line = html.unescape(line)
            text_lines += 1
            yield line
    stats.per_file_text_lines[path] = text_lines
    if text_lines == 0:
        raise DataFileError(
            f"{path} contains no text ({file_lines} line(s), all blank or markup). "
            "Remove it from the data path or give a file with one sentence (or paragraph) per line."
        )


def _decoded_line(raw: bytes, path: str, number: int, stats: LineStats, fallback_encoding: Optional[str]) -> str:
    """Line ``number`` of ``path`` as text: UTF-8, else ``fallback_encoding`` (counted), else an error."""
    if b"\x00" in raw:
        raise DataFileError(
            f"{path}, line {number}: NUL byte found; this looks like a binary file, not text. "
            "Give the biLM reader UTF-8 text files (one sentence or paragraph per line)."
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        if fallback_encoding is None:
            raise DataFileError(
                f"{path}, line {number}: not valid UTF-8 ({err.reason} at byte {err.start} of the line). "
                "Convert the file to UTF-8 first (e.g. `iconv -f latin1 -t utf-8`), remove it if "
                'it is not text, or set the reader\'s fallback_encoding (e.g. "cp1252").'
            ) from None
        stats.fallback_decoded += 1
        if stats.fallback_decoded <= 10:
            logger.warning("%s, line %d: not UTF-8, decoded as %s", path, number, fallback_encoding)
        return raw.decode(fallback_encoding, errors="replace")
