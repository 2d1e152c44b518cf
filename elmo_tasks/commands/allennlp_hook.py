"""AllenNLP's own commands (``allennlp train/evaluate/predict/...``) start with :func:`start_command` too.

AllenNLP imports the plugins listed in ``.allennlp_plugins`` (or ``~/.allennlp/plugins``) only after
it has parsed the command line of one of its own commands (``allennlp.commands.parse_args``), or, for
``--include-package elmo_tasks.plugin``, in ``allennlp.commands.main`` just before it calls the
parsed ``args.func``; registering our own ``train`` could therefore not reach ``allennlp train``
(and would write over AllenNLP's name). So :func:`hook_the_starting_command`, which the plugin calls
as it is imported, looks up the stack for that AllenNLP frame and puts :func:`start_command` in front
of the ``args.func`` it is about to call: the setup runs when the command starts, before it reads its
config (so ``std.extVar`` finds the defaults), ``train`` checks its data files first
(elmo_tasks/commands/train_data_check.py), and a Ctrl-C or SIGTERM ends the command with one line
(elmo_tasks/commands/allennlp_stops.py): :func:`prepared_command`, which ``elmo-tasks`` uses too. A
distributed training worker of ``allennlp train`` (``_train_worker``, a spawned process that imports the
plugins at its start) runs :func:`start_command` at once.

Imported any other way (``import elmo_tasks.plugin`` in Python, ``Predictor.from_path``, our own
commands, which wrap their run where they are registered) the plugin finds no such frame and does
nothing but register names.
"""

import argparse
import functools
import os
import sys
from types import FrameType
from typing import Any, Optional

from elmo_tasks.command_start import CommandRun, start_command
from elmo_tasks.commands.allennlp_stops import ending_with_one_line
from elmo_tasks.commands.train_data_check import stop_if_data_is_missing

# AllenNLP's frames that import plugins: (module, function)
COMMAND_LINE = ("allennlp.commands", ("parse_args", "main"))
TRAINING_WORKER = ("allennlp.commands.train", "_train_worker")


def prepared_command(run: CommandRun) -> CommandRun:
    """``run`` (an AllenNLP command's ``args.func``) as our commands run: :func:`start_command` first, then
    for ``train`` the check of its data files (elmo_tasks/commands/train_data_check.py), and one line on
    SIGINT or SIGTERM (elmo_tasks/commands/allennlp_stops.py)."""
    prog = os.path.basename(sys.argv[0]) or "allennlp"

    @functools.wraps(run)
    def prepared(args: argparse.Namespace) -> Any:
        def checked_run() -> Any:
            start_command()  # the config defaults too, before the check reads the config
            stop_if_data_is_missing(prog, args)
            return run(args)

        return ending_with_one_line(checked_run, prog, sys.argv[1:])

    return prepared


def hook_the_starting_command() -> None:
    """Runs :func:`start_command` at the start of the AllenNLP command that is importing our plugin,
    if one is (see the module docstring); otherwise does nothing."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        module, function = frame.f_globals.get("__name__"), frame.f_code.co_name
        if module == COMMAND_LINE[0] and function in COMMAND_LINE[1]:
            # before parsing (`allennlp --help`, or one of our commands) `args` is not set yet: nothing to do
            args = frame.f_locals.get("args")
            if isinstance(args, argparse.Namespace) and callable(getattr(args, "func", None)):
                args.func = prepared_command(args.func)
            return
        if (module, function) == TRAINING_WORKER:
            start_command()
            return
        frame = frame.f_back
