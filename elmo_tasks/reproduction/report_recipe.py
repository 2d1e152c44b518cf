"""The report's second table: the tasks whose experiment files are the paper's recipe, trained on the
paper's full data (the ``recipe`` budget), beside the paper's Table 1 numbers.

Unlike the mini budget's Table 1, these runs differ from the paper's only where the paper cannot be
followed here (the word vectors: docs/PAPER.md says which), so the numbers themselves are compared,
and the ELMo gain is given with its standard error over seeds.
"""

import math
import statistics
from pathlib import Path
from typing import List

from elmo_tasks.reproduction.records import Record, load_records
from elmo_tasks.reproduction.report_values import by_variant, marked, mean_std, values
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
            f"{gain_with_standard_error(base, elmo)} | {seeds} | {describe(base_rows + elmo_rows)} |"
        )
    return lines


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
    ]
