"""The jsonnet blocks the experiments import: ``common.libsonnet`` and one ``<task>.libsonnet`` per task.

They ship with the package, so that an experiment (``experiments/<task>_elmo.jsonnet``) copied out of the
checkout, or run from another directory, still finds what it imports: where a command starts,
:func:`elmo_tasks.command_start.start_command` has AllenNLP's jsonnet evaluation look in this folder
after the experiment's own one (``allennlp_internals.search_jsonnet_library``). Python code evaluating an
experiment with ``_jsonnet`` itself passes ``jpathdir=[str(LIBRARY)]``.
"""

from pathlib import Path

LIBRARY = Path(__file__).resolve().parent
