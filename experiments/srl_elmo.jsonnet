// The same SRL model + ELMo at the input (see srl.libsonnet). The biLM comes from ELMO_OPTIONS / ELMO_WEIGHTS.
(import 'srl.libsonnet').config(elmo=true)
