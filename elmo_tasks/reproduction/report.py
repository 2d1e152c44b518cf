"""The results report, generated from run records alone (docs/RESULTS.md for the ``mini`` budget).

It opens with a table shaped like the paper's Table 1 (paper baseline, ELMo and relative error
reduction beside ours), in the mini budget's report the second table of the paper's recipe on the full
data (``report_recipe``), then the paper's analyses on our tasks (Table 2: which biLM layers and
how they are mixed; Table 3: where ELMo goes), the plots (learned layer weights, validation
curves, sample efficiency) and a short section per task. Re-running it on the same records gives
the same file. It says only what its own records say: the notes kept for a budget
(each task spec's ``report``) appear in that budget's report alone, and a report of runs on the fixtures
says that they check the code, not the tasks.
"""

from pathlib import Path
from typing import List, Optional

from elmo_tasks.reproduction.records import Record, write_whole
from elmo_tasks.reproduction.report_meaning import what_the_numbers_mean
from elmo_tasks.reproduction.report_recipe import recipe_section
from elmo_tasks.reproduction.report_sections import plots, task_section
from elmo_tasks.reproduction.report_tables import analysis_table, diagnosis_heading, diagnosis_notes, table_1
from elmo_tasks.reproduction.task_table import PAPER_LAYER_TABLE, PAPER_PLACEMENT_TABLE, TASKS

WHERE = "`scripts/reproduce.py` (see its `--help` and `elmo_tasks/reproduction/task_table.py`)"
DIAGNOSIS = (
    "ELMo variants on each task's validation data (`--analyses`): ELMo's own dropout 0.5 on top of the task "
    "model's dropout of its whole embedded input (the earlier configs, which dropped ELMo's features out "
    'twice; "ELMo as configured" now has no dropout inside ELMo), layer norm on the biLM layers, twice '
    "the epochs, and a biLM first fine-tuned on the task's training text (the paper's appendix; its command "
    "is the first of each run's record)."
)
HISTORY = "Earlier runs, made before runs kept records, are in [RESULTS_history.md](RESULTS_history.md)."
PLOTS_CAPTION = (
    "Layer weights: the softmax-normalised ELMo mixing weights learned at the input (and output) of each "
    "task model, mean over seeds (the paper's Figure 2). Validation curves: the validation metric per "
    "epoch, mean over seeds. Sample efficiency: test metric against the share of the training data "
    "(the paper's Figure 1), mean over seeds; a line joins the current runs, and hollow markers are runs of "
    "an earlier config or biLM (the tables' †)."
)


def introduction(records: List[Record], label: str) -> str:
    """The report's opening paragraph: what its runs are, and what their numbers can be compared with."""
    if records and all(r.get("data") == "fixtures" for r in records):
        return (
            f"Runs of the `{label}` budget of {WHERE} on the bundled samples in `fixtures/`, for a few batches: they "
            "check that every step of a run works (train, evaluate, record, report), and their numbers say nothing "
            "about the tasks or about ELMo. Each number is the **test** metric of the model selected on the "
            "validation split (mean ± standard deviation where there are several seeds); the paper's numbers "
            "(Peters et al. 2018, Table 1) only give the table its shape. Error reduction is (ELMo - baseline) / "
            "(100 - baseline)."
        )
    return (
        f"Real runs of the `{label}` budget of {WHERE}. Each number is the mean ± standard deviation over seeds of "
        "the **test** metric of the model selected on the validation split; the paper's numbers (Peters et al. "
        "2018, Table 1) are beside ours for orientation only: our data, model sizes, training time and "
        "biLM are far smaller (each task's section says how), so only the direction and size of the ELMo "
        "effect are comparable. Error reduction is (ELMo - baseline) / (100 - baseline)."
    )


def _analyses(records: List[Record], budget: Optional[str]) -> List[str]:
    return [
        "## The paper's analyses on our tasks",
        "",
        "Best validation metric of each variant (the paper reports these analyses on development sets): mean ± "
        "std over seeds, or one seed's value where no ± is shown.",
        "",
        "### Which biLM layers, and how they are mixed (the paper's Table 2)",
        "",
        *analysis_table(records, "layers", PAPER_LAYER_TABLE, budget),
        "",
        "### Where ELMo goes: input only or input and output (the paper's Table 3)",
        "",
        *analysis_table(records, "placement", PAPER_PLACEMENT_TABLE, budget),
        "",
        f"### {diagnosis_heading(records, budget)}",
        "",
        DIAGNOSIS,
        "",
        *analysis_table(records, "diagnosis", {}, budget),
        "",
        *diagnosis_notes(records, budget),
    ]


def write_report(
    records: List[Record], path: Path, budget: Optional[str], recipe_records: Optional[Path] = None
) -> None:
    """Writes the whole report to ``path`` (its plots into ``<path's folder>/results/``); the mini budget's
    has the table of the recipe budget's records in ``recipe_records`` too."""
    label = budget or "custom"
    figures = plots(records, path.parent / "results", label)
    records_link = f"results/records/{label}" if budget in ("mini", "recipe", "paper") else "records"
    lines = [
        "# Results",
        "",
        f"<!-- Generated by scripts/reproduce.py (budget: {label}) from the run records in {records_link}/; "
        f"do not edit by hand: rerun `scripts/reproduce.py all --budget {label} --report-only`. -->",
        "",
        introduction(records, label),
        "",
        *([HISTORY, ""] if (path.parent / "RESULTS_history.md").exists() else []),
        "## The six benchmarks (shaped like the paper's Table 1)",
        "",
        *table_1(records, budget),
        "",
        "### What the numbers mean",
        "",
        *what_the_numbers_mean(records, budget),
        "",
        *(recipe_section(recipe_records) + [""] if budget == "mini" and recipe_records else []),
        *_analyses(records, budget),
        "## Plots",
        "",
    ]
    if figures:
        lines += [f"![{figure.stem}](results/{figure.name})" for figure in figures] + ["", PLOTS_CAPTION]
    else:
        lines.append("No finished runs yet.")
    lines += ["", "## Per task", ""]
    for task in TASKS:
        lines += task_section(task, records, records_link, budget)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, "\n".join(lines).rstrip("\n") + "\n")  # two harness processes may end at once
