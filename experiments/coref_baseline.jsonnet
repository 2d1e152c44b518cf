// CoNLL-2012 coreference (Lee et al. 2017) without ELMo; see coref.libsonnet.
(import 'coref.libsonnet').config(elmo=false)
