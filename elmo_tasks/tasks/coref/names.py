"""The names coreference registers (the pattern: ``elmo_tasks.tasks.names``)."""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("coref")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_MODEL = "coref_elmo"
OLD_READER = "conll2012_coref"
