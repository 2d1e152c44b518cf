// Semantic role labeling with He et al. (2017)'s deep highway BiLSTM, shared by srl_baseline.jsonnet
// and srl_elmo.jsonnet so the two differ ONLY in ELMo: config(elmo=true) concatenates ELMo (one
// mix of the biLM layers, lambda = 0.001 on its mixing weights) to the word vectors at the input,
// as Peters et al. (2018, section 5, Table 1) did for SRL.
//
// ELMO_TASKS_DATA=fixtures (default): fixtures/srl/ (invented sentences), tiny dims, seconds.
// ELMO_TASKS_DATA=full: the real data under ELMO_TASKS_SHARED_DATA, by the official file names.
// ELMO_TASKS_SRL_DATASET picks the benchmark (the one switch):
//   conll2005 (default): train on train-set.gz (WSJ 02-21), select on dev-set.gz (WSJ 24), report on
//     the test.wsj/ and test.brown/ release folders (`data.test`, `data.test_brown`);
//   conll2012 (the paper's Table 1 benchmark; scripts/reproduce.py's paper budget sets it): train on CoNLL-2012's train.english.v4_gold_conll, select
//     on dev.english.v4_gold_conll, report on test.english.v4_gold_conll (each plain or .gz, or the
//     per-document folders of conll-formatted-ontonotes-5.0/: elmo_tasks/tasks/official_files.py).
// ELMO_TASKS_DATA=substitutes (scripts/reproduce.py's mini budget): conll2005 as above; conll2012
//   without its training split: train on dev split by document (`#train`, about 9 documents in 10;
//   `#holdout` for model selection; see elmo_tasks/tasks/srl/reader.py) and report on test.
// Sample efficiency (Peters et al. 2018, section 5.4, Figure 1): train on a deterministic
//   sentence sample with the path suffix `#sample=P`, e.g.
//   -o '{"train_data_path": "<shared_data>/conll2005/train-set.gz#sample=0.01"}'.
//
// The paper's recipe (appendix A.5, an exact reimplementation of He et al. 2017; docs/PAPER.md, "SRL",
// and elmo_tasks/reproduction/paper_recipe/srl.toml, which tests/reproduction/test_paper_recipe.py
// checks against the `full` configs): 100-d word vectors fine-tuned, a 100-d predicate-indicator
// embedding, 8 alternating-direction LSTM layers of 300 units with highway connections and variational
// dropout 0.1 on each layer's output, one mask per sentence and layer, which the layer's next step also
// reads (He et al.'s code; `variational_alternating_lstm`, elmo_tasks/modules/alternating_lstm.py; its
// `drop_layer_outputs: false` is AllenNLP's `alternating_lstm`, which masks only the state each step
// reads back), their weights block-orthogonal with forget-gate biases 1 and every other bias 0, the
// tag projection orthogonal, the loss the tag sequence's negative log-likelihood (the words' losses
// summed over a sentence, averaged over a batch, as He et al.'s code), batches of 80 predicates,
// Adadelta (lr 1.0, rho 0.95, eps 1e-6), gradients clipped at 1.0 (their global norm, as He et al.'s
// code), at most 500 epochs with patience 200 on dev F1, BIO-constrained Viterbi decoding.
// Deviations:
//   - without ELMO_TASKS_WORD_VECTORS (docs/WORD_VECTORS.md; the paper: 100-d GloVe), 100-d word
//     embeddings trained from scratch on lowercased words, in both variants;
//   - ELMo's dropout 0.1 (the paper states none; allennlp-models' SRL+ELMo config) and lambda 0.001.
// The mini budget (scripts/reproduce.py) cuts the layers, epochs and patience and keeps its committed
// records' initialisation by overrides (elmo_tasks/reproduction/task_table.py); it trains in `substitutes`
// mode, so without the `paper_only` keys below (the summed loss: it averages over a sentence's words; the
// output dropout: AllenNLP's `alternating_lstm`, whose dropout masks only the state fed back).
// The encoder's input size is left out on purpose: the model derives it from the embedder (ELMo's
// width depends on the biLM's options file) plus the predicate embedding.
local common = import 'common.libsonnet';

