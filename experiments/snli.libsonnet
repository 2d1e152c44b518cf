// ESIM on SNLI (Chen et al. 2017), shared by snli_baseline.jsonnet and snli_elmo.jsonnet so the
// two differ ONLY in ELMo: config(elmo=false) is the baseline; config(elmo=true) adds ELMo at the
// input with an L2 penalty lambda = 0.001 on the mixing weights (Peters et al. 2018, sections 3.3
// and 5, Table 1); config(elmo=true, elmo_at_output=true) adds it at the output of the inference
// composition too (two mixes of one biLM pass), as the paper did for SNLI.
// Deviation: ELMo at the input only by default. With the shipped small biLM, ELMo at the output
//   kept ESIM at chance: on the bundled sample (40 steps of 32 pairs, Adam 3e-3) the training loss
//   stayed at 1.19 (above ln 3) with input and output, with or without layer norm, while input only
//   fell to 1.08-1.10 like the baseline (docs/RESULTS_history.md, SNLI notes). -o '{"model.elmo_at_output":
//   true, "model.text_field_embedder.token_embedders.elmo.num_output_representations": 2}' restores it.
//
// ELMO_TASKS_DATA=fixtures (default): the bundled sample in fixtures/snli/ (about 3,000 training
//   pairs, 490 validation pairs; see its NOTICE.md), 32-d layers, Adam 3e-3 and dropout 0.2 for
//   6 epochs; a few CPU-minutes.
// ELMO_TASKS_DATA=full: the paper's recipe (300-d, Adam 4e-4, batch 32, dropout 0.5) on SNLI 1.0's
//   snli_1.0_train.jsonl, selecting the model on snli_1.0_dev.jsonl and reporting on
//   snli_1.0_test.jsonl (`data.test`, which scripts/reproduce.py evaluates); plain or .gz.
// ELMO_TASKS_DATA=substitutes (scripts/reproduce.py's mini budget, without SNLI's training file):
//   trains on SNLI dev minus a held-out tenth (path suffix `#train`), selects the model on that
//   tenth (`#holdout`; split by premise, see elmo_tasks/tasks/snli/reader.py) and reports on SNLI
//   test. docs/DATA.md lists the files.
// Word vectors: ELMO_TASKS_WORD_VECTORS (docs/WORD_VECTORS.md), in both variants; without it the
//   word embeddings are trained from scratch on lowercased tokens.
// Sizes: `dim` below is every layer's width. Input sizes are derived by the model, so one `-o`
//   changes one size, e.g. -o '{"model.encoder.hidden_size": 64}'.
local common = import 'common.libsonnet';

local full = common.full_data;
local dim = if full then 300 else 32;
// Fixture mode learns from ~3,000 pairs in a few epochs: a larger step and lighter dropout than
// the paper's (measured on the bundled sample; see the README's main job).
local lr = if full then 0.0004 else 0.003;
local dropout = if full then 0.5 else 0.2;
local snli_dir = common.shared_data + '/snli/';

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
    train: 'fixtures/snli/train.jsonl',
    validation: 'fixtures/snli/dev.jsonl',
    test: 'fixtures/snli/test.jsonl.gz',
  },

  // Without word vectors the vocabulary comes from train and dev (AllenNLP's default).
  config(elmo, elmo_at_output=false):: common.task_base + common.bucket_loaders(32)
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
        token_embedders: { tokens: common.word_embedder(dim, trainable_with_vectors=true) }
                         + common.elmo_embedders(elmo, if elmo_at_output then 2 else 1, dropout=0.0),
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
          ['^(encoder|inference_encoder)\\..*bias.*', { type: 'zero' }],
        ],
      },
    } + (if elmo then { regularizer: common.elmo_regularizer(0.001) } else {}),
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: lr },
      num_epochs=if full then 30 else 6,
      patience=if full then 5 else 6,
      validation_metric='+accuracy',
      grad_norm=10.0,
    ) + {
      // halved whenever validation accuracy does not improve (the paper; allennlp-models' ESIM), by
      // AllenNLP's reduce_on_plateau under the name that works on torch 2.14 (README, registered names)
      learning_rate_scheduler: { type: 'reduce_lr_on_plateau', factor: 0.5, mode: 'max', patience: 0 },
    },
  },
}
