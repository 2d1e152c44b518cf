"""SNLI: the jsonl reader, ESIM with ELMo at input and output, and the pair predictor (names: names.py)."""

from allennlp.data import DatasetReader

from elmo_tasks.tasks.snli.model import EsimElmo
from elmo_tasks.tasks.snli.names import READER
from elmo_tasks.tasks.snli.predictor import SnliPairPredictor
from elmo_tasks.tasks.snli.reader import SnliJsonlReader

# The reader's task name; reader.py registers its earlier name.
DatasetReader.register(READER)(SnliJsonlReader)

__all__ = ["EsimElmo", "SnliJsonlReader", "SnliPairPredictor"]
