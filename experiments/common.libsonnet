// Pieces shared by every experiment. Import with:  local common = import 'common.libsonnet';
// Paths are relative to the repo root (run `allennlp` from there).
{
  // ELMO_TASKS_DATA=full switches every experiment from the bundled fixtures to the real data,
  // read from ELMO_TASKS_SHARED_DATA (default ../shared/data; docs/DATA.md lists the files).
  full_data: std.extVar('ELMO_TASKS_DATA') == 'full',
  shared_data: std.extVar('ELMO_TASKS_SHARED_DATA'),
  seed: std.parseInt(std.extVar('ELMO_TASKS_SEED')),
  random_seeds: { random_seed: $.seed, numpy_seed: $.seed + 1, pytorch_seed: $.seed + 2 },
  // What every task experiment starts from: the seeds, and the biLM options that `fast_elmo` keeps
  // in serialization_dir/elmo_bilm/ put into model.tar.gz, so an archive predicts without the
  // biLM's original files (its weights are in the model's state dict; matches nothing without ELMo).
  task_base: $.random_seeds + { include_in_archive: ['elmo_bilm'] },

  // The biLM of every ELMo experiment: ELMO_OPTIONS / ELMO_WEIGHTS, by default the small biLM
  // shipped in elmo_tasks/pretrained/bilm_small/ (the defaults are set when the plugin is imported,
  // see elmo_tasks/config_defaults.py). The tests set bilm-tf's tiny test model instead.
  elmo_options: std.extVar('ELMO_OPTIONS'),
  elmo_weights: std.extVar('ELMO_WEIGHTS'),

  // The character indexer ELMo needs (AllenNLP's, whose ids equal the original scheme).
  elmo_indexer: { type: 'elmo_characters' },

  // A word's characters for `char_cnn` below: ids in the token_characters namespace, padded to at
  // least the widest filter.
  char_indexer(min_padding_length):: { type: 'characters', min_padding_length: min_padding_length },

  // A character CNN over each word (NER, SQuAD, coref). Its embedding is sized by the
  // token_characters namespace: without `vocab_namespace` AllenNLP sizes it by the word vocabulary,
  // one row per word. `activation` null keeps CnnEncoder's default.
  char_cnn(embedding_dim, num_filters, ngram_filter_sizes, activation=null):: {
    type: 'character_encoding',
    embedding: { embedding_dim: embedding_dim, vocab_namespace: 'token_characters' },
    encoder: {
      type: 'cnn',
      embedding_dim: embedding_dim,
      num_filters: num_filters,
      ngram_filter_sizes: ngram_filter_sizes,
    } + (if activation == null then {} else { conv_layer_activation: activation }),
  },

  // ELMo as a token embedder: `lambda` becomes an L2 penalty on the mixing weights through
  // `regularizer` below; `num_output_representations` > 1 gives independent mixes of ONE pass.
  // `dropout` is ELMo's own, on every mix. A task model that already drops out each ELMo mix it
  // reads (NER, SNLI and coref drop out their whole embedded input at 0.5) sets it to 0: both
  // together kept about a quarter of ELMo's units and ELMo fell behind the baseline on NER and
  // SNLI (docs/RESULTS.md, "Why ELMo hurt"). SST-5 keeps 0.5: its output mix gets no other
  // dropout, and its input mix is dropped again by the BCN's embedding dropout, as in AllenNLP's
  // own BCN, whose recipe we keep. SQuAD keeps the paper's 0.5 (its model drops
  // out at 0.2 only), SRL 0.1 (no other dropout).
  elmo_embedder(num_output_representations=1, dropout=0.5, do_layer_norm=false):: {
    type: 'fast_elmo',
    options_file: $.elmo_options,
    weight_file: $.elmo_weights,
    dropout: dropout,
    do_layer_norm: do_layer_norm,
    num_output_representations: num_output_representations,
  },

  // The paper's lambda * ||w||^2 on the ELMo mixing weights (scalar_mix_k.scalar_parameters).
  elmo_regularizer(lambda):: {
    regexes: [['.*scalar_mix.*scalar_parameters.*', { type: 'l2', alpha: lambda }]],
  },
}
