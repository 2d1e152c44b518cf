// SQuAD v1.1 with BiDAF + self-attention (Clark & Gardner 2017), the baseline of Peters et al.
// (2018, Table 1). squad_baseline.jsonnet and squad_elmo.jsonnet differ ONLY in ELMo:
// config(elmo=true) adds ELMo at the input (a token embedder) and at the output of the shared
// contextual GRU (a second mix of the same biLM pass), with lambda = 0 (no penalty on the mixing
// weights) and ELMo dropout 0.5, as in the paper. Model: elmo_tasks/tasks/squad/model.py.
//
// Data (ELMO_TASKS_DATA):
//   fixtures (default): fixtures/squad/{train,dev}.json, a 70-question sample of XQuAD's English
//     file (SQuAD v1.1 dev questions, CC BY-SA 4.0), tiny dims; a minute on CPU.
//   full: SQuAD v1.1's train-v1.1.json and dev-v1.1.json under ELMO_TASKS_SHARED_DATA/squad/
//     (plain or .gz): trains on train, selects the model on dev and reports on dev (the test set
//     is the leaderboard's). Report with `allennlp squad-predict ARCHIVE dev-v1.1.json predictions.json`.
//   substitutes (scripts/reproduce.py's mini budget, without SQuAD's files): K-fold cross-validation
//     by article over XQuAD's English file (1,190 SQuAD v1.1 dev questions on 48 articles; one
//     gold answer each) under ELMO_TASKS_SHARED_DATA. ELMO_TASKS_FOLD=K/N (default 1/4) tests on
//     fold K, selects the model on fold K % N + 1 and trains on the other folds; no article is in
//     two of them (see the `#fold=` suffix in elmo_tasks/tasks/squad/reader.py). Report with
//     `allennlp squad-predict ARCHIVE <xquad.en.json>#fold=K/N predictions.json` (or
//     `allennlp evaluate`, keys `em`/`f1` as fractions).
//
// The paper's recipe (Peters et al. 2018, appendix A.4, a simplified version of Clark and Gardner's
//   model), which ELMO_TASKS_DATA=full trains as it is, with the authors' code (allenai/document-qa,
//   docqa/elmo/ablate_elmo_model.py) where the appendix gives no value: fixed, cased 300-d GloVe +
//   a character CNN (20-d characters, 100 filters of width 5, ReLU, max pooling; the code's) ->
//   a shared bidirectional GRU of 90 -> bi-attention -> a linear layer of 180 with ReLU -> a residual
//   self-attention layer (GRU, attention, linear layer of 180 with ReLU) -> GRUs and linear layers to
//   the start and end; variational dropout 0.2 on the input of every GRU and attention; Adadelta (lr
//   1.0; rho 0.95), batches of 45, whole passages; an exponential moving average of the weights
//   (0.999; AllenNLP ramps the decay up over the first steps) used at test time; spans of at most 17
//   tokens; 24 epochs, keeping the one with the best dev F1 (the code's; the paper gives none);
//   ELMo at the input and output of the contextual GRU, without layer norm, lambda = 0, ELMo
//   dropout 0.5. docs/PAPER.md, "SQuAD", lists each setting and what remains different.
// scripts/reproduce.py's mini budget cuts this recipe to a 2-core CPU with overrides
//   (elmo_tasks/reproduction/task_table.py, SQUAD_MINI): GRUs of 100, layers of 200, batches of 32,
//   passages capped at 400 tokens in training, as its committed records were trained.
// Without ELMO_TASKS_WORD_VECTORS (docs/WORD_VECTORS.md): 100-d word embeddings trained from scratch
//   on lowercased tokens, vocabulary from the training data only.
// With ELMO_TASKS_DATA=substitutes on XQuAD: ~600 training questions instead of ~87,600, one gold
//   answer per test question instead of three.
// Cost per epoch, baseline and ELMo: docs/BENCHMARKS.md, "Experiment run times". The biLM runs once
//   per distinct passage and, frozen, only in the first epoch (its cache holds every XQuAD passage).
local common = import 'common.libsonnet';

