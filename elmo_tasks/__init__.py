"""elmo-tasks: ELMo as a fast, first-class AllenNLP component (see README.md)."""
from elmo_tasks.config_defaults import apply_defaults

apply_defaults()

# Registering everything is the point of importing the plugin.
from elmo_tasks import tokenization  # noqa: E402,F401
from elmo_tasks import modules  # noqa: E402,F401
from elmo_tasks import commands  # noqa: E402,F401
from elmo_tasks import tasks  # noqa: E402,F401
