"""``elmo-tasks`` (installed with the package) and ``python -m elmo_tasks``: ``allennlp`` with our plugin loaded.

AllenNLP finds a plugin's subcommands only in ``.allennlp_plugins`` in the working directory, in
``~/.allennlp/plugins``, or among the packages it knows by name (``allennlp_models``,
``allennlp_semparse``, ``allennlp_server``); ``--include-package`` is read only after the command
has been chosen, too late for ``elmo-embed`` and the others. This entry point imports
:mod:`elmo_tasks.plugin` first and then runs AllenNLP's own command line, so every command, ours
and AllenNLP's, works from any directory: ``elmo-tasks elmo-embed IN OUT``,
``elmo-tasks train CONFIG -s DIR``. Everything else is AllenNLP's (other plugins load as usual).
Every command starts with :func:`elmo_tasks.command_start.start_command` (the config defaults, the
thread policy, safe archive extraction, one-line input errors, the ELMo drop-in switch), which
importing the plugin does not do.

Except for the commands that need no AllenNLP (:data:`ALLENNLP_FREE_COMMANDS`): importing AllenNLP
takes about 14 s of CPU, several times what embedding or scoring a short file takes, so
``elmo-tasks elmo-embed`` and ``elmo-tasks bilm-perplexity`` parse their arguments with a plain
argparse parser and call the command's own ``run`` without importing AllenNLP, spaCy (except to
tokenize) or fairscale. Their parser is built by the same ``add_arguments`` as the AllenNLP
subcommand's (elmo_tasks/commands/registration.py) and gets the ``--include-package`` option that
AllenNLP adds to every subcommand, so ``--help``, defaults, errors and exit codes are the same on
both paths; ``--include-package`` hands the command line to AllenNLP, which imports the packages.
They start with :func:`elmo_tasks.command_start.start_process` (the thread policy and one-line input
errors: the steps that need no AllenNLP), and their ``--threads`` then applies as under AllenNLP.
"""

import argparse
import importlib
import os
import sys
from types import ModuleType
from typing import Dict, List

from elmo_tasks.cli_options import add_command
from elmo_tasks.command_start import start_process
from elmo_tasks.start_up_stops import command_starts, stopped_while_starting

#: Our commands that run without AllenNLP, and the module holding each one's ``DESCRIPTION``,
#: ``SUMMARY``, ``add_arguments`` and ``run`` (the module elmo_tasks/commands/ registers with AllenNLP).
ALLENNLP_FREE_COMMANDS: Dict[str, str] = {
    "elmo-embed": "elmo_tasks.bilm.embed",
    "bilm-perplexity": "elmo_tasks.bilm.perplexity",
}


def main() -> None:
    launched_as_module = os.path.basename(sys.argv[0]) == "__main__.py"
    prog = "python -m elmo_tasks" if launched_as_module else "elmo-tasks"
    arguments = sys.argv[1:]
    # Until the command runs (and installs its own stop handling), a stop ends the program with one line.
    with stopped_while_starting(prog):
        if arguments and arguments[0] in ALLENNLP_FREE_COMMANDS:
            run_without_allennlp(prog, arguments)
        else:
            run_allennlp(prog)


def run_allennlp(prog: str) -> None:
    """AllenNLP's command line on ``sys.argv``, with our plugin's commands registered."""
    # before AllenNLP imports fairscale, whose FutureWarnings users cannot act on
    import elmo_tasks.warnings_filter  # noqa: F401,I001
    from allennlp.commands import parse_args
    from allennlp.common.util import import_module_and_submodules

    import elmo_tasks.plugin  # noqa: F401  (registers our commands before AllenNLP builds its parser)
    from elmo_tasks.commands.allennlp_hook import prepared_command
    from elmo_tasks.commands.allennlp_stops import raise_on_sigterm

    # our plugin is imported already, so AllenNLP's import of it cannot prepare the command
    # (commands/allennlp_hook.py): it is prepared here (it starts with start_command), and run as
    # allennlp.commands.main would run it
    raise_on_sigterm()
    parser, args = parse_args(prog)
    if "func" not in dir(args):
        parser.print_help()
        return
    for package_name in getattr(args, "include_package", []):
        import_module_and_submodules(package_name)
    command_starts()
    prepared_command(args.func)(args)


def command_parser(prog: str, name: str) -> argparse.ArgumentParser:
    """The parser of ``PROG NAME ...`` for a command of :data:`ALLENNLP_FREE_COMMANDS`, built as
    ``allennlp.commands.parse_args`` builds AllenNLP's (a program parser, the command's subparser made by
    the same :func:`~elmo_tasks.cli_options.add_command` and ``add_arguments``, AllenNLP's
    ``--include-package``) with that one command: the same help, the same errors, without AllenNLP."""
    module = _command_module(name)
    parser = argparse.ArgumentParser(description="Run AllenNLP", prog=prog)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_allennlp_version()}")
    subparsers = parser.add_subparsers(title="Commands", metavar="")
    command = add_command(subparsers, name, module.DESCRIPTION, module.SUMMARY, module.run)
    module.add_arguments(command)
    # what parse_args adds to every subcommand whose class requires plugins (ours do)
    command.add_argument(
        "--include-package", type=str, action="append", default=[], help="additional packages to include"
    )
    return parser


def run_without_allennlp(prog: str, arguments: List[str]) -> None:
    """Parse ``arguments`` (a command of :data:`ALLENNLP_FREE_COMMANDS` and its arguments) and run the
    command, importing AllenNLP only for ``--include-package``."""
    args = command_parser(prog, arguments[0]).parse_args(arguments)
    if args.include_package:  # packages to import, which may register things: AllenNLP's way
        run_allennlp(prog)
        return
    start_process(load_torch=getattr(_command_module(arguments[0]), "LOADS_TORCH_AT_START", True))
    command_starts()
    args.func(args)


def _allennlp_version() -> str:
    """AllenNLP's version, as ``allennlp --version`` prints it, read from its installed metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("allennlp")
    except PackageNotFoundError:
        return "(not installed)"


def _command_module(name: str) -> ModuleType:
    return importlib.import_module(ALLENNLP_FREE_COMMANDS[name])


if __name__ == "__main__":
    main()
