// ESIM on SNLI (Chen et al. 2017), shared by snli_baseline.jsonnet and snli_elmo.jsonnet so the
// two differ ONLY in ELMo: config(elmo=false) is the baseline; config(elmo=true) adds ELMo with an
// L2 penalty lambda = 0.001 on its mixing weights (Peters et al. 2018, sections 3.3 and 5).
//
// The paper's recipe (appendix A.3; docs/PAPER.md, "SNLI", and
// elmo_tasks/reproduction/paper_recipe/snli.toml, which tests/reproduction/test_paper_recipe.py
// checks against the `full` configs): 300 units in every LSTM and feedforward layer, ReLU in every
// feedforward layer, 300-d GloVe kept fixed, 0.5 variational dropout on the input of each LSTM and
// 0.5 dropout on the input of the last two fully connected layers, Adam (lr 0.0004) with the
// gradient norm clipped at 5.0, the rate halved after each epoch without a better dev accuracy,
// batches of 32. With ELMo (the paper's best SNLI configuration): ELMo at the input and the output
// of the lowest LSTM (the input encoder; two mixes of one biLM pass) with layer norm and
// lambda = 0.001, an L2 penalty of 0.0001 on every recurrent and feedforward weight matrix and 0.5
// dropout after the attention. Where A.3 gives no value, allennlp-models' ESIM+ELMo config
// (pair_classification/esim_elmo.jsonnet): at most 75 epochs with patience 5, its initialisation
// (Xavier for input and feedforward weights, orthogonal recurrent weights, forget-gate biases 1).
// Deviation: ELMo's own dropout is 0 (the paper states none): the model's 0.5 input dropout already
//   drops out ELMo's input mix, and dropped out twice ELMo fell behind (docs/RESULTS.md).
//
// ELMO_TASKS_DATA=fixtures (default): the bundled sample in fixtures/snli/ (about 3,000 training
//   pairs, 490 validation pairs; see its NOTICE.md), 32-d layers, Adam 3e-3 and dropout 0.2 for
//   6 epochs, ELMo at the input only; a few CPU-minutes.
// ELMO_TASKS_DATA=full: the recipe above on SNLI 1.0's snli_1.0_train.jsonl, selecting the model on
//   snli_1.0_dev.jsonl and reporting on snli_1.0_test.jsonl (`data.test`, which
//   scripts/reproduce.py evaluates); plain or .gz.
// ELMO_TASKS_DATA=substitutes (scripts/reproduce.py's mini budget, without SNLI's training file):
//   trains on SNLI dev minus a held-out tenth (path suffix `#train`), selects the model on that
//   tenth (`#holdout`; split by premise, see elmo_tasks/tasks/snli/reader.py) and reports on SNLI
//   test. docs/DATA.md lists the files. The mini budget cuts the sizes, epochs and patience and
//   keeps its committed records' clipping (10), trained word vectors and initialisation by
//   overrides (elmo_tasks/reproduction/task_table.py, SNLI_MINI). ELMo goes where the paper puts it
//   (the input and the input encoder's output, with the dropout after the attention) on the real data
//   in both modes; the rest of ELMo's part of the recipe (`paper` below: layer norm, the penalty on
//   other weights) is set in `full` mode only, as the mini budget's committed records had neither.
// Word vectors: ELMO_TASKS_WORD_VECTORS (docs/WORD_VECTORS.md), in both variants; without it the
//   word embeddings are trained from scratch on lowercased tokens.
// Sizes: `dim` below is every layer's width. Input sizes are derived by the model, so one `-o`
//   changes one size, e.g. -o '{"model.encoder.hidden_size": 64}'.
local common = import 'common.libsonnet';

local full = common.full_data;
// The rest of ELMo's part of the paper's recipe (layer norm, the penalty on other weights), in `full`
// mode only: the mini budget's overrides reach its baseline too, which has no ELMo embedder or
// penalty to set back. `-o` sets them on a `substitutes` run (the `elmo_layer_norm` analysis of
// elmo_tasks/reproduction/task_table.py).
local paper = common.data_mode == 'full';
// ELMo at the input and at the input encoder's output (A.3) on the real data, with the dropout after the
// attention that the paper has with it; at the input only on the fixtures (the README's main job).
local elmo_output = full;
local dim = if full then 300 else 32;
// Fixture mode learns from ~3,000 pairs in a few epochs: a larger step and lighter dropout than
// the paper's (measured on the bundled sample; see the README's main job).
local lr = if full then 0.0004 else 0.003;
local dropout = if full then 0.5 else 0.2;
local snli_dir = common.shared_data + '/snli/';
// A.3: with ELMo, an L2 penalty on "all recurrent and feed forward weight matrices": the LSTMs'
// input and recurrent weights and the feedforward and logit layers' weights (biases, the word
// embedding and ELMo's own weights left out).
local weight_matrices = '^(encoder|inference_encoder|projection_feedforward|output_feedforward|output_logit)\\..*weight';

