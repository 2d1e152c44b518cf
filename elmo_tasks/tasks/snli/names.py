"""The names SNLI registers (the pattern: ``elmo_tasks.tasks.names``)."""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("snli")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_PREDICTOR = "snli_pair"
OLD_MODEL = "esim_elmo"
OLD_READER = "snli_jsonl"
