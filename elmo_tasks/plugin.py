"""The AllenNLP plugin: importing this module registers every model, reader, predictor and command.

``.allennlp_plugins`` names it, so ``allennlp`` imports it before reading a config; Python code
that uses our registered names without the CLI imports it too (``import elmo_tasks.plugin``).
It also fills in the defaults of the environment variables the experiments read
(:mod:`elmo_tasks.config_defaults`), which must happen before a config is evaluated.
"""

from elmo_tasks.config_defaults import apply_defaults

apply_defaults()

from elmo_tasks import commands, modules, tasks, tokenization  # noqa: E402,F401  (registration is the point)
