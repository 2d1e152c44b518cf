"""The names SRL registers (the pattern: ``elmo_tasks.tasks.names``)."""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("srl")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_MODEL = "srl_elmo"
OLD_READER = "srl_conll"
