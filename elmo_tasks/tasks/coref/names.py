"""The names coreference registers (the pattern: ``elmo_tasks.tasks.names``)."""

from elmo_tasks.tasks.names import TaskNames

NAMES = TaskNames("coref")
PREDICTOR, MODEL, READER = NAMES.predictor, NAMES.model, NAMES.reader
#: The training loader's collator that crops long documents to random windows (``training_windows.py``).
WINDOW_COLLATOR = "coref_random_window"
#: Lee et al.'s BiLSTM, input and forget gates coupled, a learned initial state (``coupled_lstm.py``).
COUPLED_LSTM = "coupled_gate_lstm"

#: Earlier names, still registered.
OLD_MODEL = "coref_elmo"
OLD_READER = "conll2012_coref"
