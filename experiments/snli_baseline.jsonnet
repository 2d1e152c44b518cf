// ESIM baseline on SNLI (no ELMo). Everything is shared with snli_elmo.jsonnet: see snli.libsonnet.
(import 'snli.libsonnet').snli(elmo=false)
