// Pieces shared by every experiment. Import with:  local common = import 'common.libsonnet';
// Paths are relative to the repo root (run `allennlp` from there).
{
  // ELMO_TASKS_DATA=full switches every experiment from the bundled fixtures to the real data.
  full_data: std.extVar('ELMO_TASKS_DATA') == 'full',
  shared_data: std.extVar('ELMO_TASKS_SHARED_DATA'),
  seed: std.parseInt(std.extVar('ELMO_TASKS_SEED')),
  random_seeds: { random_seed: $.seed, numpy_seed: $.seed + 1, pytorch_seed: $.seed + 2 },

  // The biLM our ELMo experiments use unless ELMO_OPTIONS / ELMO_WEIGHTS say otherwise.
  // Until the project's own pretrained small biLM lands, this is bilm-tf's tiny test model.
  elmo_options: std.extVar('ELMO_OPTIONS'),
  elmo_weights: std.extVar('ELMO_WEIGHTS'),

  // The character indexer ELMo needs (AllenNLP's, whose ids equal the original scheme).
  elmo_indexer: { type: 'elmo_characters' },

  // ELMo as a token embedder: `lambda` becomes an L2 penalty on the mixing weights through
  // `regularizer` below; `num_output_representations` > 1 gives independent mixes of ONE pass.
  elmo_embedder(num_output_representations=1, dropout=0.5, do_layer_norm=false):: {
    type: 'fast_elmo',
    options_file: $.elmo_options,
    weight_file: $.elmo_weights,
    dropout: dropout,
    do_layer_norm: do_layer_norm,
    num_output_representations: num_output_representations,
  },

  // The paper's lambda * ||w||^2 on the ELMo mixing weights (scalar_mix_k.scalar_parameters).
  elmo_regularizer(lambda):: {
    regexes: [['.*scalar_mix.*scalar_parameters.*', { type: 'l2', alpha: lambda }]],
  },
}
