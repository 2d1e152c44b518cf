"""``allennlp build-word-vectors``: GloVe-format word vectors trained on a corpus of our own.

The command itself lives in :mod:`elmo_tasks.word_vectors.build_command` (no AllenNLP needed, also runnable as
``python -m elmo_tasks.word_vectors``); this registers it with the ``allennlp`` CLI.
"""

from elmo_tasks.commands.registration import register_command
from elmo_tasks.word_vectors.build_command import DESCRIPTION, NAME, add_arguments, run

BuildWordVectors = register_command(
    NAME, DESCRIPTION, "Train word vectors on a corpus (GloVe text format).", add_arguments, run
)
