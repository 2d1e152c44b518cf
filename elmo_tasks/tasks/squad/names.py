"""The names SQuAD registers (the pattern: ``elmo_tasks.tasks.names``)."""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("squad")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_PREDICTOR = "squad_qa"
OLD_MODEL = "bidaf_self_attention"
OLD_READER = "squad_v1"
