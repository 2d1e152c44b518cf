"""The budgets and variants every task's spec is built from, and ``TASKS``: what ``scripts/reproduce.py`` runs.

Budgets: ``smoke`` (the bundled fixtures, a few batches: every step of a run, in minutes, run by the
test suite), ``mini`` (the real data, cut to what a 2-core CPU trains in minutes to an hour per run:
what docs/RESULTS.md reports), ``recipe`` (the experiment configs as they are, which follow the paper's
recipe, with the mini budget's word vectors in place of the paper's; 3 seeds: for tasks whose recipe a
CPU trains in hours) and ``paper`` (the experiment configs as they are, for a user with GPUs).
Each task's budgets, variants and the paper's numbers are in its own spec (``reproduction`` in
``elmo_tasks/tasks/<task>/spec.py``, beside what the report says about it); ``TASKS`` reads them from there,
so a new task joins with its folder (docs/CONVENTIONS.md, "Adding a task").
"""

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

from elmo_tasks.config_defaults import ELMO_EMBEDDER_PATH as ELMO
from elmo_tasks.config_defaults import MIXING_WEIGHTS_REGEX, token_layer_only, top_layer_only
from elmo_tasks.reproduction.allennlp_runs import from_caller
from elmo_tasks.reproduction.specs import Analysis, Budget, Overrides, Table1Row, TaskSpec, WordVectorRecipe
from elmo_tasks.tasks.registry import BenchmarkSpec, TaskView

if TYPE_CHECKING:  # the report's and the demo's modules read the specs: only named here
    from elmo_tasks.demo.task_pages import DemoPage
    from elmo_tasks.reproduction.notes import TaskNotes

BUDGETS = ("smoke", "mini", "recipe", "paper")


def _penalty(alpha: float) -> Dict[str, Any]:
    """The paper's lambda: an L2 penalty on the ELMo mixing weights."""
    return {"model.regularizer.regexes": [[MIXING_WEIGHTS_REGEX, {"type": "l2", "alpha": alpha}]]}


# The paper's Table 2: which biLM layers, and how they are mixed.
LAYER_ANALYSES = {
    "elmo_lambda1": Analysis("layers", "all layers, lambda = 1", _penalty(1.0)),
    "elmo_lambda0.001": Analysis("layers", "all layers, lambda = 0.001", _penalty(0.001)),
    "elmo_top_layer": Analysis("layers", "top layer only", fixed_layer_weights=top_layer_only),
    "elmo_token_layer": Analysis("layers", "token layer only", fixed_layer_weights=token_layer_only),
}
# The paper's Table 3: where ELMo goes.
INPUT_ONLY = {
    "elmo_input_only": Analysis(
        "placement", "input only", {"model.elmo_at_output": False, f"{ELMO}.num_output_representations": 1}
    )
}
INPUT_AND_OUTPUT = {
    "elmo_input_output": Analysis(
        "placement", "input and output", {"model.elmo_at_output": True, f"{ELMO}.num_output_representations": 2}
    )
}
# Why ELMo hurt on SNLI and NER: ELMo's own dropout on top of the task model's input dropout (the earlier
# configs), layer norm on the biLM layers, twice the epochs, a biLM fine-tuned on the training text.
ELMO_DIAGNOSIS = {
    "elmo_with_elmo_dropout": Analysis(
        "diagnosis", "ELMo's own dropout 0.5 too (the earlier config)", {f"{ELMO}.dropout": 0.5}
    ),
    "elmo_layer_norm": Analysis("diagnosis", "layer norm on the biLM layers", {f"{ELMO}.do_layer_norm": True}),
    "elmo_longer": Analysis("diagnosis", "twice the epochs", epochs_factor=2),
    "elmo_finetuned_bilm": Analysis("diagnosis", "biLM fine-tuned on the training text", bilm_finetuning=True),
}

# Smoke: every step of a run (train, archive, evaluate, record) on the fixtures, in seconds.
SMOKE = Budget("fixtures", {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 4}, seeds=1)
# The paper's recipe: its word vectors and, where an experiment cut them for 2 CPU cores, the
# epochs, patience and sizes of the paper (or of allennlp-models' config where the paper gives
# none; docs/PAPER.md, "Hyperparameter audit"). The GloVe files are read from ELMO_TASKS_GLOVE_DIR.
GLOVE_DIR = Path(from_caller(os.environ.get("ELMO_TASKS_GLOVE_DIR", "glove")))  # read at import: rebased here


def paper_budget(vectors: str, overrides: Overrides, env: Optional[Dict[str, str]] = None, **sampling: Any) -> Budget:
    """The paper's data by their official names, the paper's ``vectors`` from GLOVE_DIR, 5 seeds; ``env``:
    more variables of the runs; ``sampling``: the sample shares and their overrides."""
    return Budget(
        "full", overrides, seeds=5, env={"ELMO_TASKS_WORD_VECTORS": str(GLOVE_DIR / vectors), **(env or {})}, **sampling
    )


