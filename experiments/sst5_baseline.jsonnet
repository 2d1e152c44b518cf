(import 'sst5.libsonnet').config(elmo=false)
