"""AllenNLP commands: `allennlp elmo-embed`."""
from elmo_tasks.commands.elmo_embed import ElmoEmbed
from elmo_tasks.commands import squad_predict, squad_score  # noqa: F401  (registers squad-predict, squad-score)

__all__ = ["ElmoEmbed"]
