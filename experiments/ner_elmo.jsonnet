(import 'ner.libsonnet').config(elmo=true)
