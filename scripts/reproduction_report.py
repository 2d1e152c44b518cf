"""The results report of scripts/reproduce.py, generated from run records alone.

It opens with a table shaped like the paper's Table 1 (paper baseline, ELMo and relative error
reduction beside ours), then the paper's analyses on our tasks (Table 2: which biLM layers and
how they are mixed; Table 3: where ELMo goes), the plots (learned layer weights, validation
curves, sample efficiency) and a short section per task. Re-running it on the same records gives
the same file. It says only what its own records say: the notes and conclusions that
scripts/reproduction_tasks.py keeps for a budget appear in that budget's report alone, and a report
of runs on the fixtures says that they check the code, not the tasks.
"""

import json
import os
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from reproduction_plots import layer_weights_figure, sample_efficiency_figure, validation_curves_figure
from reproduction_tasks import BILM_NAMES, PAPER_LAYER_TABLE, PAPER_PLACEMENT_TABLE, TASKS

from elmo_tasks.wording import counted

Record = Dict[str, Any]


def load_records(records_dir: Path) -> List[Record]:
    """Every ``<task>/<variant>/seed<k>.json`` under ``records_dir``, in a stable order."""
    if not records_dir.exists():
        return []
    records = [json.loads(path.read_text()) for path in sorted(records_dir.glob("*/*/*.json"))]
    order = list(TASKS)
    return sorted(records, key=lambda r: (order.index(r["task"]), r["variant"], r.get("split") or "", r["seed_index"]))


def on_default_split(record: Record) -> bool:
    """Table 1 and the analyses use the task's default split (SQuAD: test fold 1/4)."""
    split = TASKS[record["task"]].get("split")
    return split is None or record.get("split") in (None, split["default"])


