// CoNLL-2003 NER with the BiLSTM-CRF of Peters et al. (2017), the ELMo paper's NER baseline.
// ner_baseline.jsonnet and ner_elmo.jsonnet differ only in `elmo`.
//
// Paper (Peters et al. 2018, section 5 and the supplement): 50-d word vectors + char CNN (128
// filters, width 3) + 2 BiLSTM layers + CRF over BIOUL tags; ELMo at the input of the lowest layer
// with lambda = 0.1; Adam 1e-3, gradient clipping 5. Metric: conlleval span F1
// (SpanBasedF1Measure, see elmo_tasks/tasks/ner/tags.py for why it equals conlleval here).
//
// ELMO_TASKS_DATA=fixtures (default): the bundled invented sample in fixtures/ner/, a minute or two.
// ELMO_TASKS_DATA=full: CoNLL-2003 eng.train / eng.testa (model selection) / eng.testb (`data.test`,
//   which scripts/reproduce.py evaluates); docs/DATA.md says where to put them.
// Sizes: one `-o` changes one size (the encoder's input size is derived from the embedder), e.g.
//   -o '{"model.encoder.hidden_size": 100}'.
local common = import 'common.libsonnet';

local data_paths = if common.full_data then {
  train: common.shared_data + '/conll2003/eng.train',
  validation: common.shared_data + '/conll2003/eng.testa',  // dev: model selection
  test: common.shared_data + '/conll2003/eng.testb',  // only to report
} else {
  train: 'fixtures/ner/train.txt',
  validation: 'fixtures/ner/dev.txt',
  test: 'fixtures/ner/test.txt',
};

local word_dim = 50;
local char_filters = 128;
// Hidden size per direction. 200 is what published AllenNLP ELMo NER setups use; the
// paper does not restate it. Kept for the full data (2 cores make this slow, not impossible).
local hidden = 200;

{
  // scripts/reproduce.py evaluates on `data.test`; training reads train and validation.
  data:: data_paths,

  // Without word vectors, words seen once in eng.train share the unknown-word vector, so that vector
  // is trained: with every training word in the vocabulary it kept its random initial values, and
  // the 11% of eng.testb tokens unseen in training (7.5% of eng.testa) were tagged from an
  // arbitrary, seed-dependent vector. With word vectors, every word that has one keeps it.
  config(elmo):: common.task_base + common.bucket_loaders(if common.full_data then 64 else 8)
                 + common.word_vocabulary({
                   datasets_for_vocab_creation: ['train'], vocabulary: { min_count: { tokens: 2 } },
                 }, $.data.test) + {
    dataset_reader: {
      type: 'ner_reader',  // AllenNLP's conll2003 reader, with errors that name the file and line
      tag_label: 'ner',
      convert_to_coding_scheme: 'BIOUL',  // the files are IOB1
      token_indexers: {
        tokens: common.word_indexer(lowercase=true),  // Senna's 50-d vectors are lowercased too
        token_characters: common.char_indexer(3),
      } + common.elmo_indexers(elmo),
    },
    train_data_path: $.data.train,
    validation_data_path: $.data.validation,
    model: {
      type: 'ner_model',
      label_encoding: 'BIOUL',
      dropout: 0.5,
      text_field_embedder: {
        token_embedders: {
          tokens: common.word_embedder(word_dim, trainable_with_vectors=true),
          token_characters: common.char_cnn(16, char_filters, [3], activation='relu'),
        } + common.elmo_embedders(elmo, 1, dropout=0.0),  // see common.elmo_embedder
      },
      // No input_size: the model takes it from the embedder (ELMo's width depends on the biLM).
      encoder: {
        type: 'lstm',
        hidden_size: hidden,
        num_layers: 2,
        dropout: 0.5,
        bidirectional: true,
      },
    } + (if elmo then { regularizer: common.elmo_regularizer(0.1) } else {}),
    // Deviation: published setups train ~75 epochs with patience 25, too long for a 2-core CPU
    // (timings: docs/BENCHMARKS.md, "Experiment run times"), so we stop after 20 epochs /
    // patience 5. Override with -o '{"trainer": {"num_epochs": 75, "patience": 25}}'.
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: 0.001 },
      num_epochs=if common.full_data then 20 else 15,
      patience=if common.full_data then 5 else 15,
      validation_metric='+f1-measure-overall',
      grad_norm=5.0,
    ),
  },
}
