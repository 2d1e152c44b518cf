"""A text file of one sentence per line: a fast check of the whole file, then streaming it.

The check runs before any model is loaded, so a bad line 5,001 is reported in a second rather
than after minutes of embedding, and every bad line is reported at once.
"""

import os
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Tuple

from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.counted_nouns import counted

Tokenizer = Callable[[str], List[str]]

# Whitespace-separated tokens a line may hold before we call it a paragraph or a file without
# line breaks rather than a sentence (the biLM would run it as one sequence).
DEFAULT_MAX_TOKENS = 1000
SHOWN_PROBLEMS = 10


class SentenceFileError(BilmError):
    """The input cannot be embedded as it is (missing, empty, bad lines)."""


@dataclass
class SentenceFileCheck:
    """What the pre-pass found. Line numbers are 1-based, as editors show them."""

    path: str
    num_lines: int = 0
    empty_lines: List[int] = field(default_factory=list)
    # (line number, what is wrong) for lines that cannot be embedded even with --skip-empty-lines
    bad_lines: List[Tuple[int, str]] = field(default_factory=list)

    def problems(self, skip_empty_lines: bool) -> List[Tuple[int, str]]:
        empty = [] if skip_empty_lines else [(n, "empty line") for n in self.empty_lines]
        return sorted(empty + self.bad_lines)

    def raise_for_problems(self, skip_empty_lines: bool) -> None:
        """Raise one :class:`SentenceFileError` listing the first bad lines and how many there are."""
        problems = self.problems(skip_empty_lines)
        if problems:
            shown = "; ".join(f"line {n}: {what}" for n, what in problems[:SHOWN_PROBLEMS])
            more = f"; and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
            advice = ["fix these lines"]
            if self.empty_lines and not skip_empty_lines:
                advice.append(
                    "or pass --skip-empty-lines to leave empty lines out (every other line keeps its 0-based "
                    "line number as its dataset name)"
                )
            raise SentenceFileError(
                f"{self.path}: {len(problems)} of {counted(self.num_lines, 'line')} cannot be embedded: {shown}{more}. "
                f"Nothing was embedded; {' '.join(advice)}."
            )
        sentences = self.num_lines - len(self.empty_lines)
        if sentences == 0:
            what = "is empty" if self.num_lines == 0 else f"holds only empty lines ({self.num_lines})"
            raise SentenceFileError(
                f"{self.path} {what}: there is nothing to embed; give a file with one sentence per line"
            )


def refuse_same_file(input_path: str, output_path: str) -> None:
    """Raise if writing ``output_path`` would overwrite ``input_path`` (same path, symlink or hard link)."""
    try:
        same = os.path.samefile(input_path, output_path)
    except OSError:  # one of them does not exist (yet): they cannot be the same file
        same = False
    if same:
        raise BilmError(
            f"the output file {output_path} is the input file {input_path} (the same file, maybe through a link); "
            "writing it would destroy the input: give another output path"
        )


def check_sentence_file(path: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> SentenceFileCheck:
    """Read the whole file once (no tokenizer, no model) and note every line that cannot be embedded:
    bytes that are not UTF-8, empty (or whitespace-only) lines, and lines of more than ``max_tokens``
    whitespace-separated tokens."""
    check = SentenceFileCheck(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115  # why: the `with handle` below closes it; this `try` is open's alone
    except OSError as err:
        raise SentenceFileError(f"cannot read the input file {path}: {err.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            check.num_lines = number
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                check.bad_lines.append(
                    (
                        number,
                        f"bytes that are not UTF-8 ({err.reason} at byte {err.start}); re-encode the file as UTF-8",
                    )
                )
                continue
            num_tokens = len(text.split())
            if num_tokens == 0:
                check.empty_lines.append(number)
            elif num_tokens > max_tokens:
                check.bad_lines.append(
                    (number, f"{num_tokens} tokens, more than --max-tokens {max_tokens} (is it one sentence?)")
                )
    return check


def read_sentences(
    path: str, tokenize: Optional[Tokenizer] = None, skipped_empty_lines: Optional[List[int]] = None
) -> Iterator[Tuple[int, str, List[str]]]:
    """Yield ``(index, text, tokens)`` per line (0-based index, which names the line's output).

    Lines are split on whitespace unless ``tokenize`` is given. Empty lines are left out only
    when a ``skipped_empty_lines`` list is given, which receives their 0-based indices;
    otherwise they raise, as do bytes that
    are not UTF-8, naming the 1-based line number. :func:`check_sentence_file` finds these up
    front; the checks here keep the stream honest if the file changed since.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115  # why: the `with handle` below closes it; this `try` is open's alone
    except OSError as err:
        raise SentenceFileError(f"cannot read the input file {path}: {err.strerror}") from None
    with handle:
        for index, raw in enumerate(handle):
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise SentenceFileError(
                    f"{path}, line {index + 1}: bytes that are not UTF-8 ({err.reason} at byte {err.start}); "
                    "re-encode the file as UTF-8"
                ) from None
            if skipped_empty_lines is not None and not text.split():
                skipped_empty_lines.append(index)
                continue
            tokens = tokenize(text) if tokenize is not None else text.split()
            if not tokens:
                raise SentenceFileError(
                    f"{path}, line {index + 1}: empty line; every line must hold one sentence "
                    "(remove it, or pass --skip-empty-lines)"
                )
            yield index, text, tokens
