"""SNLI: the jsonl reader, ESIM with ELMo at input and output, and the pair predictor."""

from elmo_tasks.tasks.snli.model import EsimElmo  # noqa: F401
from elmo_tasks.tasks.snli.predictor import SnliPairPredictor  # noqa: F401
from elmo_tasks.tasks.snli.reader import SnliJsonlReader  # noqa: F401
