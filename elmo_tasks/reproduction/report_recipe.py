"""The report's second table: the tasks whose experiment files are the paper's recipe, trained on the
paper's full data (the ``recipe`` budget), beside the paper's Table 1 numbers.

Unlike the mini budget's Table 1, these runs differ from the paper's only where the paper cannot be
followed here (the word vectors: docs/PAPER.md says which), so the numbers themselves are compared,
and the ELMo gain is given with its standard error over seeds. Below it, the recipe's diagnosis runs
(e.g. the baseline without pretrained word vectors: what ours add), where any are recorded.
"""

import math
import statistics
from pathlib import Path
from typing import Dict, List, Optional

from elmo_tasks.counted_nouns import counted
from elmo_tasks.reproduction.records import Record, load_records
from elmo_tasks.reproduction.report_values import best_epochs, by_variant, marked, mean_std, values
from elmo_tasks.reproduction.specs import TaskSpec
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.word_vectors import describe

RECIPE_BUDGET = "recipe"
RECIPE_INTRODUCTION = (
    "The experiment files as they are (the paper's recipe, docs/PAPER.md), trained on the paper's full data "
    "by the `recipe` budget (`scripts/reproduce.py TASK --budget recipe`), with our word vectors where the "
    "paper's are not available and the shipped small biLM. Test metric of the model selected on the "
    "validation data, mean ± standard deviation over seeds; the gain is ELMo's mean minus the baseline's, "
    "± its standard error (the two seeds' spreads combined)."
)


def gain_with_standard_error(baseline: List[float], elmo: List[float]) -> str:
    """ELMo's mean minus the baseline's, ± sqrt(s_b²/n_b + s_e²/n_e); the gain alone below two seeds each."""
    if not baseline or not elmo:
        return "–"
    gain = statistics.mean(elmo) - statistics.mean(baseline)
    if len(baseline) < 2 or len(elmo) < 2:
        return f"{gain:+.2f}"
    error = math.sqrt(statistics.variance(baseline) / len(baseline) + statistics.variance(elmo) / len(elmo))
    return f"{gain:+.2f} ± {error:.2f}"


def recipe_tasks() -> List[str]:
    return [task for task, spec in TASKS.items() if RECIPE_BUDGET in spec.budgets]


def recipe_table(records: List[Record]) -> List[str]:
    """A row per task with a recipe budget: the paper's numbers, ours, the gain, seeds, word vectors."""
    lines = [
        "| Task | Metric | Paper baseline | Paper ELMo | Our baseline | Our ELMo | Our ELMo gain | Seeds "
        "| Word vectors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for task in recipe_tasks():
        spec, groups = TASKS[task], by_variant(records, task)
        base_rows, elmo_rows = groups.get("baseline", []), groups.get("elmo", [])
        base, elmo = values(base_rows), values(elmo_rows)
        seeds = f"{len(base)} / {len(elmo)}" if base or elmo else "not run yet"
        lines.append(
            f"| {spec.name} | {spec.metric_name} | {spec.paper['baseline']} | {spec.paper['elmo']} | "
            f"{marked(mean_std(base), base_rows)} | {marked(mean_std(elmo), elmo_rows)} | "
            f"{gain_with_standard_error(base, elmo)} | {seeds} | {describe(base_rows + elmo_rows) or '–'} |"
        )
    return lines


# The epochs (1-based) at which the diagnosis table gives the validation metric: the start, the middle and
# the late epochs of a recipe run (NER's recipe trains up to 75 epochs, patience 25).
CURVE_EPOCHS = (1, 5, 10, 20, 40)
DIAGNOSIS_INTRODUCTION = (
    "Diagnosis runs of the recipe (`scripts/reproduce.py TASK --budget recipe --variants NAME`), each below the "
    "config it varies: the best validation score (the split the model is selected on) and the epoch of each "
    "run's best of its epochs, the validation score at epochs {epochs} (mean over the runs that reached it), "
    "the test score, mean ± standard deviation over seeds, and the variant minus its config over the seeds "
    "both have (validation / test)."
)


def recipe_diagnosis_table(records: List[Record]) -> List[str]:
    """The recipe tasks' diagnosis variants that have records, each below the config it varies (baseline or
    ELMo); nothing when none has a record."""
    rows = []
    for task in recipe_tasks():
        spec, groups = TASKS[task], by_variant(records, task)
        diagnosed = {n: a for n, a in spec.analyses.items() if a.table == "diagnosis" and groups.get(n)}
        for config in dict.fromkeys(analysis.config for analysis in diagnosed.values()):
            rows.append(_diagnosis_row(spec, f"{config} (as configured)", groups.get(config, []), None))
            rows += [
                _diagnosis_row(spec, analysis.label, groups[name], groups.get(config, []))
                for name, analysis in diagnosed.items()
                if analysis.config == config
            ]
    if not rows:
        return []
    epochs = ", ".join(map(str, CURVE_EPOCHS))
    return [
        "",
        DIAGNOSIS_INTRODUCTION.format(epochs=epochs),
        "",
        f"| Task | Variant | Word vectors | Best validation | Best epoch | Validation at epochs {epochs} | Test "
        "| Seeds | Minus its config, same seeds |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]


def _diagnosis_row(spec: TaskSpec, label: str, runs: List[Record], config_runs: Optional[List[Record]]) -> str:
    """One variant's row; ``config_runs``: the runs of the config it varies (None for the config's own row)."""
    at_epochs = " / ".join(_mean_at_epoch(runs, epoch) for epoch in CURVE_EPOCHS)
    difference = "" if config_runs is None else paired_difference(runs, config_runs)
    return (
        f"| {spec.name} | {label} | {describe(runs)} | {mean_std(values(runs, 'best_validation'))} | "
        f"{best_epochs(runs)} | {at_epochs} | {mean_std(values(runs))} | {len(runs)} | {difference} |"
    )


def _mean_at_epoch(runs: List[Record], epoch: int) -> str:
    reached = [r["validation_curve"][epoch - 1] for r in runs if len(r.get("validation_curve") or []) >= epoch]
    return f"{statistics.mean(reached):.2f}" if reached else "–"


def paired_difference(runs: List[Record], config_runs: List[Record]) -> str:
    """The variant's best validation and test scores minus its config's, averaged over the seeds both have
    (a difference of the same seed leaves out what the seed alone changes): ``-1.20 / -0.85 (1 seed)``."""
    by_seed: Dict[int, Record] = {r["seed_index"]: r for r in config_runs}
    pairs = [(r, by_seed[r["seed_index"]]) for r in runs if r["seed_index"] in by_seed]
    if not pairs:
        return "no seed in common"
    cells = []
    for key in ("best_validation", "value"):
        differences = [run[key] - config[key] for run, config in pairs if None not in (run.get(key), config.get(key))]
        cells.append(f"{statistics.mean(differences):+.2f}" if differences else "–")
    return f"{cells[0]} / {cells[1]} ({counted(len(pairs), 'seed')})"


def recipe_section(records_dir: Path) -> List[str]:
    """The section, from the recipe budget's committed records in ``records_dir`` (those of every seed
    finished so far: the runs take hours each on a CPU and are made over several sittings)."""
    records = load_records(records_dir)
    return [
        "## The paper's recipe on the full data",
        "",
        RECIPE_INTRODUCTION,
        "",
        *recipe_table(records),
        *recipe_diagnosis_table(records),
    ]
