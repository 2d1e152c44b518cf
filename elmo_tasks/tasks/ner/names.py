"""The names NER registers (the pattern: ``elmo_tasks.tasks.names``).

NER's reader is AllenNLP's ``conll2003`` reader with file-and-line errors; the experiments name it.
"""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("ner")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_PREDICTOR = "ner_tagger"
OLD_MODEL = "elmo_crf_tagger"