{
  data:: if common.substitute_data then {
    train: snli_dir + 'snli_1.0_dev.jsonl.gz#train',
    validation: snli_dir + 'snli_1.0_dev.jsonl.gz#holdout',
    test: snli_dir + 'snli_1.0_test.jsonl.gz',
  } else if full then {
    train: snli_dir + 'snli_1.0_train.jsonl',
    validation: snli_dir + 'snli_1.0_dev.jsonl',
    test: snli_dir + 'snli_1.0_test.jsonl',
  } else {
    train: common.fixtures + '/snli/train.jsonl',
    validation: common.fixtures + '/snli/dev.jsonl',
    test: common.fixtures + '/snli/test.jsonl.gz',
  },

  // Without word vectors the vocabulary comes from train and dev (AllenNLP's default).
  config(elmo, elmo_at_output=elmo_output):: common.task_base + common.bucket_loaders(32)
                                        + common.word_vocabulary({}, $.data.test) + {
    dataset_reader: {
      type: 'snli_reader',
      tokenizer: { type: 'spacy_blank' },
      token_indexers: { tokens: common.word_indexer(lowercase=true, lowercase_with_vectors=false) }
                      + common.elmo_indexers(elmo),
    },
    train_data_path: $.data.train,
    validation_data_path: $.data.validation,
    model: {
      type: 'snli_model',
      dropout: dropout,
      elmo_at_output: elmo && elmo_at_output,
      text_field_embedder: {
        // A.3: GloVe "fixed during training"
        token_embedders: { tokens: common.word_embedder(dim, trainable_with_vectors=!full) }
                         + common.elmo_embedders(
                           elmo, if elmo_at_output then 2 else 1, dropout=0.0, do_layer_norm=paper
                         ),
      },
      encoder: { type: 'lstm', hidden_size: dim, bidirectional: true },
      projection_feedforward: { hidden_dims: dim, num_layers: 1, activations: 'relu' },
      inference_encoder: { type: 'lstm', hidden_size: dim, bidirectional: true },
      output_feedforward: { hidden_dims: dim, num_layers: 1, activations: 'relu', dropout: dropout },
      initializer: {
        regexes: [
          ['.*_feedforward.*weight', { type: 'xavier_uniform' }],
          ['.*_feedforward.*bias', { type: 'zero' }],
          ['output_logit.weight', { type: 'xavier_uniform' }],
          ['output_logit.bias', { type: 'zero' }],
          // anchored: an unanchored '.*encoder.*bias' also matched the biLM's token_encoder
          ['^(encoder|inference_encoder)\\..*weight_ih.*', { type: 'xavier_uniform' }],
          ['^(encoder|inference_encoder)\\..*weight_hh.*', { type: 'orthogonal' }],
        ] + (if full then [
          // allennlp-models': the forget gate's recurrent bias starts at 1, every other bias at 0
          ['^(encoder|inference_encoder)\\..*bias_hh.*', { type: 'lstm_hidden_bias' }],
        ] else []) + [
          ['^(encoder|inference_encoder)\\..*bias.*', { type: 'zero' }],
        ],
      },
    } + (if elmo && elmo_output then { attention_dropout: 0.5 } else {})
      + (if elmo then {
           regularizer: {
             regexes: common.elmo_regularizer(0.001).regexes
                      + (if paper then [[weight_matrices, { type: 'l2', alpha: 0.0001 }]] else []),
           },
         } else {}),
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: lr },
      // A.3 gives no epochs: allennlp-models' 75, patience 5
      num_epochs=if full then 75 else 6,
      patience=if full then 5 else 6,
      validation_metric='+accuracy',
      grad_norm=if full then 5.0 else 10.0,
    ) + {
      // halved whenever validation accuracy does not improve (the paper; allennlp-models' ESIM), by
      // AllenNLP's reduce_on_plateau under the name that works on torch 2.14 (README, registered names)
      learning_rate_scheduler: { type: 'reduce_lr_on_plateau', factor: 0.5, mode: 'max', patience: 0 },
    },
  },
}
