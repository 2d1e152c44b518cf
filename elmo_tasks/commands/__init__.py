"""AllenNLP commands: `allennlp elmo-embed`."""
