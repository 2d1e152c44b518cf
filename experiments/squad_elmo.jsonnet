(import 'squad.libsonnet').config(elmo=true)
