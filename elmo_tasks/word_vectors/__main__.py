"""``python -m elmo_tasks.word_vectors CORPUS OUTPUT [options]``: ``allennlp build-word-vectors`` without AllenNLP."""

from elmo_tasks.word_vectors.build_command import main

if __name__ == "__main__":
    main()
