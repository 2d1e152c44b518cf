(import 'squad.libsonnet').config(elmo=false)
