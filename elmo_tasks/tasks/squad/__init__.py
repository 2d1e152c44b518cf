"""SQuAD v1.1: the reader, BiDAF with self-attention (+ ELMo), the official metric, the predictor
(names: names.py)."""

from allennlp.data import DatasetReader

from elmo_tasks.tasks.squad.metric import SquadEmAndF1
from elmo_tasks.tasks.squad.model import BidafSelfAttention
from elmo_tasks.tasks.squad.names import READER
from elmo_tasks.tasks.squad.predictor import SquadQaPredictor
from elmo_tasks.tasks.squad.reader import SquadV1Reader

# The reader's task name; reader.py registers its earlier name.
DatasetReader.register(READER)(SquadV1Reader)

__all__ = ["BidafSelfAttention", "SquadEmAndF1", "SquadQaPredictor", "SquadV1Reader"]
