(import 'ner.libsonnet').config(elmo=false)
