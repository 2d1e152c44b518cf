// CoNLL-2003 NER: the same BiLSTM-CRF + ELMo at the input of the lowest BiLSTM, lambda 0.1
// (see ner.libsonnet). The biLM comes from ELMO_OPTIONS / ELMO_WEIGHTS (common.libsonnet).
(import 'ner.libsonnet').config(use_elmo=true)
