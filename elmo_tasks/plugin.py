"""The AllenNLP plugin: importing this module registers every model, reader, predictor and command.

``.allennlp_plugins`` names it, so ``allennlp`` imports it before reading a config; Python code
that uses our registered names without the CLI imports it too (``import elmo_tasks.plugin``).
It also fills in the defaults of the environment variables the experiments read
(:mod:`elmo_tasks.config_defaults`), which must happen before a config is evaluated, and sets
torch's thread count by our thread policy (:mod:`elmo_tasks.threads`: one thread unless
``OMP_NUM_THREADS`` says otherwise), so that ``allennlp train/evaluate/predict`` keep their speed
on shared cores.
"""

import elmo_tasks.warnings_filter  # noqa: F401  (first: silences dependency FutureWarnings users cannot act on)
from elmo_tasks.config_defaults import apply_defaults
from elmo_tasks.input_errors import install_input_error_lines
from elmo_tasks.safe_archives import install_safe_extraction
from elmo_tasks.threads import apply_thread_policy

apply_defaults()
apply_thread_policy()
install_safe_extraction()  # AllenNLP extracts model archives unchecked (docs/ARCHIVE_SAFETY.md)
install_input_error_lines()  # a corrupt file a user hands AllenNLP ends in one line, not a traceback

from elmo_tasks import commands, modules, tasks, tokenization, training  # noqa: E402,F401  (registration is the point)
