"""``allennlp elmo-embed``: ELMo vectors for a file of sentences, written to hdf5.

The command itself lives in :mod:`elmo_tasks.bilm.embed` (no AllenNLP needed, also runnable as
``python -m elmo_tasks.bilm.embed``); this registers it with the ``allennlp`` CLI.
"""

import argparse

from allennlp.commands.subcommand import Subcommand

from elmo_tasks.bilm.embed import DESCRIPTION, add_arguments, run
from elmo_tasks.cli_options import add_command


@Subcommand.register("elmo-embed")
class ElmoEmbed(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        return add_arguments(
            add_command(parser, self.name, DESCRIPTION, "Embed a text file with ELMo (hdf5 output).", run)
        )
