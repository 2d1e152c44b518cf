// A tiny biLM trained on the bundled raw-text fixture in seconds: for tests and smoke runs.
//   allennlp train experiments/bilm_tiny.jsonnet -s /tmp/bilm_tiny
// Writes /tmp/bilm_tiny/elmo/{options.json,weights.hdf5,softmax.npz,vocabulary/} at the end.
local common = import 'common.libsonnet';

{
  dataset_reader: {
    type: 'bilm_raw_text',
    text_format: 'sentence_per_line',
    max_sentence_length: 40,
  },
  train_data_path: common.fixtures + '/lm/train.txt',
  validation_data_path: common.fixtures + '/lm/valid.txt',
  vocabulary: { max_vocab_size: { lm_targets: 1000 } },
  model: {
    type: 'bilm_language_model',
    options: {
      lstm: { dim: 32, projection_dim: 16, n_layers: 2, cell_clip: 3, proj_clip: 3, use_skip_connections: true },
      char_cnn: {
        activation: 'relu', embedding: { dim: 4 }, filters: [[1, 8], [2, 8], [3, 16]], n_highway: 1,
        n_characters: 262, max_characters_per_token: 50,
      },
    },
    dropout: 0.0,
    num_samples: 32,
  },
  data_loader: { batch_sampler: { type: 'bucket', batch_size: 32, sorting_keys: ['tokens'] } },
  trainer: {
    num_epochs: 8,
    optimizer: { type: 'adam', lr: 0.01 },
    grad_norm: 10.0,
    validation_metric: '-ppl_exact',
    callbacks: [{ type: 'export_bilm' }],
  },
} + common.random_seeds
