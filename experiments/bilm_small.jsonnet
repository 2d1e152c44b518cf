// The biLM we ship: 2x1024_128, 1024-filter char CNN, 1 highway (~7.0M parameters in the hdf5,
// ~14 MB as float16). Trains on the `lm/` folder of the data (docs/DATA.md) (Wikipedia + news + books, no PTB) with
// ELMO_TASKS_DATA=full; on the bundled fixtures otherwise (a smoke run).
//   ELMO_TASKS_DATA=full allennlp train experiments/bilm_small.jsonnet -s runs/bilm_small
//   ELMO_TASKS_DATA=full allennlp train experiments/bilm_small.jsonnet -s runs/bilm_small --recover  # resume
// The original-format files land in runs/bilm_small/elmo/ when training ends; export an archive
// with `allennlp export-bilm runs/bilm_small/model.tar.gz out/ --float16`, or a checkpoint of a
// run still going with `... export-bilm runs/bilm_small out/ --weights-file runs/bilm_small/model_state_e2_b0.th`.
// An "epoch" here is `batches_per_epoch` batches: the unit of checkpointing.
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
  batches_per_epoch:: 150,  // ~200k tokens between checkpoints (timings: docs/BENCHMARKS.md, "Experiment run times")

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
  // Training text: news first, then books and the first five Wikipedia files (~6.5M tokens, all
  // of them build the softmax vocabulary; the shipped run trained on the first ~1M, the news:
  // see elmo_tasks/pretrained/bilm_small/MODEL_CARD.md).
  // Whole files are held out and never read here: news/test_00.txt and wikipedia/wiki_99.txt give
  // the model card's perplexities through `allennlp evaluate` (no per-epoch validation: it would
  // cost more than the training between checkpoints on 2 CPU cores).
  train_data_path: if common.full_data then std.join(',', [
    lm + 'news/training_0*.txt', lm + 'news/abc', lm + 'books', lm + 'wikipedia/wiki_0[0-4].txt',
  ]) else common.fixtures + '/lm/train.txt',
  validation_data_path: if common.full_data then null else common.fixtures + '/lm/valid.txt',
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
    // The shipped run: 5 x 150 batches. Raise num_epochs for a better biLM.
    num_epochs: if common.full_data then 5 else 2,
    // Adam, not bilm-tf's Adagrad 0.2: with a budget of ~2M tokens Adagrad learned far too slowly
    // (held-out exact perplexity ~1,970 after 450 batches; see the model card).
    optimizer: { type: 'adam', lr: 0.001 },
    grad_norm: 10.0,
    validation_metric: if common.full_data then '-loss' else '-ppl_exact',
    patience: if common.full_data then null else 5,
    checkpointer: { keep_most_recent_by_count: 2 },
    callbacks: [{ type: 'export_bilm' }],
  },
} + common.random_seeds
