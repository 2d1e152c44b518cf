"""AllenNLP glue around the biLM: the ELMo token embedder."""
