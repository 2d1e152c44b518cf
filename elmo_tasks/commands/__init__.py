"""AllenNLP commands: `allennlp elmo-embed`."""
from elmo_tasks.commands.elmo_embed import ElmoEmbed

__all__ = ["ElmoEmbed"]
