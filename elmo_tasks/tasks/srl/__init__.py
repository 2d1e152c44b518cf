"""Semantic role labeling (CoNLL-2005, CoNLL-2012): readers, He et al.'s deep BiLSTM with ELMo,
the srl-eval metric and the predictor."""

from elmo_tasks.tasks.srl.metric import SrlEvalMetric  # noqa: F401
from elmo_tasks.tasks.srl.model import SrlElmo  # noqa: F401
from elmo_tasks.tasks.srl.predictor import SrlPredictor  # noqa: F401
from elmo_tasks.tasks.srl.reader import SrlConllReader  # noqa: F401
