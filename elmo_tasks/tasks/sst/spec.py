"""SST-5's spec (the biattentive classification network): what the harness runs, what the report says about
it, its demo page and what the commands say of its archives (elmo_tasks/tasks/registry.py)."""

from elmo_tasks.demo.task_pages import DemoPage, FormField
from elmo_tasks.reproduction.notes import TaskNotes
from elmo_tasks.reproduction.specs import Table1Row
from elmo_tasks.reproduction.task_table import (
    GLOVE_840B,
    INPUT_ONLY,
    LAYER_ANALYSES,
    benchmark_spec,
    mini_budget,
    paper_budget,
    recipe_budget,
    until_converged,
)
from elmo_tasks.tasks.sst.names import NAMES

SST5_MINI = {
    # CPU: the sentences only, where the recipe trains on every phrase of 4+ tokens (~10x the instances)
    "dataset_reader.phrases": "roots",
    "model.encoder.hidden_size": 100,
    # CPU: one ReLU layer of 200 in the head, where the recipe has two (1200, 600)
    "model.feedforward.activations": ["relu"],
    "model.feedforward.dropout": [0.2],
    "model.feedforward.hidden_dims": [200],
    "model.feedforward.num_layers": 1,
    "model.integrator.hidden_size": 100,
    "model.pre_encode_feedforward.hidden_dims": [100],
    # the committed records' setting (allennlp-models' rate), where the recipe has the paper's 1e-4
    "trainer.optimizer.lr": 0.001,
    # with word vectors at a cap of 20 epochs, one baseline seed's best epoch was its 19th
    **until_converged(30, 4),
}

SPEC = benchmark_spec(
    NAMES.task,
    Table1Row(6, "SST-5", metric=("accuracy", "accuracy"), paper=(51.4, 54.7)),
    elmo_at="input and output, lambda 0.001",  # its Table 2 row's lambda = 0.001 column is this model
    analyses={**LAYER_ANALYSES, **INPUT_ONLY},
    mini=mini_budget(SST5_MINI),
    # the experiment files with our 300-d vectors in place of GloVe's: one thread takes about 0.9 s a batch
    # (baseline) to 1.4 s (ELMo, its layer cache filling), so 14 to 22 minutes an epoch of 936 batches and
    # up to 40 epochs a run (docs/BENCHMARKS.md, "Experiment run times"): for a GPU
    recipe=recipe_budget(),
    full=paper_budget(GLOVE_840B, {}),
    report=TaskNotes(
        title="SST-5 (biattentive classification network), test root accuracy",
        trained_on={
            "mini": "SST train roots (8,544 sentences)",
            "paper": "SST train, all phrases",
        },
        limits={
            "mini": (
                "The labelled phrases, the model and the biLM: the mini runs train on the 8,544 training sentences "
                "alone, where the paper also trained on their labelled phrases of four or more tokens (93,567; "
                "appendix A.8); layers of 100 units where the paper has 300; and a biLM that has read 63M tokens (24M "
                "distinct) where the paper's read about 8 billion (10 epochs of the 1B Word Benchmark)."
            ),
        },
        notes={
            "mini": (
                "Selected on dev roots; our word2vec vectors, fixed, in place of GloVe and smaller/shorter training "
                "than the paper (see elmo_tasks/experiments/sst5.libsonnet). The config trains on all distinct phrases "
                "of train.txt, as the paper did; the mini budget trains on sentences only (`dataset_reader.phrases: "
                "roots`). With our word vectors and the stage-4 biLM the baseline was ahead of ELMo as configured "
                "(input and output, lambda 0.001) beyond seed noise (43.86 against 42.43); with the stage-5 biLM the "
                "two are level within seed noise (43.50, seeds spread 41.9 to 45.4). What was tried with the stage-5 "
                "biLM, on dev (Tables 2 and 3, 3 seeds each, against the baseline's "
                "44.54 ± 0.71 and the config's 43.54 ± 1.36): lambda 1 43.78 ± 1.34, the top layer alone "
                "43.48 ± 0.86, the token layer alone (the biLM's character encoder, no context) 42.57 ± 0.92, ELMo at "
                "the input only 44.35 ± 0.88; none is ahead of the baseline, as none was with the stage-4 biLM. "
                "On these runs the biLM's contextual layers add nothing to SST-5 that word2vec "
                "vectors trained on the same corpus do not already give, and ELMo at the output does not help."
            ),
        },
    ),
    demo=DemoPage(
        "Sentiment (SST-5)",
        "the probabilities of the five sentiment classes",
        [FormField("sentence", "Sentence", "A gorgeous , witty and moving film .")],
    ),
    archive_holds="an SST-5 model",
    archive_command="evaluate",
)
