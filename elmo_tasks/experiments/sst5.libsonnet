// SST-5 with the biattentive classification network (McCann et al. 2017), shared by
// sst5_baseline.jsonnet and sst5_elmo.jsonnet so the two differ ONLY in ELMo: config(elmo=true)
// adds ELMo at the input (concatenated to the word embeddings) and at the output (a second mix
// of the same biLM pass, concatenated to the integrator output), lambda = 0.001 on its mixing
// weights, as in Peters et al. (2018), section 5 and Table 1.
//
// The paper's recipe (Peters et al. 2018, appendix A.8), which ELMO_TASKS_DATA=full trains as it is:
// McCann et al.'s BCN with biLSTMs of 300, its maxout head replaced by a feedforward network of two
// ReLU layers with dropout; training on the phrases (subtrees) of four or more tokens, to match the
// CoVe setup, each as often as the trees have it (the reader's `phrases`); Adam at 1e-4; ELMo at the
// input and output, lambda = 0.001. Where neither gives a value, allennlp-models' BCN-ELMo config does
// (pre-encoding layer of 300, dropout 0.5 / 0.25 / 0.1, head sizes 1200 and 600 with dropout 0.2 and
// 0.3, batches of 100, gradient norm 5, at most 40 epochs with patience 5 on dev accuracy); the
// word vectors are McCann et al.'s (GloVe 840B, cased and fixed). docs/PAPER.md, "SST-5", lists each.
// Validation and test use the sentences (roots).
//
// ELMO_TASKS_DATA=fixtures (default): fixtures/sst/ (60/20/20 trees), tiny dims, every distinct
//   phrase, a few minutes.
// ELMO_TASKS_DATA=full: <shared_data>/sst/{train,dev}.txt; choose on dev, then report on test.txt
//   (`data.test`, which scripts/reproduce.py evaluates); docs/DATA.md says where to put them.
//   scripts/reproduce.py's mini budget cuts this recipe to a 2-core CPU with overrides
//   (elmo_tasks/reproduction/task_table.py, SST5_MINI).
// Sizes: `hidden` is the encoder's and integrator's width, `word_dim` the word vectors'; input
//   sizes are derived by the model, so one `-o` changes one size, e.g.
//   -o '{"model.encoder.hidden_size": 64}'.
// Without ELMO_TASKS_WORD_VECTORS (docs/WORD_VECTORS.md), 300-d word embeddings trained from
//   scratch on lowercased tokens.
// Timings: docs/BENCHMARKS.md, "Experiment run times".
local common = import 'common.libsonnet';

local full = common.full_data;
local sst_dir = common.shared_data + '/sst/';
local word_dim = if full then 300 else 16;
local hidden = if full then 300 else 16;
// A.8: two ReLU layers with dropout in place of McCann et al.'s maxout network, sized as allennlp-models'
// maxout head (1200, 600; dropout 0.2, 0.3); a linear layer to the classes follows (the model's).
local head = if full then {
  num_layers: 2, hidden_dims: [1200, 600], activations: ['relu', 'relu'], dropout: [0.2, 0.3],
} else { num_layers: 1, hidden_dims: [32], activations: ['relu'], dropout: [0.2] };
// A.8: the phrases of four or more tokens, as CoVe trained; every copy, as the treebank's trees have them.
local training_phrases = if full then { min_tokens: 4, deduplicate: false } else 'all';

{
  data:: if full then {
    train: sst_dir + 'train.txt',
    validation: sst_dir + 'dev.txt',
    test: sst_dir + 'test.txt',
  } else {
    train: common.fixtures + '/sst/train.txt',
    validation: common.fixtures + '/sst/dev.txt',
    test: common.fixtures + '/sst/test.txt',
  },

  local reader(elmo, phrases) = {
    type: 'sst5_reader',
    phrases: phrases,
    token_indexers: { tokens: common.word_indexer(lowercase=true, lowercase_with_vectors=false) }
                    + common.elmo_indexers(elmo),
  },

  // Without word vectors the vocabulary comes from train and dev (AllenNLP's default).
  config(elmo):: common.task_base + common.bucket_loaders(if full then 100 else 32, sorting_keys=['tokens'])
                 + common.word_vocabulary({}, $.data.test) + {
    dataset_reader: reader(elmo, training_phrases),
    validation_dataset_reader: reader(elmo, 'roots'),
    train_data_path: $.data.train,
    validation_data_path: $.data.validation,
    model: {
      type: 'sst5_model',
      num_classes: 5,
      text_field_embedder: {
        token_embedders: { tokens: common.word_embedder(word_dim, trainable_with_vectors=false) }
                         + common.elmo_embedders(elmo, 2, dropout=0.0),
      },
      // ELMo is dropped out once per mix, by the model: the input mix with the word embeddings
      // (embedding_dropout), the output mix on the pooled vector (integrator_dropout).
      embedding_dropout: 0.5,
      // Input sizes are filled in by the model (word_dim + the biLM's output dim, then each
      // layer's output; the integrator reads [X; X - Y; X * Y]).
      pre_encode_feedforward: { num_layers: 1, hidden_dims: [hidden], activations: ['relu'], dropout: [0.25] },
      encoder: { type: 'lstm', hidden_size: hidden, bidirectional: true },
      integrator: { type: 'lstm', hidden_size: hidden, bidirectional: true },
      integrator_dropout: 0.1,
      poolings: ['max', 'min', 'mean', 'self_attentive'],
      elmo_at_output: elmo,
      // input_dim is filled in by the model (4 poolings x (2 * hidden [+ ELMo dim])).
      feedforward: head,
    } + (if elmo then { regularizer: common.elmo_regularizer(0.001) } else {}),
    trainer: common.trainer(
      optimizer={ type: 'adam', lr: if full then 0.0001 else 0.001 },
      num_epochs=if full then 40 else 5,
      patience=if full then 5 else null,
      validation_metric='+accuracy',
      grad_norm=5.0,
    ) + { checkpointer: { keep_most_recent_by_count: 1 } },
  },
}
