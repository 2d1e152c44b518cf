// CoNLL-2003 NER baseline: BiLSTM-CRF without ELMo (see ner.libsonnet).
// ELMO_TASKS_DATA=fixtures (default): bundled invented sample, a minute or two on CPU.
// ELMO_TASKS_DATA=full: ../shared/data/conll2003 eng.train / eng.testa.
(import 'ner.libsonnet').config(use_elmo=false)
