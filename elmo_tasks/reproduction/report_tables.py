"""The report's tables, as Markdown lines: Table 1, the analyses (Tables 2 and 3, the ELMo diagnosis),
cross-validation and sample efficiency."""

import json
import re
import statistics
from typing import Dict, List, Mapping, Optional, Tuple

from elmo_tasks.reproduction.configs import config_fingerprint
from elmo_tasks.reproduction.notes import shipped_bilm_names, task_notes
from elmo_tasks.reproduction.records import Record
from elmo_tasks.reproduction.report_values import (
    IMPROVING_MARK,
    OUTDATED_MARK,
    by_variant,
    error_reduction,
    marked,
    marked_improving,
    mean_std,
    metric_values,
    sample_efficiency_runs,
    table_1_values,
    values,
)
from elmo_tasks.reproduction.specs import Split
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.reproduction.word_vectors import describe

OUTDATED_NOTE = (
    "†: some of these runs were made with an earlier config or biLM than the current ones (each record holds the "
    "config and the biLM weights' sha256 it ran with); `scripts/reproduce.py TASK --budget BUDGET` (with "
    "`--analyses` for an analysis variant) retrains exactly those runs."
)
IMPROVING_NOTE = (
    "‡: at least one of these runs had its best validation at its last epoch, so more epochs would likely "
    "raise it (each task's section gives every run's best epoch); baseline and ELMo train under the same "
    "epochs and patience."
)
WORD_VECTORS_NOTE = (
    "Word vectors: what the word embedding of both models started from: none (learned from the training data "
    "alone), ours (trained by the harness on the biLM's corpus, docs/WORD_VECTORS.md) or the file named; "
    '"2 builds": the runs read two files of other bytes built from the same corpus and options (the task\'s '
    "section says which variants read which)."
)
BILM_NOTE = (
    "biLM: the start of the sha256 of the weights file the ELMo runs read (the shipped biLM is replaced in "
    "place when a better one is trained, so runs name it by content)"
)


def notes_for_marks(lines: List[str]) -> List[str]:
    """The notes that the marks (†, ‡) found in ``lines`` call for, each after a blank line."""
    found: List[str] = []
    for mark, note in ((OUTDATED_MARK, OUTDATED_NOTE), (IMPROVING_MARK, IMPROVING_NOTE)):
        if any(mark in line for line in lines):
            found += ["", note]
    return found


