// Domain adaptation: continue training an existing biLM on new text (ELMo paper, appendix).
//   ELMO_OPTIONS=runs/bilm_small/elmo/options.json ELMO_WEIGHTS=runs/bilm_small/elmo/weights.hdf5 \
//   allennlp train experiments/bilm_finetune.jsonnet -s runs/bilm_ft \
//     -o '{"train_data_path": "my_text.txt", "validation_data_path": "my_dev.txt"}'
// The sizes come from ELMO_OPTIONS (checked against the hdf5). With only weights.hdf5 the
// softmax starts fresh over a vocabulary of the new text; to keep the old softmax too, point
// model.pretrained_file at the exported directory and reuse its vocabulary:
//   -o '{"model.pretrained_file": "runs/bilm_small/elmo",
//        "vocabulary": {"type": "from_files", "directory": "runs/bilm_small/elmo/vocabulary"}}'
local common = import 'common.libsonnet';
local small = import 'bilm_small.jsonnet';

small {
  train_data_path: common.fixtures + '/lm/train.txt',
  validation_data_path: common.fixtures + '/lm/valid.txt',
  dataset_reader+: { text_format: 'sentence_per_line' },
  model: {
    type: 'bilm_language_model',
    options_file: common.elmo_options,
    pretrained_file: common.elmo_weights,
    dropout: 0.1,
    num_samples: 8192,
  },
  data_loader+: { batches_per_epoch: null },
  trainer+: { num_epochs: 1, optimizer: { type: 'adagrad', lr: 0.05, initial_accumulator_value: 1.0 } },
}
