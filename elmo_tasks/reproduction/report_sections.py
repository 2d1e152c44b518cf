"""The report's per-task sections (note, overrides, a row per variant, extra tables) and its plots."""

import json
import os
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from elmo_tasks.reproduction.notes import task_notes
from elmo_tasks.reproduction.plots import layer_weights_figure, sample_efficiency_figure, validation_curves_figure
from elmo_tasks.reproduction.records import Record
from elmo_tasks.reproduction.report_tables import (
    OUTDATED_NOTE,
    cross_validation,
    sample_efficiency_table,
)
from elmo_tasks.reproduction.report_values import (
    best_epochs,
    by_variant,
    marked,
    mean_std,
    metric_values,
    on_default_split,
    sample_efficiency_points,
    still_improving,
    values,
)
from elmo_tasks.reproduction.shown_paths import with_data_root_named
from elmo_tasks.reproduction.task_table import TASKS

FIXTURES_NOTE = (
    "Trained and tested on the bundled samples in `fixtures/` with the overrides below: a check that every step "
    "of a run works (train, evaluate, record, report). The numbers say nothing about the task or about ELMo."
)
STILL_IMPROVING_NOTE = (
    "Best epoch: the epoch whose validation metric selected each run's model, of the epochs it trained. "
    "A run whose best epoch is its last was still improving when its epoch budget ended, so more epochs "
    "would likely raise it."
)


def task_note(task: str, records: List[Record], budget: Optional[str]) -> Optional[str]:
    """What a task's section says about its runs: the task's note for ``budget`` or, for runs on the
    fixtures, that they are a check only; None where neither applies."""
    note = task_notes(task).note(budget)
    if note:
        return note
    runs = [r for r in records if r["task"] == task]
    if runs and all(r.get("data") == "fixtures" for r in runs):
        return FIXTURES_NOTE
    return None


def _bilm(record: Record) -> str:
    """The run's biLM: its ELMo embedder's options file (resolved config) and its weights' sha256."""
    config = record.get("config_resolved") or {}
    embedders = config.get("model", {}).get("text_field_embedder", {}).get("token_embedders", {})
    elmo = embedders.get("elmo")
    if not elmo:
        return ""
    sha = record.get("bilm_weights_sha256")
    options = _from_runs_folder(elmo.get("options_file", "?"))
    return f"`{options}`" + (f" (weights sha256 `{sha}`)" if sha else "")


def _from_runs_folder(path: str) -> str:
    """A biLM the harness made (a fine-tuned one) is recorded by its absolute path on the machine that trained
    it; the report shows it from that checkout's ``runs/`` folder on, the same wherever it is regenerated."""
    parts = Path(path).parts
    if not Path(path).is_absolute() or "runs" not in parts:
        return path
    return Path(*parts[len(parts) - 1 - parts[::-1].index("runs") :]).as_posix()


def _training_files(rows: List[Record]) -> str:
    """The runs' training file names with their suffixes (which dataset, which part of it)."""
    paths = {str((r.get("config_resolved") or {}).get("train_data_path", "")) for r in rows} - {""}
    named = set()
    for path in paths:
        file, sep, suffixes = path.partition("#")  # suffixes may hold '/' (SQuAD's '#fold=1/4')
        named.add(os.path.basename(file) + sep + suffixes)
    return ", ".join(f"`{name}`" for name in sorted(named)) or "?"


def task_section(task: str, records: List[Record], records_link: str, budget: Optional[str] = None) -> List[str]:
    """A task's section: its note, overrides, biLM, a row per variant, and its extra tables."""
    groups = by_variant(records, task)
    if not groups:
        return []
    note = task_note(task, records, budget)
    lines = [f"### {task_notes(task).title}", "", *([note, ""] if note else [])]
    overrides = sorted({json.dumps(r.get("overrides") or {}, sort_keys=True) for r in records if r["task"] == task})
    lines += ["Config overrides (`-o`; analysis variants add their own):", ""]
    lines += [f"- `{with_data_root_named(o)}`" for o in overrides]
    bilms = sorted({_bilm(r) for r in records if r["task"] == task} - {""})
    if bilms:
        lines += ["", "biLM: " + ", ".join(bilms)]
    lines += _word_vector_builds(groups)
    lines += _variant_rows(groups)
    lines += _extra_tests(task, records, groups)
    for extra in (cross_validation(task, records), sample_efficiency_table(task, records)):
        if extra:
            lines += [""] + extra
    lines += ["", f"Commands, configs and metrics of every run: [{records_link}/{task}/]({records_link}/{task}/)", ""]
    return lines


WORD_VECTOR_BUILDS_NOTE = (
    "The builds have the same file name, corpus and options but different bytes (made on another machine, "
    'by an earlier version of `build-word-vectors`: docs/WORD_VECTORS.md, "Reproducible"), so rows that '
    "read different builds differ in their word vectors as well as in their variant."
)


