"""``allennlp build-word-vectors``: GloVe-format word vectors trained on a corpus of our own.

The command itself lives in :mod:`elmo_tasks.word_vectors.command` (no AllenNLP needed, also runnable as
``python -m elmo_tasks.word_vectors``); this registers it with the ``allennlp`` CLI.
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from elmo_tasks.cli_options import add_command
from elmo_tasks.word_vectors.command import DESCRIPTION, NAME, add_arguments, run


@Subcommand.register(NAME)
class BuildWordVectors(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        return add_arguments(
            add_command(parser, self.name, DESCRIPTION, "Train word vectors on a corpus (GloVe text format).", run)
        )
