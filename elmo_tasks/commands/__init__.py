"""AllenNLP commands: `allennlp elmo-embed`."""
from elmo_tasks.commands.elmo_embed import ElmoEmbed
from elmo_tasks.commands.srl_props import SrlProps
from elmo_tasks.commands.srl_score import SrlScore

__all__ = ["ElmoEmbed", "SrlProps", "SrlScore"]
