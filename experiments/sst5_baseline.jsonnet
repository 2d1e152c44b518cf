// SST-5, biattentive classification network without ELMo (the paper's baseline). See sst5.libsonnet.
(import 'sst5.libsonnet').sst5(elmo=false)
