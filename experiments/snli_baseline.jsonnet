(import 'snli.libsonnet').config(elmo=false)
