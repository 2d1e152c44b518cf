// He et al. (2017) deep highway BiLSTM for SRL, no ELMo. Everything is shared with srl_elmo.jsonnet: see srl.libsonnet.
(import 'srl.libsonnet').config(elmo=false)