def table_1(records: List[Record], budget: Optional[str]) -> List[str]:
    """The paper's Table 1 beside ours, a row per task, and the notes its marks call for."""
    lines = [
        "| Task | Metric | Paper baseline | Paper ELMo | Paper error reduction | Our baseline | Our ELMo "
        "| Our error reduction | Seeds | biLM | Word vectors | Trained on |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_table_1_row(records, task, budget) for task in TASKS]
    named = [f"`{sha}`: {name}" for sha, name in shipped_bilm_names().items() if any(sha in line for line in lines)]
    lines += ["", WORD_VECTORS_NOTE, "", BILM_NOTE + ("; " + "; ".join(named) if named else "") + "."]
    return lines + notes_for_marks(lines)


def _table_1_row(records: List[Record], task: str, budget: Optional[str]) -> str:
    spec = TASKS[task]
    base, elmo, base_records, elmo_records, cross_validated = table_1_values(records, task)
    bilms = ", ".join(f"`{sha}`" for sha in sorted({r.get("bilm_weights_sha256") or "?" for r in elmo_records}))
    ours = f"{error_reduction(statistics.mean(base), statistics.mean(elmo)):.1f}%" if base and elmo else "–"
    seeds = f"{len(base)} / {len(elmo)}" if base or elmo else "not run yet"
    trained_on = task_notes(task).trained_on.get(budget or "", "") if (base or elmo) else ""
    if cross_validated and spec.split is not None:
        trained_on += f"; mean over all {len(spec.split.all)} test {spec.split.label}s per seed"
    elif spec.split is not None and (base or elmo):
        trained_on += f"; test {spec.split.label} {spec.split.default} only"
    paper = spec.paper
    return (
        f"| {spec.name} | {spec.metric_name} | {paper['baseline']} | {paper['elmo']} | "
        f"{error_reduction(paper['baseline'], paper['elmo']):.1f}% | "
        f"{marked_improving(marked(mean_std(base), base_records), base_records)} | "
        f"{marked_improving(marked(mean_std(elmo), elmo_records), elmo_records)} | "
        f"{ours} | {seeds} | {bilms} | {describe(base_records + elmo_records)} | {trained_on} |"
    )


def analysis_table(
    records: List[Record], table: str, paper: Mapping[str, Mapping[str, float]], budget: Optional[str] = "mini"
) -> List[str]:
    """Best validation metric (mean ± std over seeds) of the variants of one analysis, per task; without
    such runs, the command that makes them for ``budget``."""
    columns: List[str] = []
    rows: Dict[str, Dict[str, List[Record]]] = {}
    for task, spec in TASKS.items():
        groups = by_variant(records, task)
        found = {
            analysis.label: groups[name]
            for name, analysis in spec.analyses.items()
            if analysis.table == table and groups.get(name)
        }
        if not found:
            continue
        found = {"baseline": groups.get("baseline", []), "ELMo as configured": groups.get("elmo", []), **found}
        rows[f"{spec.name} (ELMo at {spec.elmo_at})"] = found
        columns += [c for c in found if c not in columns]
    if not rows:
        command = f"scripts/reproduce.py TASK{f' --budget {budget}' if budget else ''} --analyses"
        return [f"No runs of these variants yet (`{command}`)."]
    lines = ["| Task | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, found in rows.items():
        cells = [marked(mean_std(values(found.get(c, []), "best_validation")), found.get(c, [])) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += notes_for_marks(lines)
    return lines + _paper_table(paper) if paper else lines


def _paper_table(paper: Mapping[str, Mapping[str, float]]) -> List[str]:
    lines = ["", "The paper's numbers (development sets) for the tasks it reports:", ""]
    paper_columns = list(next(iter(paper.values())))
    lines += ["| Task | " + " | ".join(paper_columns) + " |", "|---" * (len(paper_columns) + 1) + "|"]
    for name, found in paper.items():
        lines.append(f"| {name} | " + " | ".join(str(found[c]) for c in paper_columns) + " |")
    return lines


def diagnosis_notes(records: List[Record], budget: Optional[str]) -> List[str]:
    """What each task's diagnosis runs showed (a bullet per task): its diagnosis note for ``budget``,
    only where ``records`` hold diagnosis runs of that task, so a report never shows conclusions drawn
    from another budget's runs."""
    notes = []
    for task, spec in TASKS.items():
        note = task_notes(task).diagnosis_note(budget)
        diagnosis = {name for name, analysis in spec.analyses.items() if analysis.table == "diagnosis"}
        if note and any(r["task"] == task and r["variant"] in diagnosis for r in records):
            notes.append(f"- {spec.name}: {note}")
    return [*notes, ""] if notes else []


def diagnosis_heading(records: List[Record], budget: Optional[str]) -> str:
    """The diagnosis section's title: the question the runs answered where the budget's notes say what
    they found (mini: why ELMo hurt), else what the variants are."""
    if diagnosis_notes(records, budget):
        return "Why ELMo hurt (SNLI, NER): what was tried"
    return "ELMo diagnosis variants (SNLI, NER)"


def cross_validation(task: str, records: List[Record]) -> List[str]:
    """Per split (fold), the mean test metric over its seeds, and the mean over the folds; one
    table for the task's metric and one for each metric it also reports (SQuAD: EM)."""
    spec = TASKS[task]
    if spec.split is None:
        return []
    runs = [r for r in records if r["task"] == task and r["variant"] in spec.configs]
    if len({r.get("split") or spec.split.default for r in runs}) < 2:
        return []
    lines: List[str] = []
    for metric, metric_name in {spec.metric: spec.metric_name, **spec.also_report}.items():
        lines += [
            f"Cross-validation ({spec.split.env}): test {metric_name} per held-out {spec.split.label} "
            "(mean over its seeds; seeds in brackets) and the mean over the folds:",
            "",
            "| Variant | " + " | ".join(spec.split.all) + " | Mean over folds |",
            "|---" * (len(spec.split.all) + 2) + "|",
        ]
        lines += [
            _fold_row(spec.split, [r for r in runs if r["variant"] == variant], variant, metric)
            for variant in spec.configs
        ]
        lines.append("")
    if any(OUTDATED_MARK in line for line in lines):
        lines += [OUTDATED_NOTE, ""]
    return lines


def _fold_row(split: Split, rows: List[Record], variant: str, metric: str) -> str:
    fold_rows = {s: [r for r in rows if (r.get("split") or split.default) == s] for s in split.all}
    by_split = {s: metric_values(runs, metric) for s, runs in fold_rows.items()}
    cells = [
        marked(f"{statistics.mean(by_split[s]):.2f} ({len(by_split[s])})", fold_rows[s]) if by_split[s] else "–"
        for s in split.all
    ]
    means = [statistics.mean(v) for v in by_split.values() if v]
    complete = len(means) == len(split.all)
    overall = f"{statistics.mean(means):.2f}" if complete else f"{len(means)} of {len(split.all)} folds run"
    if complete and len({_settings_apart_from_fold(r) for r in rows}) > 1:
        overall = "– (folds of different configs)"
    return f"| {variant} | " + " | ".join(cells) + f" | {overall} |"


# The fold suffixes of SQuAD's data paths (elmo_tasks/tasks/squad/articles.py): the one part of a
# resolved config that differs between the folds of one cross-validation.
_FOLD_SUFFIX = re.compile(r"#folds?(?:-except)?=[0-9,]+/[0-9]+")


def _settings_apart_from_fold(record: Record) -> Tuple[Optional[str], Optional[str], bool]:
    """What decided a run's model besides its seed and its fold: its resolved config with the fold suffixes
    taken out (a record without one: its outdated flag) and its biLM."""
    config = record.get("config_resolved")
    if config is None:
        return None, record.get("bilm_weights_sha256"), bool(record.get("outdated"))
    without_folds = json.loads(_FOLD_SUFFIX.sub("#fold", json.dumps(config)))
    return config_fingerprint(without_folds), record.get("bilm_weights_sha256"), False


def sample_efficiency_table(task: str, records: List[Record]) -> List[str]:
    """Test metric per share of the training set, baseline and ELMo (the paper's Figure 1 as a table), with
    the marks of Table 1: a share whose runs were still improving at their epoch cap is not converged."""
    runs = sample_efficiency_runs(records, task)
    if not runs:
        return []
    spec = TASKS[task]
    lines = [
        f"Sample efficiency: test {spec.metric_name} against the share of the training set "
        f"({task_notes(task).sample_efficiency_data}, a deterministic sample; mean ± std over seeds):",
        "",
        "| Share of the training set | baseline | ELMo | seeds |",
        "|---|---|---|---|",
    ]
    for share in sorted({s for by_share in runs.values() for s in by_share}):
        base, elmo = (runs.get(kind, {}).get(share, []) for kind in ("baseline", "elmo"))
        cells = [marked_improving(marked(mean_std(values(rows)), rows), rows) for rows in (base, elmo)]
        lines.append(f"| {100 * share:g}% | {cells[0]} | {cells[1]} | {len(base)} / {len(elmo)} |")
    return lines + notes_for_marks(lines) + [""]
