"""AllenNLP glue around the biLM: the ELMo token embedder."""
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, find_elmo_embedder

__all__ = ["ElmoTokenEmbedder", "find_elmo_embedder"]
