// The biLM we ship: 2x1024_128, 1024-filter char CNN, 1 highway (~7.0M parameters in the hdf5,
// ~14 MB as float16). Trains on ../shared/data/lm (Wikipedia + news + books, no PTB) with
// ELMO_TASKS_DATA=full; on the bundled fixtures otherwise (a smoke run).
//   ELMO_TASKS_DATA=full allennlp train experiments/bilm_small.jsonnet -s runs/bilm_small
//   allennlp train experiments/bilm_small.jsonnet -s runs/bilm_small --recover   # resume
// The original-format files land in runs/bilm_small/elmo/ when training ends; export any
// checkpoint archive with `allennlp export-bilm runs/bilm_small/model.tar.gz out/ --float16`.
// A "epoch" here is `batches_per_epoch` batches: the unit of validation and checkpointing.
local common = import 'common.libsonnet';
local lm = common.shared_data + '/lm/';

{
  options:: {
    lstm: { dim: 1024, projection_dim: 128, n_layers: 2, cell_clip: 3, proj_clip: 3, use_skip_connections: true },
    char_cnn: {
      activation: 'relu', embedding: { dim: 16 },
      filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512]], n_highway: 1,
      n_characters: 262, max_characters_per_token: 50,
    },
  },
  vocab_size:: 50000,
  batch_size:: 64,
  batches_per_epoch:: 2000,

  dataset_reader: {
    type: 'bilm_raw_text',
    // Wikipedia is one paragraph per line, news/books are hard-wrapped: "running" handles both.
    text_format: 'running',
    max_sentence_length: 50,
    drop_wikiextractor_markup: true,
    unescape_html: true,
    // A few news/speech files have Latin-1 lines (e.g. a 0xB0 degree sign): decode, count, log.
    fallback_encoding: 'cp1252',
  },
  // Whole files held out: wiki_99 for validation (hyperparameters), nothing else is read.
  train_data_path: if common.full_data then std.join(',', [
    lm + 'wikipedia/wiki_[0-8]*.txt', lm + 'wikipedia/wiki_9[0-8].txt',
    lm + 'news/training_0*.txt', lm + 'news/abc', lm + 'books',
  ]) else 'fixtures/lm/train.txt',
  validation_data_path: if common.full_data then lm + 'wikipedia/wiki_99.txt' else 'fixtures/lm/valid.txt',
  vocabulary: { max_vocab_size: { lm_targets: $.vocab_size } },
  model: {
    type: 'bilm_language_model',
    options: $.options,
    dropout: 0.1,
    num_samples: 8192,
    sampler: 'log_uniform',
  },
  data_loader: {
    batch_sampler: { type: 'bucket', batch_size: $.batch_size, sorting_keys: ['tokens'] },
    max_instances_in_memory: $.batch_size * 100,
    batches_per_epoch: if common.full_data then $.batches_per_epoch else null,
  },
  validation_data_loader: {
    batch_sampler: { type: 'bucket', batch_size: 128, sorting_keys: ['tokens'] },
    max_instances_in_memory: 128 * 50,
  },
  trainer: {
    num_epochs: if common.full_data then 100 else 2,
    // bilm-tf's optimiser: Adagrad 0.2 with accumulators starting at 1.
    optimizer: { type: 'adagrad', lr: 0.2, initial_accumulator_value: 1.0 },
    grad_norm: 10.0,
    validation_metric: '-ppl_exact',
    patience: 5,
    checkpointer: { keep_most_recent_by_count: 2 },
    callbacks: [{ type: 'export_bilm' }],
    cuda_device: -1,
  },
} + common.random_seeds
