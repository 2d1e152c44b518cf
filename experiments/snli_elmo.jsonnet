(import 'snli.libsonnet').config(elmo=true)
