"""The one error for a data file that cannot be used, in a module that imports nothing heavy.

:mod:`elmo_tasks.tasks.data_files` documents it and re-exports it (every task reader raises it from
there). It is defined here, outside ``elmo_tasks.tasks`` (whose ``__init__`` imports every task and
with them AllenNLP), so that ``elmo-tasks bilm-perplexity``, which reads raw text without AllenNLP
(:mod:`elmo_tasks.bilm.raw_text`), raises and catches the very same class.
"""


class DataFileError(ValueError):
    """A data file that cannot be read; the message names the file and line, and what was expected."""
