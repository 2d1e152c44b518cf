// ESIM on SNLI (Chen et al. 2017), shared by snli_baseline.jsonnet and snli_elmo.jsonnet so the
// two differ ONLY in ELMo: snli(elmo=false) is the baseline; snli(elmo=true) adds ELMo at the
// input and at the output of the inference composition (two mixes of one biLM pass), with an
// L2 penalty lambda = 0.001 on the mixing weights, as in Peters et al. (2018).
//
// ELMO_TASKS_DATA=fixtures (default): the bundled sample in fixtures/snli/, small dims; minutes on CPU.
// ELMO_TASKS_DATA=full: the paper's recipe (300-d, Adam 4e-4, batch 32, dropout 0.5). The full SNLI
//   training set is not available here, so we train on SNLI dev minus a held-out tenth (path suffix
//   `#train`), select the model on that tenth (`#holdout`; split by premise, see
//   elmo_tasks/tasks/snli/reader.py) and report on SNLI test (`test_path`, used by scripts/reproduce.py).
// Deviation from the paper: no pretrained GloVe vectors are available here, so the word embeddings
//   are trained from scratch (on lowercased tokens) in both variants.
// The sizes of the encoder input and the output feedforward input are left out on purpose: the
// model derives them from the embedder (ELMo's width depends on the biLM's options file).
local common = import 'common.libsonnet';

local full = common.full_data;
local dim = if full then 300 else 32;
local snli_dir = common.shared_data + '/snli/';

{
  train_path: if full then snli_dir + 'snli_1.0_dev.jsonl.gz#train' else 'fixtures/snli/train.jsonl',
  validation_path: if full then snli_dir + 'snli_1.0_dev.jsonl.gz#holdout' else 'fixtures/snli/dev.jsonl',
  test_path: if full then snli_dir + 'snli_1.0_test.jsonl.gz' else 'fixtures/snli/test.jsonl.gz',

  snli(elmo):: common.random_seeds + {
    dataset_reader: {
      type: 'snli_jsonl',
      tokenizer: { type: 'spacy_blank' },
      token_indexers: { tokens: { type: 'single_id', lowercase_tokens: true } }
                      + (if elmo then { elmo: common.elmo_indexer } else {}),
    },
    train_data_path: $.train_path,
    validation_data_path: $.validation_path,
    model: {
      type: 'esim_elmo',
      dropout: 0.5,
      elmo_at_output: elmo,
      text_field_embedder: {
        token_embedders: { tokens: { type: 'embedding', embedding_dim: dim, trainable: true } }
                         + (if elmo then { elmo: common.elmo_embedder(2) } else {}),
      },
      encoder: { type: 'lstm', hidden_size: dim, bidirectional: true },
      projection_feedforward: {
        input_dim: 8 * dim,  // [a; a~; a - a~; a * a~] of 2 * dim each
        hidden_dims: dim,
        num_layers: 1,
        activations: 'relu',
      },
      inference_encoder: { type: 'lstm', input_size: dim, hidden_size: dim, bidirectional: true },
      output_feedforward: { hidden_dims: dim, num_layers: 1, activations: 'tanh', dropout: 0.5 },
      initializer: {
        regexes: [
          ['.*_feedforward.*weight', { type: 'xavier_uniform' }],
          ['.*_feedforward.*bias', { type: 'zero' }],
          ['output_logit.weight', { type: 'xavier_uniform' }],
          ['output_logit.bias', { type: 'zero' }],
          ['.*encoder.*weight_ih.*', { type: 'xavier_uniform' }],
          ['.*encoder.*weight_hh.*', { type: 'orthogonal' }],
          ['.*encoder.*bias.*', { type: 'zero' }],
        ],
      },
    } + (if elmo then { regularizer: common.elmo_regularizer(0.001) } else {}),
    data_loader: { batch_sampler: { type: 'bucket', batch_size: 32 } },
    trainer: {
      optimizer: { type: 'adam', lr: 0.0004 },
      num_epochs: if full then 30 else 8,
      patience: if full then 5 else 8,
      validation_metric: '+accuracy',
      grad_norm: 10.0,
    },
  },
}