local full = common.full_data;
local xquad = common.shared_data + '/squad/xquad.en.json';
local fold = std.split(std.extVar('ELMO_TASKS_FOLD'), '/');
local test_fold = std.parseInt(fold[0]);
local num_folds = std.parseInt(fold[1]);
local validation_fold = test_fold % num_folds + 1;

local squad_dir = common.shared_data + '/squad/';

local data = if common.substitute_data then {
  train: xquad + '#folds-except=%d,%d/%d' % [test_fold, validation_fold, num_folds],
  validation: xquad + '#fold=%d/%d' % [validation_fold, num_folds],
  test: xquad + '#fold=%d/%d' % [test_fold, num_folds],
} else if full then {
  train: squad_dir + 'train-v1.1.json',
  // SQuAD's test set is scored only by its leaderboard: the dev set selects the model and is the
  // one reported, as in allennlp-models (docs/PAPER.md lists this difference).
  validation: squad_dir + 'dev-v1.1.json',
  test: squad_dir + 'dev-v1.1.json',
} else {
  train: common.fixtures + '/squad/train.json',
  validation: common.fixtures + '/squad/dev.json',
  test: common.fixtures + '/squad/dev.json',
};

// with word vectors, the paper's 300-d GloVe size
local word_dim = if full then (if common.with_word_vectors then 300 else 100) else 8;
local char_dim = if full then 20 else 4;
local char_filters = if full then 100 else 8;
// A.4: a dimensionality of 90 for the GRUs and 180 for the linear layers
local gru = if full then 90 else 8;
local attention_dim = if full then 180 else 16;

local reader(elmo, passage_length_limit) = {
  type: 'squad_reader',
  tokenizer: { type: 'spacy_blank' },
  token_indexers: {
    tokens: common.word_indexer(lowercase=true, lowercase_with_vectors=false),
    token_characters: common.char_indexer(5),
  } + common.elmo_indexers(elmo),
  passage_length_limit: passage_length_limit,
};

// AllenNLP's `gru` run on the padded batch (the same outputs, parameters and gradients; training
// steps about 2x faster on CPUs: docs/BENCHMARKS.md, "Padded RNN encoders").
local bigru = { type: 'padded_gru', hidden_size: gru, bidirectional: true };

{
  data:: data,

  // A.4: batches of 45.
  config(elmo):: common.task_base + common.bucket_loaders(
    if full then 45 else 8, validation_batch_size=32, sorting_keys=['passage']
  ) + common.word_vocabulary({ datasets_for_vocab_creation: ['train'] }, data.test) + {
    // The recipe trains on whole passages (the authors' code cuts none); the fixtures cap them at
    // 400 tokens, a cap that applies to training only: evaluate/predict read whole passages.
    dataset_reader: reader(elmo, if full then null else 400),
    validation_dataset_reader: reader(elmo, null),
    train_data_path: data.train,
    validation_data_path: data.validation,
    model: {
      type: 'squad_model',
      text_field_embedder: {
        token_embedders: {
          tokens: common.word_embedder(word_dim, trainable_with_vectors=false),
          token_characters: common.char_cnn(char_dim, char_filters, [5], activation='relu'),
        } + common.elmo_embedders(elmo, num_output_representations=2, dropout=0.5),
      },
      // Input sizes are derived by the model (ELMo's width comes from the biLM's options file).
      phrase_layer: bigru,
      residual_encoder: bigru,
      span_start_encoder: bigru,
      span_end_encoder: bigru,
      attention_dim: attention_dim,
      elmo_at_output: elmo,
      dropout: 0.2,
      max_span_length: 17,
      // lambda = 0 (Peters et al. 2018 for SQuAD): no regularizer on the ELMo mixing weights.
    },
    trainer: common.trainer(
      optimizer={ type: 'adadelta', lr: 1.0, rho: 0.95 },
      // The paper gives no epochs; the authors' code trains 24 and keeps the best on dev F1.
      num_epochs=if full then 24 else 4,
      patience=if full then null else 4,
      validation_metric='+f1',
    ) + { moving_average: { type: 'exponential', decay: 0.999 } },
  },
}