def mean_std(values: List[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


# Marks a result with runs made with an earlier config or biLM than the current (see ``outdated`` in a record).
OUTDATED_MARK = " †"
OUTDATED_NOTE = (
    "†: some of these runs were made with an earlier config or biLM than the current ones (each record holds the "
    "config and the biLM weights' sha256 it ran with); `scripts/reproduce.py TASK --budget BUDGET` (with "
    "`--analyses` for an analysis variant) retrains exactly those runs."
)


def marked(text: str, rows: List[Record]) -> str:
    """``text`` with the outdated mark if any of ``rows`` is outdated."""
    return text + OUTDATED_MARK if any(row.get("outdated") for row in rows) else text


# Marks a Table 1 result most of whose runs were still improving when their epoch budget ended.
IMPROVING_MARK = " ‡"
IMPROVING_NOTE = (
    "‡: most of these runs had their best validation at their last epoch, so more epochs would likely raise "
    "them (each task's section gives every run's best epoch); baseline and ELMo train for the same number of "
    "epochs."
)


def marked_improving(text: str, rows: List[Record]) -> str:
    """``text`` with the still-improving mark if most of ``rows`` that have a validation curve were."""
    with_curves = sum(1 for row in rows if _has_curve(row))
    return text + IMPROVING_MARK if with_curves and 2 * still_improving(rows) > with_curves else text


def error_reduction(baseline: float, elmo: float) -> float:
    """The paper's relative error reduction, in percent: (elmo - baseline) / (100 - baseline)."""
    return 100.0 * (elmo - baseline) / (100.0 - baseline)


def _by_variant(records: List[Record], task: str) -> Dict[str, List[Record]]:
    """The task's records on its default split, by variant."""
    grouped: Dict[str, List[Record]] = defaultdict(list)
    for record in records:
        if record["task"] == task and on_default_split(record):
            grouped[record["variant"]].append(record)
    return grouped


def cross_validation(task: str, records: List[Record]) -> List[str]:
    """Per split (fold), the mean test metric over its seeds, and the mean over the folds; one
    table for the task's metric and one for each metric it also reports (SQuAD: EM)."""
    spec = TASKS[task]
    if "split" not in spec:
        return []
    runs = [r for r in records if r["task"] == task and r["variant"] in spec["configs"]]
    if len({r.get("split") or spec["split"]["default"] for r in runs}) < 2:
        return []
    splits, default = spec["split"]["all"], spec["split"]["default"]
    metrics = {spec["metric"]: spec["metric_name"], **spec.get("also_report", {})}
    lines: List[str] = []
    for metric, metric_name in metrics.items():
        lines += [
            f"Cross-validation ({spec['split']['env']}): test {metric_name} per held-out {spec['split']['label']} "
            "(mean over its seeds; seeds in brackets) and the mean over the folds:",
            "",
            "| Variant | " + " | ".join(splits) + " | Mean over folds |",
            "|---" * (len(splits) + 2) + "|",
        ]
        for variant in spec["configs"]:
            rows = [r for r in runs if r["variant"] == variant]
            by_split = {s: _test_values([r for r in rows if (r.get("split") or default) == s], metric) for s in splits}
            cells = [f"{statistics.mean(v):.2f} ({len(v)})" if v else "–" for v in by_split.values()]
            means = [statistics.mean(v) for v in by_split.values() if v]
            complete = len(means) == len(splits)
            overall = f"{statistics.mean(means):.2f}" if complete else f"{len(means)} of {len(splits)} folds run"
            lines.append(f"| {variant} | " + " | ".join(cells) + f" | {overall} |")
        lines.append("")
    return lines


def _values(rows: List[Record], key: str = "value") -> List[float]:
    return [r[key] for r in rows if r.get(key) is not None]


def best_epochs(rows: List[Record]) -> str:
    """Each run's best epoch of the epochs it validated, 1-based: ``"4/4, 3/4"`` (``–`` without curves)."""
    cells = [f"{r['best_epoch'] + 1}/{len(r['validation_curve'])}" for r in rows if _has_curve(r)]
    return ", ".join(cells) or "–"


def still_improving(rows: List[Record]) -> int:
    """How many runs had their best validation at their last epoch, i.e. stopped while still improving
    (a single epoch says nothing about that, so one-epoch runs never count)."""
    return sum(1 for r in rows if _has_curve(r) and r["best_epoch"] + 1 == len(r["validation_curve"]) > 1)


def _has_curve(record: Record) -> bool:
    return record.get("best_epoch") is not None and bool(record.get("validation_curve"))


STILL_IMPROVING_NOTE = (
    "Best epoch: the epoch whose validation metric selected each run's model, of the epochs it trained. "
    "A run whose best epoch is its last was still improving when its epoch budget ended, so more epochs "
    "would likely raise it."
)


def _test_values(rows: List[Record], metric: str) -> List[float]:
    """The runs' test ``metric`` (scaled as the task's metric is); the task's own metric is ``value``."""
    found = []
    for record in rows:
        spec = TASKS[record["task"]]
        if metric == spec["metric"]:
            value = record.get("value")
        else:
            raw = record.get("test_metrics", {}).get("test", {}).get(metric)
            value = None if raw is None else raw * spec["scale"]
        if value is not None:
            found.append(value)
    return found


def cross_validated_per_seed(records: List[Record], task: str, variant: str) -> List[float]:
    """Per seed, the mean test metric over all the task's folds; empty unless every fold has every
    seed of the default fold (then the folds together test every example once)."""
    spec = TASKS[task]
    if "split" not in spec:
        return []
    default = spec["split"]["default"]
    by_seed: Dict[int, Dict[str, float]] = defaultdict(dict)
    for record in records:
        if record["task"] == task and record["variant"] == variant and record.get("value") is not None:
            by_seed[record["seed_index"]][record.get("split") or default] = record["value"]
    seeds = [k for k, folds in by_seed.items() if default in folds]
    if not seeds or any(set(by_seed[k]) != set(spec["split"]["all"]) for k in seeds):
        return []
    return [statistics.mean(by_seed[k].values()) for k in sorted(seeds)]


def table_1_values(
    records: List[Record], task: str
) -> Tuple[List[float], List[float], List[Record], List[Record], bool]:
    """The test values of a task's baseline and ELMo runs as Table 1 gives them, the records they come
    from, and whether they are means over all cross-validation folds per seed (else the default split's)."""
    base, elmo = (cross_validated_per_seed(records, task, v) for v in ("baseline", "elmo"))
    cross_validated = bool(base and elmo)  # both on the same footing, or both on the default split
    elmo_records = [r for r in records if r["task"] == task and r["variant"] == "elmo"]
    base_records = [r for r in records if r["task"] == task and r["variant"] == "baseline"]
    if not cross_validated:
        groups = _by_variant(records, task)
        base, elmo = _values(groups.get("baseline", [])), _values(groups.get("elmo", []))
        elmo_records, base_records = groups.get("elmo", []), groups.get("baseline", [])
    return base, elmo, base_records, elmo_records, cross_validated


def metrics_line(records: List[Record], task: str, budget: Optional[str]) -> str:
    """One console line with a task's Table 1 numbers from ``records``: ``ner smoke: baseline F1 5.00,
    ELMo F1 0.00 (test, 1 seed each)``."""
    spec = TASKS[task]
    base, elmo, _, _, cross_validated = table_1_values(records, task)
    metric = spec["metric_name"]
    cells = [
        f"{name} {metric} {mean_std(values)}" if values else f"{name} not run yet"
        for name, values in (("baseline", base), ("ELMo", elmo))
    ]
    if len(base) == len(elmo):
        seeds = f"{counted(len(base), 'seed')} each"
    else:
        seeds = f"seeds {len(base)} / {len(elmo)}"
    where = f"test, mean over all {spec['split']['label']}s per seed" if cross_validated else "test"
    return f"{task} {budget or 'custom'}: {', '.join(cells)} ({where}, {seeds})"


def table_1(records: List[Record], budget: Optional[str]) -> List[str]:
    lines = [
        "| Task | Metric | Paper baseline | Paper ELMo | Paper error reduction | Our baseline | Our ELMo "
        "| Our error reduction | Seeds | biLM | Trained on |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for task, spec in TASKS.items():
        base, elmo, base_records, elmo_records, cross_validated = table_1_values(records, task)
        bilms = ", ".join(f"`{sha}`" for sha in sorted({r.get("bilm_weights_sha256") or "?" for r in elmo_records}))
        paper = spec["paper"]
        ours = f"{error_reduction(statistics.mean(base), statistics.mean(elmo)):.1f}%" if base and elmo else "–"
        seeds = f"{len(base)} / {len(elmo)}" if base or elmo else "not run yet"
        trained_on = spec.get("trained_on", {}).get(budget or "", "") if (base or elmo) else ""
        if cross_validated:
            trained_on += f"; mean over all {len(spec['split']['all'])} test {spec['split']['label']}s per seed"
        elif "split" in spec and (base or elmo):
            trained_on += f"; test {spec['split']['label']} {spec['split']['default']} only"
        lines.append(
            f"| {spec['name']} | {spec['metric_name']} | {paper['baseline']} | {paper['elmo']} | "
            f"{error_reduction(paper['baseline'], paper['elmo']):.1f}% | "
            f"{marked_improving(marked(mean_std(base), base_records), base_records)} | "
            f"{marked_improving(marked(mean_std(elmo), elmo_records), elmo_records)} | "
            f"{ours} | {seeds} | {bilms} | {trained_on} |"
        )
    named = [f"`{sha}`: {name}" for sha, name in BILM_NAMES.items() if any(sha in line for line in lines)]
    lines += [
        "",
        "biLM: the start of the sha256 of the weights file the ELMo runs read (the shipped biLM is replaced in "
        "place when a better one is trained, so runs name it by content)"
        + ("; " + "; ".join(named) if named else "")
        + ".",
    ]
    if any(OUTDATED_MARK in line for line in lines):
        lines += ["", OUTDATED_NOTE]
    if any(IMPROVING_MARK in line for line in lines):
        lines += ["", IMPROVING_NOTE]
    return lines


def analysis_table(
    records: List[Record], table: str, paper: Dict[str, Dict[str, float]], budget: Optional[str] = "mini"
) -> List[str]:
    """Best validation metric (mean ± std over seeds) of the variants of one analysis, per task; without
    such runs, the command that makes them for ``budget``."""
    columns: List[str] = []
    rows: Dict[str, Dict[str, List[Record]]] = {}
    for task, spec in TASKS.items():
        groups = _by_variant(records, task)
        found = {
            analysis["label"]: groups[name]
            for name, analysis in spec["analyses"].items()
            if analysis["table"] == table and groups.get(name)
        }
        if not found:
            continue
        found = {"baseline": groups.get("baseline", []), "ELMo as configured": groups.get("elmo", []), **found}
        rows[f"{spec['name']} (ELMo at {spec['elmo_at']})"] = found
        columns += [c for c in found if c not in columns]
    if not rows:
        command = f"scripts/reproduce.py TASK{f' --budget {budget}' if budget else ''} --analyses"
        return [f"No runs of these variants yet (`{command}`)."]
    lines = ["| Task | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, found in rows.items():
        cells = [marked(mean_std(_values(found.get(c, []), "best_validation")), found.get(c, [])) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if any(OUTDATED_MARK in line for line in lines):
        lines += ["", OUTDATED_NOTE]
    if not paper:
        return lines
    lines += ["", "The paper's numbers (development sets) for the tasks it reports:", ""]
    paper_columns = list(next(iter(paper.values())))
    lines += ["| Task | " + " | ".join(paper_columns) + " |", "|---" * (len(paper_columns) + 1) + "|"]
    for name, values in paper.items():
        lines.append(f"| {name} | " + " | ".join(str(values[c]) for c in paper_columns) + " |")
    return lines


def diagnosis_notes(records: List[Record], budget: Optional[str]) -> List[str]:
    """What each task's diagnosis runs showed (a bullet per task): its ``diagnosis_notes`` for ``budget``,
    only where ``records`` hold diagnosis runs of that task, so a report never shows conclusions drawn
    from another budget's runs."""
    notes = []
    for task, spec in TASKS.items():
        note = spec.get("diagnosis_notes", {}).get(budget or "")
        diagnosis = {name for name, analysis in spec["analyses"].items() if analysis["table"] == "diagnosis"}
        if note and any(r["task"] == task and r["variant"] in diagnosis for r in records):
            notes.append(f"- {spec['name']}: {note}")
    return [*notes, ""] if notes else []


def diagnosis_heading(records: List[Record], budget: Optional[str]) -> str:
    """The diagnosis section's title: the question the runs answered where the budget's notes say what
    they found (mini: why ELMo hurt), else what the variants are."""
    if diagnosis_notes(records, budget):
        return "Why ELMo hurt (SNLI, NER): what was tried"
    return "ELMo diagnosis variants (SNLI, NER)"


FIXTURES_NOTE = (
    "Trained and tested on the bundled samples in `fixtures/` with the overrides below: a check that every step "
    "of a run works (train, evaluate, record, report). The numbers say nothing about the task or about ELMo."
)


def task_note(task: str, records: List[Record], budget: Optional[str]) -> Optional[str]:
    """What a task's section says about its runs: the task's ``notes`` for ``budget`` or, for runs on the
    fixtures, that they are a check only; None where neither applies."""
    note = TASKS[task].get("notes", {}).get(budget or "")
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
    return f"`{elmo.get('options_file', '?')}`" + (f" (weights sha256 `{sha}`)" if sha else "")


def _training_files(rows: List[Record]) -> str:
    """The runs' training file names with their suffixes (which dataset, which part of it)."""
    paths = {str((r.get("config_resolved") or {}).get("train_data_path", "")) for r in rows} - {""}
    named = set()
    for path in paths:
        file, sep, suffixes = path.partition("#")  # suffixes may hold '/' (SQuAD's '#fold=1/4')
        named.add(os.path.basename(file) + sep + suffixes)
    return ", ".join(f"`{name}`" for name in sorted(named)) or "?"


def task_section(task: str, records: List[Record], records_link: str, budget: Optional[str] = None) -> List[str]:
    spec = TASKS[task]
    groups = _by_variant(records, task)
    if not groups:
        return []
    note = task_note(task, records, budget)
    lines = [f"### {spec['title']}", "", *([note, ""] if note else [])]
    overrides = sorted({json.dumps(r.get("overrides") or {}, sort_keys=True) for r in records if r["task"] == task})
    lines += ["Config overrides (`-o`; analysis variants add their own):", ""] + [f"- `{o}`" for o in overrides]
    bilms = sorted({_bilm(r) for r in records if r["task"] == task} - {""})
    if bilms:
        lines += ["", "biLM: " + ", ".join(bilms)]
    lines += [
        "",
        "| Variant | Trained on | Seeds | Test (mean ± std) | Test per seed | Best validation "
        "| Best epoch | Train wall time (mean) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant, rows in groups.items():
        minutes = statistics.mean(r.get("train_seconds", 0.0) for r in rows) / 60
        per_seed = ", ".join(f"{v:.2f}" for v in _values(rows))
        lines.append(
            f"| {variant} | {_training_files(rows)} | {len(rows)} | {marked(mean_std(_values(rows)), rows)} | "
            f"{per_seed} | "
            f"{mean_std(_values(rows, 'best_validation'))} | {best_epochs(rows)} | {minutes:.1f} min |"
        )
    improving = {variant: still_improving(rows) for variant, rows in groups.items() if still_improving(rows)}
    lines += ["", STILL_IMPROVING_NOTE]
    if improving:
        counts = ", ".join(f"{variant} {count} of {len(groups[variant])}" for variant, count in improving.items())
        lines[-1] += f" Runs still improving at their last epoch: {counts}."
    if any(row.get("outdated") for rows in groups.values() for row in rows):
        lines += ["", OUTDATED_NOTE]
    also = spec.get("also_report", {})
    if also:
        lines += ["", "| Variant | " + " | ".join(f"Test {label}" for label in also.values()) + " |"]
        lines.append("|---" * (len(also) + 1) + "|")
        for variant, rows in groups.items():
            cells = [mean_std(_test_values(rows, key)) for key in also]
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    extra_tests = sorted({name for r in records if r["task"] == task for name in r.get("test_metrics", {})} - {"test"})
    for name in extra_tests:
        lines += ["", f"`{name}` ({spec['metric']}):", ""]
        for variant, rows in groups.items():
            tests = [r["test_metrics"][name] for r in rows if name in r["test_metrics"]]
            values = [metrics[spec["metric"]] * spec["scale"] for metrics in tests]
            lines.append(f"- {variant}: {mean_std(values)}")
    for extra in (cross_validation(task, records), sample_efficiency_table(task, records)):
        if extra:
            lines += [""] + extra
    lines += ["", f"Commands, configs and metrics of every run: [{records_link}/{task}/]({records_link}/{task}/)", ""]
    return lines


def sample_efficiency_points(records: List[Record], task: str) -> Dict[str, List[Tuple[float, float]]]:
    """``{"baseline"|"elmo": [(share of the training set, test metric)]}``, one point per run;
    empty without sample-efficiency runs. The full runs count as share 1 where they train on the
    same data as the samples (``full_runs_in_sample_efficiency``)."""
    spec = TASKS[task]
    runs = [r for r in records if r["task"] == task and on_default_split(r)]
    if not any(r.get("train_fraction") is not None for r in runs):
        return {}
    points: Dict[str, List[Tuple[float, float]]] = defaultdict(list)
    for record in runs:
        share = record.get("train_fraction")
        if share is None and spec.get("full_runs_in_sample_efficiency") and record["variant"] in spec["configs"]:
            share = 1.0
        if share is not None and record.get("value") is not None:
            kind = "elmo" if record["variant"].startswith("elmo") else "baseline"
            points[kind].append((share, record["value"]))
    return dict(points)


def sample_efficiency_table(task: str, records: List[Record]) -> List[str]:
    points = sample_efficiency_points(records, task)
    if not points:
        return []
    spec = TASKS[task]
    lines = [
        f"Sample efficiency: test {spec['metric_name']} against the share of the training set "
        f"({spec.get('sample_efficiency_data', 'the training file')}, a deterministic sample; mean ± std over seeds):",
        "",
        "| Share of the training set | baseline | ELMo | seeds |",
        "|---|---|---|---|",
    ]
    for share in sorted({s for values in points.values() for s, _ in values}):
        base, elmo = ([v for s, v in points.get(kind, []) if s == share] for kind in ("baseline", "elmo"))
        lines.append(f"| {100 * share:g}% | {mean_std(base)} | {mean_std(elmo)} | {len(base)} / {len(elmo)} |")
    return lines + [""]


def plots(records: List[Record], directory: Path, prefix: str) -> List[Path]:
    """Writes the figures that the records can give; returns their paths."""
    weights: Dict[str, List[Dict[int, List[float]]]] = defaultdict(list)
    curves: Dict[str, Dict[str, List[List[float]]]] = defaultdict(lambda: defaultdict(list))
    for record in filter(on_default_split, records):
        name = TASKS[record["task"]]["name"]
        if record["variant"] == "elmo" and record.get("layer_weights"):
            weights[name].append({int(m): w for m, w in record["layer_weights"].items()})
        if record["variant"] in ("baseline", "elmo") and record.get("validation_curve"):
            curves[name][record["variant"]].append(record["validation_curve"])
    directory.mkdir(parents=True, exist_ok=True)
    metrics = {TASKS[t]["name"]: TASKS[t]["metric_name"] for t in TASKS}
    made = [
        layer_weights_figure(weights, directory / f"{prefix}_layer_weights.png"),
        validation_curves_figure(curves, metrics, directory / f"{prefix}_validation_curves.png"),
    ]
    for task, spec in TASKS.items():
        points = sample_efficiency_points(records, task)
        if points:
            path = directory / f"{prefix}_sample_efficiency_{spec['name']}.png"
            made.append(sample_efficiency_figure(points, spec["name"], spec["metric_name"], path))
    return [path for path in made if path is not None]


def introduction(records: List[Record], label: str) -> str:
    """The report's opening paragraph: what its runs are, and what their numbers can be compared with."""
    if records and all(r.get("data") == "fixtures" for r in records):
        return (
            f"Runs of the `{label}` budget of `scripts/reproduce.py` (see its docstring and "
            "`scripts/reproduction_tasks.py`) on the bundled samples in `fixtures/`, for a few batches: they check "
            "that every step of a run works (train, evaluate, record, report), and their numbers say nothing about "
            "the tasks or about ELMo. Each number is the **test** metric of the model selected on the validation "
            "split (mean ± standard deviation where there are several seeds); the paper's numbers (Peters et al. "
            "2018, Table 1) only give the table its shape. Error reduction is (ELMo - baseline) / (100 - baseline)."
        )
    return (
        f"Real runs of the `{label}` budget of `scripts/reproduce.py` (see its docstring and "
        "`scripts/reproduction_tasks.py`). Each number is the mean ± standard deviation over seeds of the "
        "**test** metric of the model selected on the validation split; the paper's numbers (Peters et al. "
        "2018, Table 1) are beside ours for orientation only: our data, model sizes, training time and "
        "biLM are far smaller (each task's section says how), so only the direction and size of the ELMo "
        "effect are comparable. Error reduction is (ELMo - baseline) / (100 - baseline)."
    )


def write_report(records: List[Record], path: Path, budget: Optional[str]) -> None:
    """Writes the whole report to ``path`` (its plots into ``<path's folder>/results/``)."""
    label = budget or "custom"
    figures = plots(records, path.parent / "results", label)
    records_link = f"results/records/{label}" if budget in ("mini", "paper") else "records"
    lines = [
        "# Results",
        "",
        f"<!-- Generated by scripts/reproduce.py (budget: {label}) from the run records in {records_link}/; "
        "do not edit by hand: rerun `scripts/reproduce.py all --budget "
        f"{label} --report-only`. -->",
        "",
        introduction(records, label),
        "",
        *(
            ["Earlier runs, made before runs kept records, are in [RESULTS_history.md](RESULTS_history.md).", ""]
            if (path.parent / "RESULTS_history.md").exists()
            else []
        ),
        "## The six benchmarks (shaped like the paper's Table 1)",
        "",
        *table_1(records, budget),
        "",
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
        "ELMo variants on each task's validation data (`--analyses`): ELMo's own dropout 0.5 on top of the task "
        "model's dropout of its whole embedded input (the earlier configs, which dropped ELMo's features out "
        'twice; "ELMo as configured" now has no dropout inside ELMo), layer norm on the biLM layers, twice '
        "the epochs, and a biLM first fine-tuned on the task's training text (the paper's appendix; its command "
        "is the first of each run's record).",
        "",
        *analysis_table(records, "diagnosis", {}, budget),
        "",
        *diagnosis_notes(records, budget),
        "## Plots",
        "",
    ]
    if figures:
        lines += [f"![{figure.stem}](results/{figure.name})" for figure in figures]
        lines += [
            "",
            "Layer weights: the softmax-normalised ELMo mixing weights learned at the input (and output) of each "
            "task model, mean over seeds (the paper's Figure 2). Validation curves: the validation metric per "
            "epoch, mean over seeds. Sample efficiency: test metric against the share of the training data "
            "(the paper's Figure 1).",
        ]
    else:
        lines.append("No finished runs yet.")
    lines += ["", "## Per task", ""]
    for task in TASKS:
        lines += task_section(task, records, records_link, budget)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
