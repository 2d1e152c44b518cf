// SST-5, biattentive classification network + ELMo at input and output, lambda 0.001. See sst5.libsonnet.
(import 'sst5.libsonnet').sst5(elmo=true)
