"""``elmo-tasks`` (installed with the package) and ``python -m elmo_tasks``: ``allennlp`` with our plugin loaded.

AllenNLP finds a plugin's subcommands only in ``.allennlp_plugins`` in the working directory, in
``~/.allennlp/plugins``, or among the packages it knows by name (``allennlp_models``,
``allennlp_semparse``, ``allennlp_server``); ``--include-package`` is read only after the command
has been chosen, too late for ``elmo-embed`` and the others. This entry point imports
:mod:`elmo_tasks.plugin` first and then runs AllenNLP's own command line, so every command, ours
and AllenNLP's, works from any directory: ``elmo-tasks elmo-embed IN OUT``,
``elmo-tasks train CONFIG -s DIR``. Everything else is AllenNLP's (other plugins load as usual).
"""

import os
import sys


def main() -> None:
    # before AllenNLP imports fairscale, whose FutureWarnings users cannot act on
    import elmo_tasks.warnings_filter  # noqa: F401,I001
    from allennlp.commands import main as allennlp_main

    import elmo_tasks.plugin  # noqa: F401  (registers our commands before AllenNLP builds its parser)

    launched_as_module = os.path.basename(sys.argv[0]) == "__main__.py"
    allennlp_main(prog="python -m elmo_tasks" if launched_as_module else "elmo-tasks")


if __name__ == "__main__":
    main()
