// CoNLL-2012 coreference (Lee et al. 2017) with ELMo at the input; see coref.libsonnet.
(import 'coref.libsonnet').config(elmo=true)
