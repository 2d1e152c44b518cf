"""Streaming a text file of one sentence per line, with errors that name the line."""
from typing import Callable, Iterator, List, Optional, Tuple

from elmo_tasks.bilm.errors import BilmError

Tokenizer = Callable[[str], List[str]]


class SentenceFileError(BilmError):
    """A line of the input cannot be embedded (empty, undecodable)."""


def read_sentences(path: str, tokenize: Optional[Tokenizer] = None) -> Iterator[Tuple[int, str, List[str]]]:
    """Yield ``(index, text, tokens)`` per line (0-based index), never skipping a line.

    Lines are split on whitespace unless ``tokenize`` is given. An empty line or bytes that
    are not UTF-8 raise :class:`SentenceFileError` naming the 1-based line number: skipping
    them would silently shift every later line's index in the output.
    """
    try:
        handle = open(path, "rb")
    except OSError as err:
        raise SentenceFileError(f"cannot read {path}: {err.strerror}") from None
    with handle:
        for index, raw in enumerate(handle):
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise SentenceFileError(
                    f"{path}, line {index + 1}: bytes that are not UTF-8 ({err.reason} at byte {err.start}); "
                    "re-encode the file as UTF-8"
                ) from None
            tokens = tokenize(text) if tokenize is not None else text.split()
            if not tokens:
                raise SentenceFileError(
                    f"{path}, line {index + 1}: empty line; every line must hold one sentence "
                    "(remove empty lines so line numbers and output keys stay aligned)"
                )
            yield index, text, tokens

