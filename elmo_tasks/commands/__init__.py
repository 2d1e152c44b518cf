"""AllenNLP commands: `allennlp elmo-embed`, `export-bilm`, `bilm-perplexity`."""
from elmo_tasks.commands.bilm_perplexity import BilmPerplexity
from elmo_tasks.commands.elmo_embed import ElmoEmbed
from elmo_tasks.commands.export_bilm import ExportBilm

__all__ = ["BilmPerplexity", "ElmoEmbed", "ExportBilm"]