local full = common.full_data;
local dataset = std.extVar('ELMO_TASKS_SRL_DATASET');
local conll2005 = common.shared_data + '/conll2005/';
local conll2012 = common.shared_data + '/conll2012/';

local paths = {
  conll2005: if full then {
    train: conll2005 + 'train-set.gz',
    validation: conll2005 + 'dev-set.gz',
    test: conll2005 + 'test.wsj',
    test_brown: conll2005 + 'test.brown',
  } else {
    train: common.fixtures + '/srl/conll2005_train.txt',
    validation: common.fixtures + '/srl/conll2005_dev.txt',
    test: common.fixtures + '/srl/conll2005_test.txt',
    test_brown: common.fixtures + '/srl/conll2005_test.txt',
  },
  conll2012: if common.substitute_data then {
    train: conll2012 + 'dev.english.v4_gold_conll.gz#train',
    validation: conll2012 + 'dev.english.v4_gold_conll.gz#holdout',
    test: conll2012 + 'test.english.v4_gold_conll.gz',
  } else if full then {
    train: conll2012 + 'train.english.v4_gold_conll',
    validation: conll2012 + 'dev.english.v4_gold_conll',
    test: conll2012 + 'test.english.v4_gold_conll',
  } else {
    train: common.fixtures + '/srl/conll2012_dev.gold_conll#train',
    validation: common.fixtures + '/srl/conll2012_dev.gold_conll#holdout',
    test: common.fixtures + '/srl/conll2012_test.gold_conll',
  },
};

local data = if std.objectHas(paths, dataset) then paths[dataset]
  else error 'ELMO_TASKS_SRL_DATASET must be conll2005 or conll2012, not ' + dataset;

// Keys of the paper's recipe the mini budget's committed runs never had: common.paper_only.
local paper_only = common.paper_only;

local word_dim = if full then 100 else 16;
local predicate_dim = if full then 100 else 8;
local hidden = if full then 300 else 16;
local layers = if full then 8 else 2;

{
  data:: data,

  // Without word vectors, words seen only in dev would keep random vectors: the vocabulary comes
  // from train alone.
  config(elmo):: common.task_base + common.bucket_loaders(if full then 80 else 8)
                 + common.word_vocabulary({ datasets_for_vocab_creation: ['train'] }, data.test) + {
    dataset_reader: {
      type: 'srl_reader',
      data_format: dataset,
      // lowercased like the paper's 100-d GloVe 6B vectors
      token_indexers: { tokens: common.word_indexer(lowercase=true) } + common.elmo_indexers(elmo),
    },
    train_data_path: data.train,
    validation_data_path: data.validation,
    model: {
      type: 'srl_model',
      predicate_embedding_dim: predicate_dim,
      text_field_embedder: {
        token_embedders: { tokens: common.word_embedder(word_dim, trainable_with_vectors=true) }
                         + common.elmo_embedders(elmo, 1, dropout=0.1),
      },
      encoder: {
        type: 'alternating_lstm',
        hidden_size: hidden,
        num_layers: layers,
        recurrent_dropout_probability: 0.1,
        use_highway: true,
      } + paper_only({ type: 'variational_alternating_lstm', drop_layer_outputs: true }),
      initializer: {
        regexes: if full then [
          ['tag_projection.*weight', { type: 'orthogonal' }],
          ['tag_projection.*bias', { type: 'zero' }],
          // AllenNLP's LSTM cells set the forget-gate bias of the state projection to 1 and the rest
          // to 0, and their weights block-orthogonal; their input projection's bias starts at 0 too.
          ['encoder.*input_linearity.*bias', { type: 'zero' }],
        ] else [
          ['tag_projection.*weight', { type: 'xavier_uniform' }],
          ['tag_projection.*bias', { type: 'zero' }],
        ],
      },
    } + paper_only({ sentence_loss: 'sum' }) + (if elmo then { regularizer: common.elmo_regularizer(0.001) } else {}),
    trainer: common.trainer(
      optimizer={ type: 'adadelta', lr: 1.0, rho: 0.95, eps: 1e-6 },
      // the paper's 500 and 200
      num_epochs=if full then 500 else 20,
      patience=if full then 200 else 20,
      validation_metric='+f1-measure-overall',
      grad_norm=1.0,
    ),
  },
}
