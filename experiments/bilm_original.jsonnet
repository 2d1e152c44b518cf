// The published "original" size, 2x4096_512_2048cnn_2xhighway (93.6M parameters): a GPU job,
// same data and recipe as bilm_small.jsonnet.
//   ELMO_TASKS_DATA=full allennlp train experiments/bilm_original.jsonnet -s runs/bilm_original
local small = import 'bilm_small.jsonnet';

small {
  options:: {
    lstm: { dim: 4096, projection_dim: 512, n_layers: 2, cell_clip: 3, proj_clip: 3, use_skip_connections: true },
    char_cnn: {
      activation: 'relu', embedding: { dim: 16 },
      filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]], n_highway: 2,
      n_characters: 262, max_characters_per_token: 50,
    },
  },
  vocab_size:: 100000,
  batch_size:: 128,
  trainer+: { cuda_device: 0 },
}
