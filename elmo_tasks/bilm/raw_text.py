"""Raw text to biLM sentences: finding the files, decoding their lines, cutting sentences. No AllenNLP.

How the ``bilm_raw_text`` reader (:mod:`elmo_tasks.tasks.lm.reader`) reads its text for training,
and how ``bilm-perplexity`` reads the text it scores. It lives here, apart from the reader, so that
``elmo-tasks bilm-perplexity`` can read text the same way without importing AllenNLP (several
seconds of start-up): the reader and :mod:`elmo_tasks.tasks.lm.text_source` delegate to it and turn
its :class:`TextPathError` and :class:`TextSettingError` into AllenNLP's ``ConfigurationError``
(a config or command line to change), while a file's own problems are a :class:`DataFileError`
naming the file and line on both paths.

Tokens are whatever the tokenizer returns (AllenNLP ``Token`` objects in the reader, plain strings
in ``bilm-perplexity``); ``text_of`` says what text a token holds.
"""

import glob
import html
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar

from elmo_tasks.counted_nouns import counted
from elmo_tasks.data_file_error import DataFileError

logger = logging.getLogger(__name__)

#: Separates several paths or globs in one ``data_path`` (``train_data_path`` is one string).
PATH_SEPARATOR = ","
#: What the settings' errors name as their owner, as the registered reader is known in configs.
READER_NAME = "the bilm_raw_text reader"
TEXT_FORMATS = ("sentence_per_line", "running")

_SENTENCE_END = re.compile(r"^[.!?]+$")
# A file without blank lines (e.g. one sentence per line) would be one huge "paragraph": cut it
# at a line end once it is this long, far below spaCy's max_length, so memory stays small.
_MAX_PARAGRAPH_CHARS = 20_000

TokenT = TypeVar("TokenT")


class TextPathError(ValueError):
    """A data path that names no file: what to change is the path (a ConfigurationError under AllenNLP)."""


class TextSettingError(ValueError):
    """A reading setting that cannot be used (a ConfigurationError under AllenNLP)."""


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
                raise TextPathError(f"directory {part} holds no *.txt files; point the data path at text files")
        elif os.path.isfile(part):
            found = [part]
        else:
            found = sorted(f for f in glob.glob(part, recursive=True) if os.path.isfile(f))
            if not found:
                raise TextPathError(
                    f"no file matches {part!r} (a file, a directory of *.txt files or a glob is expected)"
                )
        files.extend(found)
    if not files:
        raise TextPathError(f"data path {data_path!r} names no files")
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


def check_reading_settings(text_format: str, max_sentence_length: int, fallback_encoding: Optional[str]) -> None:
    """Raises :class:`TextSettingError` for the first setting :class:`RawTextSentences` cannot use."""
    if text_format not in TEXT_FORMATS:
        raise TextSettingError(f"text_format must be 'sentence_per_line' or 'running', got {text_format!r}")
    # the wording of elmo_tasks.setting_checks.positive_count, which imports AllenNLP
    if isinstance(max_sentence_length, bool) or not isinstance(max_sentence_length, int) or max_sentence_length < 1:
        raise TextSettingError(
            f"{READER_NAME}: max_sentence_length must be a positive integer, got {max_sentence_length!r}"
        )
    if fallback_encoding is not None:
        try:
            "".encode(fallback_encoding)
        except LookupError:
            raise TextSettingError(f"fallback_encoding {fallback_encoding!r} is not a codec Python knows") from None


class RawTextSentences(Generic[TokenT]):
    """Reads plain text as sentences of tokens, as the biLM is trained on it.

    ``text_format``:
      * ``"sentence_per_line"``: every non-blank line is one sentence;
      * ``"running"``: consecutive non-blank lines form a paragraph (hard-wrapped news, books),
        split into sentences after ``.``, ``!`` or ``?`` tokens.
    Sentences longer than ``max_sentence_length`` tokens are cut into pieces (counted, logged).
    Invalid UTF-8 is an error naming the file and line, unless ``fallback_encoding`` is set
    (e.g. ``"cp1252"``): such lines are then decoded with it and counted in the log.
    Bad settings raise :class:`TextSettingError` at construction, in the order the reader checks them.
    """

    def __init__(
        self,
        tokenize: Callable[[str], Sequence[TokenT]],
        text_of: Callable[[TokenT], str],
        text_format: str = "sentence_per_line",
        max_sentence_length: int = 100,
        drop_wikiextractor_markup: bool = False,
        unescape_html: bool = False,
        fallback_encoding: Optional[str] = None,
    ) -> None:
        check_reading_settings(text_format, max_sentence_length, fallback_encoding)
        self.tokenize, self.text_of = tokenize, text_of
        self.text_format = text_format
        self.max_sentence_length = max_sentence_length
        self.drop_wikiextractor_markup = drop_wikiextractor_markup
        self.unescape_html = unescape_html
        self.fallback_encoding = fallback_encoding

    def sentences(self, file_path: str) -> Iterator[List[TokenT]]:
        """Every sentence of ``file_path`` (cleaned, tokenized, cut), in file order: what training
        reads and what ``bilm-perplexity`` scores."""
        files = expand_data_path(file_path)
        stats = LineStats()
        counts = {"sentences": 0, "tokens": 0, "split": 0}
        yield from self.sentences_of_files(files, stats, counts)
        if counts["sentences"] == 0:
            raise DataFileError(f"{file_path}: no sentence could be read (the tokenizer produced no tokens)")
        stats.log(files)
        logger.info(
            "%s, %s; %d over max_sentence_length=%d cut into pieces",
            counted(counts["sentences"], "sentence"),
            counted(counts["tokens"], "token"),
            counts["split"],
            self.max_sentence_length,
        )

    def sentences_of_files(self, files: List[str], stats: LineStats, counts: Dict[str, int]) -> Iterator[List[TokenT]]:
        """The sentences of ``files``, counted into ``stats`` and ``counts`` (sentences, tokens, split)."""
        for path in files:
            lines = decoded_lines(
                path, stats, self.drop_wikiextractor_markup, self.unescape_html, self.fallback_encoding
            )
            for text in self.units(lines):
                tokens = [t for t in self.tokenize(text) if self.text_of(t).strip()]
                pieces = self.split_sentences(tokens) if self.text_format == "running" else [tokens]
                for sentence in pieces:
                    if not sentence:
                        continue
                    if len(sentence) > self.max_sentence_length:
                        counts["split"] += 1
                    for start in range(0, len(sentence), self.max_sentence_length):
                        chunk = sentence[start : start + self.max_sentence_length]
                        counts["sentences"] += 1
                        counts["tokens"] += len(chunk)
                        yield chunk

    def units(self, lines: Iterable[str]) -> Iterator[str]:
        """Lines, or paragraphs (blank-line separated) for running text."""
        if self.text_format == "sentence_per_line":
            yield from (line for line in lines if line)
            return
        paragraph: List[str] = []
        size = 0
        for line in lines:
            if line:
                paragraph.append(line)
                size += len(line) + 1
            if paragraph and (not line or size >= _MAX_PARAGRAPH_CHARS):
                yield " ".join(paragraph)
                paragraph, size = [], 0
        if paragraph:
            yield " ".join(paragraph)

    def split_sentences(self, tokens: List[TokenT]) -> List[List[TokenT]]:
        """Cut a paragraph after sentence-final punctuation (simple, but enough for LM training)."""
        sentences: List[List[TokenT]] = [[]]
        for token in tokens:
            sentences[-1].append(token)
            if _SENTENCE_END.match(self.text_of(token)):
                sentences.append([])
        return [s for s in sentences if s]
