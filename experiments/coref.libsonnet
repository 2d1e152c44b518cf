// CoNLL-2012 coreference with the end-to-end span-ranking model of Lee et al. (2017).
// coref_baseline.jsonnet and coref_elmo.jsonnet differ only in `elmo`.
//
// Paper recipe (Peters et al. 2018, section 5 and table 1; Lee et al. 2017): word vectors +
// char CNN (8-d characters, 50 filters of widths 3, 4, 5) + one BiLSTM layer of 200 per
// direction over each sentence, span width embedding, head attention, 150-unit 2-layer mention
// and antecedent scorers, 20-d features, max span width 10, lambda = 0.4 spans per word,
// K = 250 antecedents, lexical dropout 0.5, Adam 1e-3 decayed by 0.999 every 100 steps,
// gradient clipping 5, one document per batch, documents cut to 50 sentences in training.
// ELMo at the input only.  Metric: the average of MUC, B-cubed and CEAF-phi4 F1
// with the CoNLL-2012 scorer's semantics (coref_f1).
//
// Data: ELMO_TASKS_DATA=full trains on CoNLL-2012's train.english.v4_gold_conll, selects on
//   dev.english.v4_gold_conll and reports on test.english.v4_gold_conll under
//   ELMO_TASKS_SHARED_DATA/conll2012/ (each plain or .gz, or the per-document folders of
//   conll-formatted-ontonotes-5.0/: elmo_tasks/tasks/official_files.py).
// ELMO_TASKS_DATA=substitutes (scripts/reproduce.py's mini budget, without the training split):
//   trains on the dev file minus a held-out tenth of its documents (model selection on that
//   tenth) and reports on test: 343 instead of 2,802 training documents, so absolute numbers
//   are not comparable.
//
// Deviations here:
// - Word vectors only through ELMO_TASKS_WORD_VECTORS (one file: Lee et al.'s Turian vectors are not
//   added to GloVe; docs/WORD_VECTORS.md); without it, 300-d vectors trained from scratch on far
//   less text, which hurts the baseline most.
// - K = 50 antecedents instead of 250 and 30 epochs with patience 5 (2 CPU cores); K = 50
//   covers most gold antecedents since kept spans are ordered and nearby (override with
//   -o '{"model.max_antecedents": 250}').
// - Long training documents are cut into consecutive pieces of <= 50 sentences (every sentence
//   used once per epoch) instead of a random 50-sentence crop per epoch.
// - No non-crossing constraint in pruning; head attention from the word representations
//   (AllenNLP's SelfAttentiveSpanExtractor).
// - Learning-rate decay 0.999 every 100 steps becomes 0.997 per epoch (AllenNLP's exponential
//   schedule steps once per epoch; an epoch here is about 310 documents or pieces).
// - No dropout inside ELMo (the paper: 0.5): the lexical dropout already drops out ELMo's
//   features with the word vectors, and dropped out twice ELMo fell behind on NER and SNLI.
local common = import 'common.libsonnet';

local data = if common.substitute_data then {
  train: common.shared_data + '/conll2012/dev.english.v4_gold_conll.gz#train',
  validation: common.shared_data + '/conll2012/dev.english.v4_gold_conll.gz#holdout',
  test: common.shared_data + '/conll2012/test.english.v4_gold_conll.gz',
} else if common.full_data then {
  train: common.shared_data + '/conll2012/train.english.v4_gold_conll',
  validation: common.shared_data + '/conll2012/dev.english.v4_gold_conll',
  test: common.shared_data + '/conll2012/test.english.v4_gold_conll',
} else {
  train: 'fixtures/coref/train.gold_conll',
  validation: 'fixtures/coref/dev.gold_conll',
  test: 'fixtures/coref/test.gold_conll',
};

local max_span_width = 10;

local reader(elmo, max_sentences) = {
  type: 'coref_reader',
  max_span_width: max_span_width,
  [if max_sentences != null then 'max_sentences']: max_sentences,
  token_indexers: {
    tokens: common.word_indexer(lowercase=false),  // cased, like the paper's GloVe 840B vectors
    token_characters: common.char_indexer(5),
  } + common.elmo_indexers(elmo),
};

{
  data:: data,  // scripts/reproduce.py reads data.test

  config(elmo):: common.task_base + common.unbucketed_loaders(1) + common.word_vocabulary(
    { datasets_for_vocab_creation: ['train'] }, data.test
  ) + {
    dataset_reader: reader(elmo, 50),
    validation_dataset_reader: reader(elmo, null),
    train_data_path: data.train,
    validation_data_path: data.validation,
    model: {
      type: 'coref_model',
      text_field_embedder: {
        token_embedders: {
          // Lee et al. keep the pretrained vectors fixed
          tokens: common.word_embedder(if common.full_data then 300 else 16, trainable_with_vectors=false),
          token_characters: common.char_cnn(8, if common.full_data then 50 else 8, [3, 4, 5]),
        } + common.elmo_embedders(elmo, 1, dropout=0.0),  // see common.elmo_embedder
      },
      // No input sizes: the model derives them from the embedder (ELMo's width comes from the biLM).
      context_layer: {
        type: 'lstm',
        bidirectional: true,
        hidden_size: if common.full_data then 200 else 16,
        num_layers: 1,
      },
      mention_feedforward: {
        num_layers: 2,
        hidden_dims: if common.full_data then 150 else 16,
        activations: 'relu',
        dropout: 0.2,
      },
      antecedent_feedforward: {
        num_layers: 2,
        hidden_dims: if common.full_data then 150 else 16,
        activations: 'relu',
        dropout: 0.2,
      },
      feature_size: 20,
      max_span_width: max_span_width,
      spans_per_word: 0.4,
      max_antecedents: 50,
      lexical_dropout: 0.5,
      initializer: {
        regexes: [
          ['.*_feedforward.*weight', { type: 'xavier_normal' }],
          ['.*scorer.*weight', { type: 'xavier_normal' }],
          ['.*weight_ih.*', { type: 'xavier_normal' }],
          ['.*weight_hh.*', { type: 'orthogonal' }],
        ],
      },
    },
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: 0.001 },
      num_epochs=if common.full_data then 30 else 10,
      patience=if common.full_data then 5 else 10,
      validation_metric='+coref_f1',
      grad_norm=5.0,
    ) + { learning_rate_scheduler: { type: 'exponential', gamma: 0.997 } },
  },
}
