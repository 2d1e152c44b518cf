// Pieces shared by every experiment. Import with:  local common = import 'common.libsonnet';
// Shipped with the package (elmo_tasks/experiments): an experiment finds it from any directory.
// Data paths are relative to where `allennlp` runs, or absolute (the fixtures from elsewhere).
//
// A task experiment is built from these blocks, so that its libsonnet reads as what the task
// chooses (docs/CONVENTIONS.md, "Experiments"):
//   config(elmo):: common.task_base + common.bucket_loaders(32) + {
//     dataset_reader: { ..., token_indexers: { tokens: ... } + common.elmo_indexers(elmo) },
//     model: { ..., text_field_embedder: { token_embedders: { tokens: ... } + common.elmo_embedders(elmo) } },
//     trainer: common.trainer(optimizer={ type: 'adam', lr: 0.001 }, num_epochs=10, patience=5,
//                             validation_metric='+accuracy', grad_norm=5.0),
//   }
{
  // ELMO_TASKS_DATA: `fixtures` (the default) trains on the bundled samples; `full` on the paper's
  // data under its official file names, read from ELMO_TASKS_SHARED_DATA (default data/ in the
  // checkout; docs/DATA.md lists the files); `substitutes` on the real data with the substitutes of
  // docs/DATA.md where the paper's training sets are not at hand (SNLI, SQuAD, CoNLL-2012): what
  // scripts/reproduce.py's mini budget trains on. Both real-data modes use the full-size models.
  data_mode: if std.member(['fixtures', 'full', 'substitutes'], std.extVar('ELMO_TASKS_DATA'))
  then std.extVar('ELMO_TASKS_DATA')
  else error 'ELMO_TASKS_DATA must be fixtures, full or substitutes, not ' + std.extVar('ELMO_TASKS_DATA'),
  full_data: $.data_mode != 'fixtures',
  substitute_data: $.data_mode == 'substitutes',
  // Keys of the paper's recipe that the mini budget's committed runs never had: an override can change a
  // key's value but cannot remove one, so they are set in `full` mode only and `substitutes` (the mini
  // budget's mode) resolves to its records' configs; `-o` adds them to a `substitutes` run.
  paper_only(fields):: if $.data_mode == 'full' then fields else {},
  shared_data: std.extVar('ELMO_TASKS_SHARED_DATA'),
  // The bundled samples of the `fixtures` mode (ELMO_TASKS_FIXTURES: `fixtures` from the checkout's root,
  // the checkout's folder by absolute path from anywhere else; elmo_tasks/config_defaults.py).
  fixtures: std.extVar('ELMO_TASKS_FIXTURES'),
  seed: std.parseInt(std.extVar('ELMO_TASKS_SEED')),
  random_seeds: { random_seed: $.seed, numpy_seed: $.seed + 1, pytorch_seed: $.seed + 2 },
  // What every task experiment starts from: the seeds, and the biLM options that `fast_elmo` keeps
  // in serialization_dir/elmo_bilm/ put into model.tar.gz, so an archive predicts without the
  // biLM's original files (its weights are in the model's state dict; matches nothing without ELMo).
  task_base: $.random_seeds + { include_in_archive: ['elmo_bilm'] },

  // ---- Training: the loaders and the trainer of every task experiment ----

  // A loader for training and one for validation, both bucketing instances of similar length
  // (by `sorting_keys`, or by AllenNLP's guess when null). Validation has a loader of its own so
  // that `data_loader.batches_per_epoch` (e.g. scripts/reproduce.py's smoke budget) never cuts or
  // repeats batches of the validation data or, in `allennlp evaluate`, of the test file.
  bucket_loaders(batch_size, validation_batch_size=batch_size, sorting_keys=null):: {
    local sampler(size) = { type: 'bucket', batch_size: size }
                          + (if sorting_keys == null then {} else { sorting_keys: sorting_keys }),
    data_loader: { batch_sampler: sampler(batch_size) },
    validation_data_loader: { batch_sampler: sampler(validation_batch_size) },
  },

  // The same without bucketing (coref: one document per batch): training shuffles, validation
  // keeps the file's order.
  unbucketed_loaders(batch_size):: {
    data_loader: { batch_size: batch_size, shuffle: true },
    validation_data_loader: { batch_size: batch_size, shuffle: false },
  },

  // The trainer: the model with the best `validation_metric` on the validation data is kept;
  // `patience` null trains all `num_epochs`, `grad_norm` null leaves the gradients unclipped.
  // What only one task uses is added with `+` (SQuAD's moving average, coref's learning-rate
  // schedule, SST-5's checkpointer).
  trainer(optimizer, num_epochs, patience, validation_metric, grad_norm=null):: {
    optimizer: optimizer,
    num_epochs: num_epochs,
    patience: patience,
    validation_metric: validation_metric,
    [if grad_norm != null then 'grad_norm']: grad_norm,
  },

  // ---- Characters: a character CNN over each word (NER, SQuAD, coref) ----

  // A word's characters for `char_cnn` below: ids in the token_characters namespace, padded to at
  // least the widest filter.
  char_indexer(min_padding_length):: { type: 'characters', min_padding_length: min_padding_length },

  // Its embedding is sized by the token_characters namespace: without `vocab_namespace` AllenNLP
  // sizes it by the word vocabulary, one row per word. `activation` null keeps CnnEncoder's default.
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

  // ---- Word vectors ----

  // ELMO_TASKS_WORD_VECTORS: a GloVe-format text file ("word v1 ... vd" per line, no header) whose
  // vectors start the task's word embedding, in the baseline and in the ELMo model alike; empty
  // (the default) learns the word embedding from the training data alone. The vectors must have the
  // task's word-embedding size (README, "Word vectors"): `allennlp build-word-vectors` trains such a
  // file on the biLM's own corpus, and the paper's GloVe files fit unchanged.
  word_vectors: std.extVar('ELMO_TASKS_WORD_VECTORS'),
  with_word_vectors: $.word_vectors != '',

  // The reader's `tokens` indexer: lowercased as the task chooses without vectors; with vectors,
  // cased as the paper's file for the task is (GloVe 840B cased; Senna and GloVe 6B lowercased).
  word_indexer(lowercase, lowercase_with_vectors=lowercase):: {
    type: 'single_id',
    lowercase_tokens: if $.with_word_vectors then lowercase_with_vectors else lowercase,
  },

  // The model's `tokens` embedder: `dim`-d and trained from scratch without vectors; with them,
  // started from the file and then trained or kept fixed as the paper's recipe for the task says.
  word_embedder(dim, trainable_with_vectors):: {
    type: 'embedding',
    embedding_dim: dim,
    trainable: if $.with_word_vectors then trainable_with_vectors else true,
  } + (if $.with_word_vectors then { pretrained_file: $.word_vectors } else {}),

  // Which words get a row of their own. Without vectors: the task's own choice, `without_vectors`
  // (its `vocabulary` and `datasets_for_vocab_creation`, or {} for AllenNLP's defaults). With vectors: every word of the
  // training, validation and test data that has a vector, so that a word seen only in evaluation
  // data keeps its pretrained vector; the others share the unknown-word vector, which training
  // updates. `test` is the task's test file, read here for its words only (it is evaluated only
  // by `allennlp evaluate` or scripts/reproduce.py).
  word_vocabulary(without_vectors, test):: if $.with_word_vectors then {
    datasets_for_vocab_creation: ['train', 'validation', 'test'],
    test_data_path: test,
    vocabulary: { pretrained_files: { tokens: $.word_vectors }, only_include_pretrained_words: true },
  } else without_vectors,

  // ---- ELMo ----

  // The biLM of every ELMo experiment: ELMO_OPTIONS / ELMO_WEIGHTS, by default the small biLM
  // shipped in elmo_tasks/pretrained/bilm_small/ (the defaults are set when the plugin is imported,
  // see elmo_tasks/config_defaults.py). The tests set bilm-tf's tiny test model instead.
  elmo_options: std.extVar('ELMO_OPTIONS'),
  elmo_weights: std.extVar('ELMO_WEIGHTS'),

  // ELMo's name among a reader's token_indexers and a model's token_embedders (AllenNLP hands each
  // embedder the output of the indexer of the same name).
  elmo_name: 'elmo',
  // Where every task experiment has its ELMo embedder, as a dotted key of `allennlp train -o`, e.g.
  //   -o '{"model.text_field_embedder.token_embedders.elmo.dropout": 0.5}'
  // Python code (the analysis variants of elmo_tasks/reproduction/task_table.py, tests) has it as
  // elmo_tasks.config_defaults.ELMO_EMBEDDER_PATH; a test checks that the two agree.
  elmo_embedder_path: 'model.text_field_embedder.token_embedders.' + $.elmo_name,

  // The character indexer ELMo needs (AllenNLP's, whose ids equal the original scheme).
  elmo_indexer: { type: 'elmo_characters' },
  // To add to a reader's token_indexers: ELMo's indexer, nothing without ELMo.
  elmo_indexers(elmo):: if elmo then { [$.elmo_name]: $.elmo_indexer } else {},

  // ELMo as a token embedder: `lambda` becomes an L2 penalty on the mixing weights through
  // `regularizer` below; `num_output_representations` > 1 gives independent mixes of ONE pass.
  // `dropout` is ELMo's own, on every mix. A task model that already drops out each ELMo mix it
  // reads (NER, SNLI and coref drop out their whole embedded input at 0.5; SST-5 its input at 0.5
  // and its pooled vector, output mix included, at 0.1, as AllenNLP's BCN) sets it to 0: both
  // together kept about a quarter of ELMo's units and ELMo fell behind the baseline on NER and
  // SNLI (docs/RESULTS.md, "Why ELMo hurt"). SQuAD keeps the paper's 0.5 (its model drops
  // out at 0.2 only), SRL 0.1 (no other dropout).
  elmo_embedder(num_output_representations=1, dropout=0.5, do_layer_norm=false):: {
    type: 'fast_elmo',
    options_file: $.elmo_options,
    weight_file: $.elmo_weights,
    dropout: dropout,
    do_layer_norm: do_layer_norm,
    num_output_representations: num_output_representations,
  },
  // To add to a model's token_embedders: ELMo's embedder (arguments as above), nothing without ELMo.
  elmo_embedders(elmo, num_output_representations=1, dropout=0.5, do_layer_norm=false)::
    if elmo then { [$.elmo_name]: $.elmo_embedder(num_output_representations, dropout, do_layer_norm) } else {},

  // The ELMo mixing weights, scalar_mix_K.scalar_parameters.J of every output mix K (not its
  // gamma): what the paper's lambda penalises. Python code has it as
  // elmo_tasks.config_defaults.MIXING_WEIGHTS_REGEX; a test checks that the two agree.
  mixing_weights_regex: '.*scalar_mix.*scalar_parameters.*',
  // The paper's lambda * ||w||^2 on the ELMo mixing weights.
  elmo_regularizer(lambda):: {
    regexes: [[$.mixing_weights_regex, { type: 'l2', alpha: lambda }]],
  },
}
