"""Checking an AllenNLP vocabulary folder (``non_padded_namespaces.txt`` and one ``NAMESPACE.txt`` per
namespace) for what ``Vocabulary.from_files`` would fail on or silently misread.

AllenNLP 2.10.1 reads such a folder (``vocabulary: {type: from_files, directory: ...}``, the
``vocabulary/`` of every model archive, the biLM's exported ``vocabulary/``) without checking it:

- a missing ``non_padded_namespaces.txt``, or a folder inside the vocabulary folder, ends in a
  ``FileNotFoundError`` or ``IsADirectoryError`` traceback;
- a byte that is not UTF-8 ends in a ``UnicodeDecodeError`` naming neither the file nor the line;
- a token on two lines (or the padding token written into a padded namespace, whose row 0 AllenNLP
  adds itself) is taken silently: both lines' indices map back to the token, the namespace counts
  one entry fewer than its largest index, and training then fails far away, on an index out of range.

:func:`check_vocabulary_folder` (and :func:`check_vocabulary_files` for the files of an archive's
``vocabulary/``, read without extracting it) raises :class:`VocabularyFileError` at the first such
problem: ``FILE, line N: what was wrong; expected ...``, lines 1-based as editors count. No AllenNLP
import: the names below are AllenNLP's defaults, which our configs keep.
"""

import os
import re
from typing import Dict, Optional

NAMESPACE_PADDING_FILE = "non_padded_namespaces.txt"  # allennlp.data.vocabulary.NAMESPACE_PADDING_FILE
PADDING_TOKEN = "@@PADDING@@"  # allennlp.data.vocabulary.DEFAULT_PADDING_TOKEN
OOV_TOKEN = "@@UNKNOWN@@"  # allennlp.data.vocabulary.DEFAULT_OOV_TOKEN
FOLDER_EXPECTED = (
    f"an AllenNLP vocabulary folder ({NAMESPACE_PADDING_FILE} and one NAMESPACE.txt per namespace, as "
    "`allennlp train` or Vocabulary.save_to_files writes it)"
)
_REMEDY = "re-create the vocabulary (or restore the folder from where it was written)"
# AllenNLP's _NEW_LINE_REGEX: a namespace file's lines
_LINE_BREAK = re.compile(r"\n|\r\n")


class VocabularyFileError(ValueError):
    """A vocabulary folder or namespace file that AllenNLP would fail on or misread; the message names
    the file (and line) and what was expected."""


def check_vocabulary_folder(directory: str) -> None:
    """Raises :class:`VocabularyFileError` at the first problem of the vocabulary folder ``directory``."""
    if not os.path.exists(directory):
        raise VocabularyFileError(f"{directory} does not exist; expected {FOLDER_EXPECTED}")
    if not os.path.isdir(directory):
        raise VocabularyFileError(f"{directory} is a file; expected {FOLDER_EXPECTED}")
    files: Dict[str, bytes] = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith("."):  # AllenNLP skips these (its .lock)
            continue
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            raise VocabularyFileError(
                f"{path} is a folder; expected only namespace files (NAMESPACE.txt) in {FOLDER_EXPECTED}"
            )
        with open(path, "rb") as handle:
            files[name] = handle.read()
    check_vocabulary_files(directory, files)


def check_vocabulary_files(directory: str, files: Dict[str, bytes]) -> None:
    """Raises :class:`VocabularyFileError` at the first problem of a vocabulary folder's files, given by
    name (``files``: file name -> contents; hidden files left out); ``directory`` names the folder in
    messages (for an archive: ``ARCHIVE, member vocabulary``)."""
    if NAMESPACE_PADDING_FILE not in files:
        raise VocabularyFileError(f"{directory} has no {NAMESPACE_PADDING_FILE}; expected {FOLDER_EXPECTED}")
    patterns = [line.strip() for line in _text_lines(directory, NAMESPACE_PADDING_FILE, files[NAMESPACE_PADDING_FILE])]
    for name, contents in sorted(files.items()):
        if name == NAMESPACE_PADDING_FILE:
            continue
        namespace = name.replace(".txt", "")  # as AllenNLP names it
        padded = not any(_namespace_match(pattern, namespace) for pattern in patterns)
        _check_namespace_file(directory, name, contents, padded)


def _check_namespace_file(directory: str, name: str, contents: bytes, padded: bool) -> None:
    """One token per line, each once; in a padded namespace, not the padding token (AllenNLP's row 0)."""
    first_line: Dict[str, int] = {}
    for line_number, line in enumerate(_text_lines(directory, name, contents), start=1):
        token = line.replace("@@NEWLINE@@", "\n")
        where = f"{os.path.join(directory, name)}, line {line_number}"
        if padded and token == PADDING_TOKEN:
            raise VocabularyFileError(
                f"{where}: the padding token {PADDING_TOKEN}, which AllenNLP adds itself as row 0 of a padded "
                f"namespace; expected the namespace's other tokens only (or the namespace listed in "
                f"{NAMESPACE_PADDING_FILE}): {_REMEDY}"
            )
        if token in first_line:
            raise VocabularyFileError(
                f"{where}: {token!r} repeats line {first_line[token]}; expected each token once (AllenNLP would "
                f"size the namespace one entry short and fail later on an index out of range): {_REMEDY}"
            )
        first_line[token] = line_number


def _text_lines(directory: str, name: str, contents: bytes) -> "list[str]":
    """The lines of a namespace file as AllenNLP splits them (a last empty line dropped); a
    VocabularyFileError names the first line that is not UTF-8."""
    try:
        text = contents.decode("utf-8")
    except UnicodeDecodeError as error:
        line_number = contents.count(b"\n", 0, error.start) + 1
        line_start = contents.rfind(b"\n", 0, error.start) + 1
        column = len(contents[line_start : error.start].decode("utf-8", errors="replace")) + 1
        raise VocabularyFileError(
            f"{os.path.join(directory, name)}, line {line_number}: bytes that are not UTF-8 (the first at character "
            f"{column}); expected UTF-8 text, one token per line: {_REMEDY}"
        ) from None
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _namespace_match(pattern: str, namespace: str) -> bool:
    """AllenNLP's ``namespace_match``: ``*tags`` matches every namespace ending in ``tags``."""
    if pattern[:1] == "*" and namespace.endswith(pattern[1:]):
        return True
    return pattern == namespace


def vocabulary_folder_problem(directory: str) -> Optional[str]:
    """The one-line problem :func:`check_vocabulary_folder` finds in ``directory``, or None."""
    try:
        check_vocabulary_folder(directory)
    except VocabularyFileError as error:
        return str(error)
    except OSError as error:  # unreadable: say so rather than hide the original failure
        return f"cannot read the vocabulary folder {directory}: {error.strerror or error}"
    return None
