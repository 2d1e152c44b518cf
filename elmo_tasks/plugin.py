"""The AllenNLP plugin: importing this module registers every model, reader, predictor and command, and
does nothing else.

``.allennlp_plugins`` names it, so ``allennlp`` imports it before it runs a command; Python code that
uses our registered names without the CLI imports it too (``import elmo_tasks.plugin``). What a command
needs besides the names (the defaults of the environment variables the experiments read, the thread
policy, safe archive extraction, one-line input errors, the ELMo drop-in switch) happens where the
command starts (:mod:`elmo_tasks.command_start`): when ``allennlp`` imports this module for one of its
own commands, :func:`~elmo_tasks.commands.allennlp_hook.hook_the_starting_command` puts that setup in
front of the command it is about to run; imported from Python, nothing happens, and Python code that
builds configs or models itself calls :func:`elmo_tasks.command_start.start_command` once.
"""

import elmo_tasks.warnings_filter  # noqa: F401  (first: silences dependency FutureWarnings users cannot act on)
from elmo_tasks import commands, modules, tasks, tokenization, training  # noqa: F401  (registration is the point)
from elmo_tasks.commands.allennlp_hook import hook_the_starting_command

hook_the_starting_command()  # only under AllenNLP's command line: its command starts with our setup
