"""Static word vectors trained on our own text and written in the GloVe text format (no AllenNLP needed).

The paper's baselines start from pretrained GloVe vectors; these modules give any corpus of ours the
same kind of file, so an experiment takes either with no code change. One concern per module:
``options`` (the settings of a build), ``corpus`` (the tokenized text, streamed), ``train`` (gensim's
word2vec or fastText), ``glove_format`` (writing, reading and checking GloVe-format files),
``record`` (the JSON beside the vectors, and when it allows reuse), ``build`` (the one call that
ties them together) and ``command`` (``allennlp build-word-vectors``, also
``python -m elmo_tasks.word_vectors``). gensim is imported only when vectors are trained.
"""

from elmo_tasks.word_vectors.build import build_word_vectors
from elmo_tasks.word_vectors.errors import CorpusError, GloveFormatError, WordVectorsError
from elmo_tasks.word_vectors.glove_format import GloveFileSummary, check_glove_file, read_glove_file, write_glove_file
from elmo_tasks.word_vectors.options import WordVectorOptions
from elmo_tasks.word_vectors.record import record_path

__all__ = [
    "build_word_vectors",
    "WordVectorOptions",
    "WordVectorsError",
    "CorpusError",
    "GloveFormatError",
    "GloveFileSummary",
    "check_glove_file",
    "read_glove_file",
    "write_glove_file",
    "record_path",
]