# The mini budget's word vectors: word2vec on the biLM's corpus, built by the harness (docs/WORD_VECTORS.md).
MINI_WORD_VECTORS = WordVectorRecipe()


def mini_budget(overrides: Overrides, **sampling: Any) -> Budget:
    """The real data with the substitutes of docs/DATA.md where the paper's training sets are not at hand
    (``ELMO_TASKS_DATA=substitutes``), ``overrides`` cutting it to a 2-core CPU, 3 seeds, our word vectors;
    ``sampling``: the budget's env, sample shares and their overrides."""
    return Budget("substitutes", overrides, seeds=3, word_vectors=MINI_WORD_VECTORS, **sampling)


def recipe_budget() -> Budget:
    """The real data and the experiment config unchanged (the paper's recipe), 3 seeds, with the word
    vectors the mini budget builds in place of the paper's, which are not available here."""
    return Budget("full", {}, seeds=3, word_vectors=MINI_WORD_VECTORS)


def task_spec(
    key: str,
    name: str,
    metric: str,
    metric_name: str,
    paper: Tuple[float, float],
    elmo_at: str,
    mini: Budget,
    full: Budget,
    smoke: Budget = SMOKE,
    recipe: Optional[Budget] = None,
    **optional: Any,
) -> TaskSpec:
    """A task whose experiments follow the repository's naming, ``elmo_tasks/experiments/KEY.libsonnet``
    and its ``experiments/KEY_baseline.jsonnet`` and ``experiments/KEY_elmo.jsonnet``: ``paper`` is
    Table 1's (baseline, ELMo), ``mini`` and ``full`` the ``mini`` and ``paper`` budgets, ``recipe``
    the ``recipe`` budget where the task has one, ``optional`` TaskSpec's fields with defaults."""
    budgets = {"smoke": smoke, "mini": mini, "paper": full, **({"recipe": recipe} if recipe else {})}
    return TaskSpec(
        name=name,
        libsonnet=f"elmo_tasks/experiments/{key}.libsonnet",
        configs={variant: f"experiments/{key}_{variant}.jsonnet" for variant in ("baseline", "elmo")},
        metric=metric,
        metric_name=metric_name,
        paper={"baseline": paper[0], "elmo": paper[1]},
        elmo_at=elmo_at,
        budgets=budgets,
        **optional,
    )


def benchmark_spec(
    key: str,
    table1: Table1Row,
    elmo_at: str,
    *,
    report: "TaskNotes",
    demo: "DemoPage",
    archive_holds: str,
    archive_command: str,
    **reproduction: Any,
) -> BenchmarkSpec:
    """The spec of a task of the paper's Table 1, its key written once: ``reproduction``, what
    :func:`task_spec` takes besides the key and ``table1``'s facts (the budgets, the analyses...)."""
    metric, metric_name = table1.metric
    return BenchmarkSpec(
        key=key,
        table1_row=table1.row,
        reproduction=task_spec(key, table1.name, metric, metric_name, table1.paper, elmo_at=elmo_at, **reproduction),
        report=report,
        demo=demo,
        archive_holds=archive_holds,
        archive_command=archive_command,
    )


GLOVE_840B = "glove.840B.300d.txt"
# Overrides of experiments/bilm_finetune.jsonnet per budget (the paper fine-tuned for one epoch).
FINETUNING = {
    "smoke": {"trainer.num_epochs": 1, "data_loader.batches_per_epoch": 2},
    "mini": {"trainer.num_epochs": 3},
    "paper": {"trainer.num_epochs": 1},
}


def until_converged(max_epochs: int, patience: int) -> Overrides:
    """Trains until validation has not improved for ``patience`` epochs, for at most ``max_epochs``: a mini
    run that is still improving at its cap has its best epoch last, which the report marks (‡)."""
    return {"trainer.num_epochs": max_epochs, "trainer.patience": patience}


# The smoke budget of a task with sample-efficiency runs: one share, half of the fixtures.
SMOKE_SAMPLED = replace(SMOKE, sample_shares=(0.5,))

# Every task's spec, by key, in the report's order (the paper's Table 1), read from the task folders when
# first used (elmo_tasks/tasks/registry.py).
TASKS: Mapping[str, TaskSpec] = TaskView(lambda spec: spec.reproduction)

# The paper's Table 2 and 3 numbers (development sets) for the tasks it reports them on, by the report's name.
PAPER_LAYER_TABLE: Mapping[str, Mapping[str, float]] = TaskView(
    lambda spec: spec.reproduction.paper_layers or None, key=lambda spec: spec.reproduction.name
)
PAPER_PLACEMENT_TABLE: Mapping[str, Mapping[str, float]] = TaskView(
    lambda spec: spec.reproduction.paper_placement or None, key=lambda spec: spec.reproduction.name
)
