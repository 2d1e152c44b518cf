"""One way for our commands to show an option's default in ``--help``: once, as ``(default: X)``.

AllenNLP's parser for subcommands appends ``(default = X)`` to the help of every option added with
a ``default``, so an option whose help gave its default showed it twice, while the same option under
``python -m elmo_tasks.bilm.embed`` (plain argparse) showed it once. :func:`add_option` writes the
default into the help itself and sets it with ``set_defaults``, which neither parser annotates, so
both print the same help. Options whose default is worked out at run time (``None`` here) say what
it is in their own help, in the same ``(default: ...)`` form. No AllenNLP import: the biLM's plain
PyTorch command uses it too.
"""

import argparse
import sys
from typing import Any, Callable, NoReturn, Optional, Sequence


def add_option(
    parser: argparse.ArgumentParser,
    *flags: str,
    default: Any,
    help: str,
    shown: Optional[str] = None,
    **kwargs: Any,
) -> None:
    """``parser.add_argument(*flags, **kwargs)`` with ``default``, whose help ends in ``(default: X)``;
    ``shown`` replaces X where the value itself says little (e.g. a long path)."""
    parser.add_argument(*flags, help=f"{help} (default: {default if shown is None else shown})", **kwargs)
    parser.set_defaults(**{kwargs.get("dest") or option_dest(flags): default})


def add_thread_options(parser: argparse.ArgumentParser, workers_help: str) -> None:
    """``--threads`` and ``--workers`` of a command that splits its batches over worker processes of one
    thread each (the policy of :mod:`elmo_tasks.threads`); both defaults are worked out at run time.
    ``workers_help`` says what the command's workers do and when their default is one."""
    parser.add_argument(
        "--threads",
        type=int,
        help="torch threads of one process (default: OMP_NUM_THREADS if set, else 1; see --workers)",
    )
    parser.add_argument("--workers", type=int, help=workers_help)


def option_dest(flags: Sequence[str]) -> str:
    """The attribute an option is stored in, as argparse names it: the first long flag (else the first
    flag) without its dashes, inner dashes as underscores (``--batch-size`` -> ``batch_size``).
    (AllenNLP's subcommand parser does not return the action that would say it.)"""
    long_flags = [flag for flag in flags if flag.startswith("--")]
    return (long_flags or list(flags))[0].lstrip("-").replace("-", "_")


def add_command(
    subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]",
    name: str,
    description: str,
    summary: str,
    run: Callable[[argparse.Namespace], Any],
) -> argparse.ArgumentParser:
    """The parser of one subcommand: ``description`` is its own ``--help``, ``summary`` its line in the
    list of commands, and ``run`` is called with the parsed arguments (AllenNLP calls ``args.func``)."""
    command_parser = subparsers.add_parser(name, description=description, help=summary)
    command_parser.set_defaults(func=run)
    return command_parser


class CommandError:
    """Ends a command as argparse ends a bad command line: ``COMMAND: error: MESSAGE``, one line on
    stderr, exit status 2, no traceback. A command module makes one, ``_fail = CommandError("name")``,
    and calls ``_fail(message)``."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __call__(self, message: object) -> NoReturn:
        print(f"{self.command}: error: {message}", file=sys.stderr)
        sys.exit(2)


#: Each process's cap on the vectors of encoded words it keeps (``--word-cache-mb``; docs/BENCHMARKS.md).
DEFAULT_WORD_CACHE_MB = 64


def add_word_cache_option(parser: argparse.ArgumentParser) -> None:
    """``--word-cache-mb`` of the commands that run a biLM over a file (:mod:`elmo_tasks.bilm.seen_words`)."""
    add_option(
        parser,
        "--word-cache-mb",
        type=int,
        default=DEFAULT_WORD_CACHE_MB,
        help="on the CPU, keep the vectors of the words already encoded (the biLM's token layer), up to this "
        "many MB per process, so that frequent words skip the character CNN; 0 turns it off",
    )
