// CoNLL-2012 coreference with the end-to-end span-ranking model of Lee et al. (2017).
// coref_baseline.jsonnet and coref_elmo.jsonnet differ only in `elmo`.
//
// The paper's recipe (appendix A.6: Lee et al. 2017's hyperparameters exactly, e2e-coref's
// experiments.conf; docs/PAPER.md, "Coreference", and elmo_tasks/reproduction/paper_recipe/coref.toml,
// which tests/reproduction/test_paper_recipe.py checks against the `full` configs): word vectors +
// char CNN (8-d characters, 50 filters of widths 3, 4, 5) + one BiLSTM layer of 200 per direction
// over each sentence (Lee et al.'s cell: input and forget gates coupled, a learned initial state),
// span width embedding, head attention (scored from the BiLSTM states, summing the word
// representations), 150-unit 2-layer mention and antecedent scorers, 20-d features, max span
// width 10, lambda = 0.4 spans per word kept unless they cross a span kept before, K = 250 antecedents;
// dropout 0.5 on the word representations (ELMo's included: the paper's 50% on ELMo), 0.2 on the
// BiLSTM (its recurrent state and its outputs), on the feature embeddings and in the scorers; Adam
// 1e-3 decayed by 0.999 every 100 updates (`staircase_exponential`), gradient norm clipped at 5,
// one document per batch, a training document of more than 50 sentences cropped to a random window of
// 50 each time it is seen (validation and test documents whole); at most 150 epochs, patience
// 10 (allennlp-models' coref config: Lee et al. give none). ELMo at the input only.  Metric: the
// average of MUC, B-cubed and CEAF-phi4 F1 with the CoNLL-2012 scorer's semantics (coref_f1).
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
// The mini budget (scripts/reproduce.py) cuts the sizes, K (50), the epochs and patience, and keeps
// its committed records' BiLSTM (no dropout) and schedule (x 0.997 per epoch) by overrides
// (elmo_tasks/tasks/coref/spec.py); it trains in `substitutes` mode, so without the `paper_only` keys
// below (the dropout on the BiLSTM's outputs and on the feature embeddings, the crossing check, the head
// attention from the BiLSTM states, the random windows) and with its records' training documents: cut
// into consecutive pieces of at most 50 sentences (the reader's max_sentences), each an instance.
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
  train: common.fixtures + '/coref/train.gold_conll',
  validation: common.fixtures + '/coref/dev.gold_conll',
  test: common.fixtures + '/coref/test.gold_conll',
};

local max_span_width = 10;

// Keys of the paper's recipe the mini budget's committed runs never had: common.paper_only.
local paper_only = common.paper_only;

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
    // `full`: whole documents, cropped to Lee et al.'s random windows by the training loader (why there:
    // elmo_tasks/tasks/coref/training_windows.py); otherwise cut into pieces by the reader
    dataset_reader: reader(elmo, if common.data_mode == 'full' then null else 50),
    data_loader+: paper_only({ collate_fn: { type: 'coref_random_window', max_sentences: 50 } }),
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
      // Lee et al.'s LSTM (coupled input and forget gates, a learned initial state, initialised as their
      // code does: elmo_tasks/tasks/coref/coupled_lstm.py) drops out its recurrent state with one mask per
      // sentence; its outputs are dropped out by the model's context_dropout
      context_layer: if common.full_data then {
        type: 'coupled_gate_lstm',
        hidden_size: 200,
        recurrent_dropout_probability: 0.2,
      } else {
        type: 'lstm',
        bidirectional: true,
        hidden_size: 16,
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
      max_antecedents: if common.full_data then 250 else 50,
      lexical_dropout: 0.5,
      initializer: {
        regexes: [
          ['.*_feedforward.*weight', { type: 'xavier_normal' }],
          ['.*scorer.*weight', { type: 'xavier_normal' }],
        ] + (if common.full_data then [] else [  // `full`: the LSTM initialises itself as Lee et al.'s code
          ['.*weight_ih.*', { type: 'xavier_normal' }],
          ['.*weight_hh.*', { type: 'orthogonal' }],
        ]),
      },
    } + paper_only({
      context_dropout: 0.2,
      feature_dropout: 0.2,
      non_crossing_pruning: true,
      head_attention_from_context: true,
    }),
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: 0.001 },
      num_epochs=if common.full_data then 150 else 10,
      patience=10,
      validation_metric='+coref_f1',
      grad_norm=5.0,
    ) + {
      learning_rate_scheduler: if common.full_data
      then { type: 'staircase_exponential', decay_rate: 0.999, decay_steps: 100 }
      else { type: 'exponential', gamma: 0.997 },
    },
  },
}
