"""``allennlp elmo-embed``: ELMo vectors for a file of sentences, written to hdf5.

The command itself lives in :mod:`elmo_tasks.bilm.embed` (no AllenNLP needed, also runnable as
``python -m elmo_tasks.bilm.embed``, and ``elmo-tasks elmo-embed`` runs it without AllenNLP); this
registers it with the ``allennlp`` CLI.
"""

from elmo_tasks.bilm.embed import DESCRIPTION, SUMMARY, add_arguments, run
from elmo_tasks.commands.registration import register_command

ElmoEmbed = register_command("elmo-embed", DESCRIPTION, SUMMARY, add_arguments, run)
