"""The names SST-5 registers (the pattern: ``elmo_tasks.tasks.names``).

The task is SST-5, as its experiments (``experiments/sst5*.jsonnet``), the demo and the
reproduction name it; the same components also serve binary SST (the reader's ``binary: true``
with the model's ``num_classes: 2``).
"""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("sst5")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader

#: Earlier names, still registered.
OLD_PREDICTOR = "sst_sentiment"
OLD_MODEL = "biattentive_classifier"
OLD_READER = "sst_ptb_trees"
