"""AllenNLP commands: `allennlp elmo-embed`, `allennlp bilm-probe`."""
from elmo_tasks.commands.bilm_probe import BilmProbe
from elmo_tasks.commands.elmo_embed import ElmoEmbed

__all__ = ["BilmProbe", "ElmoEmbed"]
