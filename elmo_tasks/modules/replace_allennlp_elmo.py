"""Plugin: list ``elmo_tasks.modules.replace_allennlp_elmo`` in ``.allennlp_plugins`` (after
``elmo_tasks.plugin``) and AllenNLP's ``elmo_token_embedder``, and AllenNLP's ``Elmo`` where a
config builds one, are served by elmo-tasks' ELMo.

See elmo_tasks/modules/allennlp_compat.py and docs/MIGRATING.md.
"""

from elmo_tasks.modules.allennlp_compat import replace_allennlp_elmo

replace_allennlp_elmo()
