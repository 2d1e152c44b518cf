// ESIM + ELMo at input and output on SNLI (Peters et al. 2018, Table 1). See snli.libsonnet.
(import 'snli.libsonnet').snli(elmo=true)
