"""AllenNLP commands: `allennlp elmo-embed`."""
from elmo_tasks.commands.elmo_embed import ElmoEmbed
from elmo_tasks.commands import coref_conll, coref_score  # noqa: F401,E402  (coref-conll, coref-score)

__all__ = ["ElmoEmbed"]