def _word_vector_builds(groups: Dict[str, List[Record]]) -> List[str]:
    """Where the shown runs of a task read more than one build of their word vectors (told apart by the
    file's sha256), which variants read which build, and when each was first built."""
    variants: Dict[Tuple[str, str], Set[str]] = defaultdict(set)
    first_built: Dict[Tuple[str, str], str] = {}
    for variant, rows in groups.items():
        for record in rows:
            built = record.get("word_vectors_built") or {}
            sha = built.get("output_sha256")
            if not sha:
                continue
            build = (os.path.basename((record.get("word_vectors") or {}).get("file", "?")), sha)
            variants[build].add(variant)
            day = str(built.get("built_at", "?"))[:10]
            first_built[build] = min(first_built.get(build, day), day)
    if len(variants) < 2:
        return []
    described = [
        f"`{build[0]}` first built {first_built[build]} (sha256 `{build[1][:8]}`): {', '.join(sorted(variants[build]))}"
        for build in sorted(variants, key=lambda build: (first_built[build], build))
    ]
    return ["", "Word vectors, more than one build: " + "; ".join(described) + ". " + WORD_VECTOR_BUILDS_NOTE]


def _variant_rows(groups: Dict[str, List[Record]]) -> List[str]:
    lines = [
        "",
        "| Variant | Trained on | Seeds | Test (mean ± std) | Test per seed | Best validation "
        "| Best epoch | Train wall time (mean) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant, rows in groups.items():
        minutes = statistics.mean(r.get("train_seconds", 0.0) for r in rows) / 60
        per_seed = ", ".join(f"{v:.2f}" for v in values(rows))
        lines.append(
            f"| {variant} | {_training_files(rows)} | {len(rows)} | {marked(mean_std(values(rows)), rows)} | "
            f"{per_seed} | "
            f"{mean_std(values(rows, 'best_validation'))} | {best_epochs(rows)} | {minutes:.1f} min |"
        )
    improving = {variant: still_improving(rows) for variant, rows in groups.items() if still_improving(rows)}
    lines += ["", STILL_IMPROVING_NOTE]
    if improving:
        counts = ", ".join(f"{variant} {count} of {len(groups[variant])}" for variant, count in improving.items())
        lines[-1] += f" Runs still improving at their last epoch: {counts}."
    if any(row.get("outdated") for rows in groups.values() for row in rows):
        lines += ["", OUTDATED_NOTE]
    return lines


def _extra_tests(task: str, records: List[Record], groups: Dict[str, List[Record]]) -> List[str]:
    """The metrics a task also reports (SQuAD: EM), and its other test files (CoNLL-2005 SRL: Brown)."""
    spec, lines = TASKS[task], []
    if spec.also_report:
        lines += ["", "| Variant | " + " | ".join(f"Test {label}" for label in spec.also_report.values()) + " |"]
        lines.append("|---" * (len(spec.also_report) + 1) + "|")
        for variant, rows in groups.items():
            cells = [mean_std(metric_values(rows, key)) for key in spec.also_report]
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    extra_tests = sorted({name for r in records if r["task"] == task for name in r.get("test_metrics", {})} - {"test"})
    for name in extra_tests:
        lines += ["", f"`{name}` ({spec.metric}):", ""]
        for variant, rows in groups.items():
            tests = [r["test_metrics"][name] for r in rows if name in r["test_metrics"]]
            found = [metrics[spec.metric] * spec.scale for metrics in tests]
            lines.append(f"- {variant}: {mean_std(found)}")
    return lines


def plots(records: List[Record], directory: Path, prefix: str) -> List[Path]:
    """Writes the figures that the records can give; returns their paths."""
    weights: Dict[str, List[Dict[int, List[float]]]] = defaultdict(list)
    curves: Dict[str, Dict[str, List[List[float]]]] = defaultdict(lambda: defaultdict(list))
    for record in filter(on_default_split, records):
        name = TASKS[record["task"]].name
        if record["variant"] == "elmo" and record.get("layer_weights"):
            weights[name].append({int(m): w for m, w in record["layer_weights"].items()})
        if record["variant"] in ("baseline", "elmo") and record.get("validation_curve"):
            curves[name][record["variant"]].append(record["validation_curve"])
    directory.mkdir(parents=True, exist_ok=True)
    metrics = {spec.name: spec.metric_name for spec in TASKS.values()}
    made = [
        layer_weights_figure(weights, directory / f"{prefix}_layer_weights.png"),
        validation_curves_figure(curves, metrics, directory / f"{prefix}_validation_curves.png"),
    ]
    for task, spec in TASKS.items():
        current, earlier = (sample_efficiency_points(records, task, outdated=flag) for flag in (False, True))
        if current or earlier:
            path = directory / f"{prefix}_sample_efficiency_{spec.name}.png"
            made.append(sample_efficiency_figure(current, spec.name, spec.metric_name, path, earlier))
    return [path for path in made if path is not None]
