"""Finding and decoding raw training text, with errors a user can act on.

Kept apart from the dataset reader so the checks (empty file, binary file, bad encoding) are
plain functions that are easy to test and reuse. They live in :mod:`elmo_tasks.bilm.raw_text`,
which imports no AllenNLP (``elmo-tasks bilm-perplexity`` reads its text with them); this module
keeps their old names and makes a data path that names no file AllenNLP's ``ConfigurationError``.
"""

from typing import List

from allennlp.common.checks import ConfigurationError

from elmo_tasks.bilm import raw_text
from elmo_tasks.bilm.raw_text import PATH_SEPARATOR, LineStats, TextPathError, decoded_lines  # noqa: F401
from elmo_tasks.data_file_error import DataFileError

#: The name of raw-text errors before every data file had one error class (kept for code that catches it).
#: A data path that names no file is a ConfigurationError instead (the config is what to change).
RawTextError = DataFileError


def expand_data_path(data_path: str) -> List[str]:
    """The files a ``data_path`` names: files, directories (every ``*.txt`` below) or globs.

    Several may be joined with ``,``. The order is sorted and stable so runs are reproducible.
    A path that names no file is a ConfigurationError.
    """
    try:
        return raw_text.expand_data_path(data_path)
    except TextPathError as err:
        raise ConfigurationError(str(err)) from None
