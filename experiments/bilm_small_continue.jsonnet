// Continue training the shipped small biLM on the whole corpus, shuffled across domains.
// Step 1 builds the corpus once (tokenized as training does, held-out files left out):
//   python scripts/build_bilm_corpus.py $ELMO_TASKS_SHARED_DATA/lm runs/bilm_corpus   # the lm/ folder of docs/DATA.md
// Step 2 trains from the shipped weights (and, when the shipped folder has it, the shipped
// softmax, whose vocabulary is the corpus vocabulary: the builder is deterministic):
//   ELMO_TASKS_DATA=full allennlp train experiments/bilm_small_continue.jsonnet -s runs/bilm_v2
//   ... --recover   # resume an interrupted run from its last checkpoint
// BILM_CORPUS moves the corpus folder; BILM_START the starting biLM (a folder written by
// `allennlp export-bilm`, or the shipped one). See elmo_tasks/pretrained/bilm_small/MODEL_CARD.md.
local common = import 'common.libsonnet';
local small = import 'bilm_small.jsonnet';
local corpus = std.extVar('BILM_CORPUS');

small {
  dataset_reader+: {
    // the corpus is already tokenized, one sentence per line, shuffled
    tokenizer: { type: 'whitespace' },
    text_format: 'sentence_per_line',
    drop_wikiextractor_markup: false,
    unescape_html: false,
    fallback_encoding: null,
  },
  train_data_path: if common.full_data then corpus + '/train.txt' else common.fixtures + '/lm/train.txt',
  vocabulary: if common.full_data then { type: 'from_files', directory: corpus + '/vocabulary' }
  else { max_vocab_size: { lm_targets: 1000 } },
  model+: { pretrained_file: if common.full_data then std.extVar('BILM_START') else common.elmo_weights },
  trainer+: {
    // checkpoints every batches_per_epoch batches; stop the run whenever the budget is spent
    num_epochs: if common.full_data then 200 else 1,
    checkpointer: { keep_most_recent_by_count: 2 },
  },
}
