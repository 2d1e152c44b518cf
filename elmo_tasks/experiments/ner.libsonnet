// CoNLL-2003 NER with the BiLSTM-CRF of Peters et al. (2017), the ELMo paper's NER baseline.
// ner_baseline.jsonnet and ner_elmo.jsonnet differ only in `elmo`.
//
// The paper's recipe (Peters et al. 2018, appendix A.7), which ELMO_TASKS_DATA=full trains as it is:
// 50-d word vectors, fine-tuned, + a character CNN (16-d character embeddings, 128 filters of width
// 3, ReLU, max pooling) -> two BiLSTM layers of 200 and 100 units per direction, variational dropout
// on the input of both -> a dense layer -> CRF over BIOUL tags, decoded with Viterbi under the
// scheme's constraints; Adam at a constant 1e-3, gradients rescaled above an L2 norm of 5, early
// stopping on eng.testa; ELMo at the input of the lowest BiLSTM, lambda = 0.1. Where the appendix
// gives no value, allennlp-models' NER config does (batches of 64, dropout 0.5, no CRF start/end
// transitions, at most 75 epochs with patience 25); docs/PAPER.md lists each such choice and the
// one thing the paper used that we cannot (Senna's vectors). Metric: conlleval span F1
// (SpanBasedF1Measure, see elmo_tasks/tasks/ner/tags.py for why it equals conlleval here).
//
// ELMO_TASKS_DATA=fixtures (default): the bundled invented sample in fixtures/ner/, a minute or two.
// ELMO_TASKS_DATA=full: CoNLL-2003 eng.train / eng.testa (model selection) / eng.testb (`data.test`,
//   which scripts/reproduce.py evaluates); docs/DATA.md says where to put them. scripts/reproduce.py's
//   mini budget cuts this recipe to a 2-core CPU with overrides (elmo_tasks/reproduction/task_table.py).
// Sizes: one `-o` changes one size (the encoder's input size is derived from the embedder), e.g.
//   -o '{"model.encoder.hidden_sizes": [100, 100]}'.
local common = import 'common.libsonnet';

local data_paths = if common.full_data then {
  train: common.shared_data + '/conll2003/eng.train',
  validation: common.shared_data + '/conll2003/eng.testa',  // dev: model selection
  test: common.shared_data + '/conll2003/eng.testb',  // only to report
} else {
  train: common.fixtures + '/ner/train.txt',
  validation: common.fixtures + '/ner/dev.txt',
  test: common.fixtures + '/ner/test.txt',
};

local word_dim = 50;
local char_filters = 128;

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
      // The recipe's dropout is the encoder's, on the input of each BiLSTM layer; none elsewhere.
      dropout: 0.0,
      include_start_end_transitions: false,
      loss_reduction: 'sum',  // the CRF's loss summed over a batch's sentences, as AllenNLP's tagger
      text_field_embedder: {
        token_embedders: {
          tokens: common.word_embedder(word_dim, trainable_with_vectors=true),
          token_characters: common.char_cnn(16, char_filters, [3], activation='relu'),
        } + common.elmo_embedders(elmo, 1, dropout=0.0),  // see common.elmo_embedder
      },
      // No input_size: the model takes it from the embedder (ELMo's width depends on the biLM).
      encoder: {
        type: 'stacked_bilstm',
        hidden_sizes: [200, 100],
        input_dropout: 0.5,  // variational: one mask per sentence
      },
    } + (if elmo then { regularizer: common.elmo_regularizer(0.1) } else {}),
    // Early stopping on eng.testa: at most 75 epochs, patience 25 (allennlp-models; the paper gives
    // none). The fixtures train 15 epochs, every one of them.
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: 0.001 },
      num_epochs=if common.full_data then 75 else 15,
      patience=if common.full_data then 25 else 15,
      validation_metric='+f1-measure-overall',
      grad_norm=5.0,
    ),
  },
}
