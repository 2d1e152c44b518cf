"""AllenNLP glue around the biLM: the ELMo token embedder."""
from elmo_tasks.modules.elmo_token_embedder import ElmoTokenEmbedder, elmo_at_output, find_elmo_embedder

__all__ = ["ElmoTokenEmbedder", "elmo_at_output", "find_elmo_embedder"]
