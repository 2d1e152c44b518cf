"""The report's "What the numbers mean": for each task, whether ELMo's gain over the baseline stands out of
the spread between seeds, our error reduction beside the paper's, and what limits our absolute number
(``limits`` in each task spec's ``report``, per budget)."""

import math
import statistics
from typing import List, Optional, Tuple

from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.records import Record
from elmo_tasks.reproduction.report_tables import OUTDATED_NOTE
from elmo_tasks.reproduction.report_values import (
    OUTDATED_MARK,
    error_reduction,
    marked,
    mean_per_share,
    sample_efficiency_points,
    table_1_values,
)
from elmo_tasks.reproduction.task_table import TASKS

HOW_READ = (
    "ELMo's gain is its mean test metric minus the baseline's, over Table 1's seeds; its standard error is "
    "sqrt(s_b^2 / n_b + s_e^2 / n_e) from the two rows' standard deviations and seed counts. A gain more than "
    "twice its standard error is read as beyond seed noise (with 3 seeds a side, about a 95% one-sided test). "
    "The last column says what holds our absolute number below the paper's, measured where the report "
    "has the runs to show it."
)


def gain_and_error(baseline: List[float], elmo: List[float]) -> Optional[Tuple[float, float]]:
    """ELMo's mean minus the baseline's, and the standard error of that difference; None without two
    seeds a side (no spread to compare with)."""
    if len(baseline) < 2 or len(elmo) < 2:
        return None
    gain = statistics.mean(elmo) - statistics.mean(baseline)
    error = math.sqrt(statistics.variance(baseline) / len(baseline) + statistics.variance(elmo) / len(elmo))
    return gain, error


def verdict(gain: float, error: float) -> str:
    if gain > 2 * error:
        return "ELMo ahead beyond seed noise"
    if gain < -2 * error:
        return "**baseline ahead** beyond seed noise"
    return "within seed noise"


def what_the_numbers_mean(records: List[Record], budget: Optional[str]) -> List[str]:
    """The section's lines: a row per task that has runs of both models."""
    lines = [
        "| Task | ELMo's gain (± standard error) | Reading | Our error reduction | Paper's | What limits our number |",
        "|---|---|---|---|---|---|",
    ]
    for task, spec in TASKS.items():
        baseline, elmo, baseline_records, elmo_records, _ = table_1_values(records, task)
        if not baseline or not elmo:
            continue
        measured = gain_and_error(baseline, elmo)
        gain, reading = ("–", "fewer than 2 seeds a side")
        if measured is not None:
            gain, reading = f"{measured[0]:+.2f} ± {measured[1]:.2f}", verdict(*measured)
        gain = marked(gain, baseline_records + elmo_records)
        ours = error_reduction(statistics.mean(baseline), statistics.mean(elmo))
        paper = error_reduction(spec.paper["baseline"], spec.paper["elmo"])
        noted = task_notes(task).limits.get(budget or "")
        limit = " ".join(part for part in (noted, _data_curve(records, task)) if part)
        lines.append(f"| {spec.name} | {gain} | {reading} | {ours:.1f}% | {paper:.1f}% | {limit or '–'} |")
    if len(lines) == 2:
        return ["No task has runs of both models yet."]
    if any(OUTDATED_MARK in line for line in lines):
        lines += ["", OUTDATED_NOTE]
    return [HOW_READ, "", *lines]


def _data_curve(records: List[Record], task: str) -> str:
    """The baseline's and ELMo's mean test metric per share of the training data, from the task's current
    sample-efficiency runs (not those of an earlier config): how far more data of the same kind would go."""
    curves = []
    for kind, points in sorted(sample_efficiency_points(records, task, outdated=False).items()):
        means = mean_per_share(points)
        if len(means) < 2:
            continue
        steps = ", ".join(f"{mean:.1f} at {share:.0%}" for share, mean in means.items())
        curves.append(f"{'ELMo' if kind == 'elmo' else 'baseline'} {steps}")
    if not curves:
        return ""
    # SRL's sample-efficiency runs train and test on CoNLL-2005, not Table 1's data: the text names the data.
    data = task_notes(task).sample_efficiency_data
    return f"Measured by the sample-efficiency runs ({data}), test metric: {'; '.join(curves)} of the training data."
