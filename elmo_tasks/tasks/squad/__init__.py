"""SQuAD v1.1: the reader, BiDAF with self-attention (+ ELMo), the official metric, the predictor."""

from elmo_tasks.tasks.squad.metric import SquadEmAndF1  # noqa: F401
from elmo_tasks.tasks.squad.model import BidafSelfAttention  # noqa: F401
from elmo_tasks.tasks.squad.predictor import SquadQaPredictor  # noqa: F401
from elmo_tasks.tasks.squad.reader import SquadV1Reader  # noqa: F401
