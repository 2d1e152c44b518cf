"""Every `allennlp` subcommand of elmo-tasks, one module each (importing registers them)."""
from elmo_tasks.commands import bilm_probe, coref_conll, coref_score, elmo_embed, srl_props, srl_score  # noqa: F401
