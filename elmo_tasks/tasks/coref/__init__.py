"""Coreference (Lee et al. 2017): the CoNLL-2012 reader, the span-ranking model, the metric with
the official scorer's semantics, the predictor, Lee et al.'s learning-rate schedule, their random
training windows and their BiLSTM cell."""

from elmo_tasks.tasks.coref.coupled_lstm import CoupledGateBiLstm  # noqa: F401
from elmo_tasks.tasks.coref.learning_rate import StaircaseExponentialLR  # noqa: F401
from elmo_tasks.tasks.coref.metric import ConllCorefScores  # noqa: F401
from elmo_tasks.tasks.coref.model import CorefElmo  # noqa: F401
from elmo_tasks.tasks.coref.predictor import CorefPredictor  # noqa: F401
from elmo_tasks.tasks.coref.reader import Conll2012CorefReader  # noqa: F401
from elmo_tasks.tasks.coref.training_windows import RandomWindowCollator  # noqa: F401
