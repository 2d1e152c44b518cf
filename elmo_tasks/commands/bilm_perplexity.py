"""``allennlp bilm-perplexity``: exact forward, backward and mean perplexity of a biLM on a text file.

The command itself lives in :mod:`elmo_tasks.bilm.perplexity` (no AllenNLP needed: ``elmo-tasks
bilm-perplexity`` runs it without AllenNLP); this registers it with the ``allennlp`` CLI.
"""

from elmo_tasks.bilm.perplexity import DESCRIPTION, SUMMARY, add_arguments, run
from elmo_tasks.commands.registration import register_command

BilmPerplexity = register_command("bilm-perplexity", DESCRIPTION, SUMMARY, add_arguments, run)
