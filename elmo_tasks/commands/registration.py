"""One way to register an ``allennlp`` subcommand of elmo-tasks: its name, help texts, arguments and run.

AllenNLP finds a subcommand as a registered :class:`Subcommand` subclass whose ``add_subparser`` builds
its parser. Every command of ours builds it the same way (:func:`elmo_tasks.cli_options.add_command`,
then its own arguments), so :func:`register_command` makes that class from those pieces.
"""

import argparse
from typing import Any, Callable, Type

from allennlp.commands.subcommand import Subcommand

from elmo_tasks.cli_options import add_command
from elmo_tasks.command_start import with_command_start


def register_command(
    name: str,
    description: str,
    summary: str,
    add_arguments: Callable[[argparse.ArgumentParser], Any],
    run: Callable[[argparse.Namespace], Any],
) -> Type[Subcommand]:
    """Registers ``allennlp NAME``: ``description`` is its own ``--help``, ``summary`` its line in
    ``allennlp --help``, ``add_arguments`` adds its arguments and ``run`` is called with them parsed.
    Returns the registered class, named after the command (``squad-score`` -> ``SquadScore``).
    ``run`` starts with :func:`elmo_tasks.command_start.start_command` (importing the plugin does not)."""

    class Command(Subcommand):
        def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
            command_parser = add_command(parser, self.name, description, summary, with_command_start(run))
            add_arguments(command_parser)
            return command_parser

    Command.__name__ = Command.__qualname__ = "".join(word.capitalize() for word in name.split("-"))
    return Subcommand.register(name)(Command)
