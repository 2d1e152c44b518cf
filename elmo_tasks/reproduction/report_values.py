"""The numbers of the report, from run records: means over seeds, error reductions, Table 1's values,
cross-validation means and sample-efficiency points, and the marks on results that need a caveat."""

import statistics
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

from elmo_tasks.counted_nouns import counted
from elmo_tasks.reproduction.records import Record
from elmo_tasks.reproduction.task_table import TASKS

# Marks a result with runs made with an earlier config or biLM than the current (see ``outdated`` in a record).
OUTDATED_MARK = " †"
# Marks a result any of whose runs was still improving when its epoch budget ended.
IMPROVING_MARK = " ‡"


def on_default_split(record: Record) -> bool:
    """Table 1 and the analyses use the task's default split (SQuAD: test fold 1/4)."""
    split = TASKS[record["task"]].split
    return split is None or record.get("split") in (None, split.default)


def mean_std(values: List[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def error_reduction(baseline: float, elmo: float) -> float:
    """The paper's relative error reduction, in percent: (elmo - baseline) / (100 - baseline)."""
    return 100.0 * (elmo - baseline) / (100.0 - baseline)


def marked(text: str, rows: List[Record]) -> str:
    """``text`` with the outdated mark if any of ``rows`` is outdated."""
    return text + OUTDATED_MARK if any(row.get("outdated") for row in rows) else text


def marked_improving(text: str, rows: List[Record]) -> str:
    """``text`` with the still-improving mark if any of ``rows`` was: a converged result has none."""
    return text + IMPROVING_MARK if still_improving(rows) else text


def by_variant(records: List[Record], task: str) -> Dict[str, List[Record]]:
    """The task's records on its default split, by variant."""
    grouped: Dict[str, List[Record]] = defaultdict(list)
    for record in records:
        if record["task"] == task and on_default_split(record):
            grouped[record["variant"]].append(record)
    return grouped


def values(rows: List[Record], key: str = "value") -> List[float]:
    return [r[key] for r in rows if r.get(key) is not None]


def metric_values(rows: List[Record], metric: str) -> List[float]:
    """The runs' test ``metric`` (scaled as the task's metric is); the task's own metric is ``value``."""
    found = []
    for record in rows:
        spec = TASKS[record["task"]]
        if metric == spec.metric:
            value = record.get("value")
        else:
            raw = record.get("test_metrics", {}).get("test", {}).get(metric)
            value = None if raw is None else raw * spec.scale
        if value is not None:
            found.append(value)
    return found


def has_curve(record: Record) -> bool:
    return record.get("best_epoch") is not None and bool(record.get("validation_curve"))


def best_epochs(rows: List[Record]) -> str:
    """Each run's best epoch of the epochs it validated, 1-based: ``"4/4, 3/4"`` (``–`` without curves)."""
    cells = [f"{r['best_epoch'] + 1}/{len(r['validation_curve'])}" for r in rows if has_curve(r)]
    return ", ".join(cells) or "–"


def still_improving(rows: List[Record]) -> int:
    """How many runs had their best validation at their last epoch, i.e. stopped while still improving
    (a single epoch says nothing about that, so one-epoch runs never count)."""
    return sum(1 for r in rows if has_curve(r) and r["best_epoch"] + 1 == len(r["validation_curve"]) > 1)


def cross_validated_per_seed(records: List[Record], task: str, variant: str) -> List[float]:
    """Per seed, the mean test metric over all the task's folds; empty unless every fold has every
    seed of the default fold (then the folds together test every example once), all of one config
    (none of them outdated, or all: folds rerun with a new config do not mix with the old ones)."""
    split = TASKS[task].split
    if split is None:
        return []
    runs = [r for r in records if r["task"] == task and r["variant"] == variant and r.get("value") is not None]
    if len({bool(r.get("outdated")) for r in runs}) > 1:
        return []
    by_seed: Dict[int, Dict[str, float]] = defaultdict(dict)
    for record in runs:
        by_seed[record["seed_index"]][record.get("split") or split.default] = record["value"]
    seeds = [k for k, folds in by_seed.items() if split.default in folds]
    if not seeds or any(set(by_seed[k]) != set(split.all) for k in seeds):
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
        groups = by_variant(records, task)
        base, elmo = values(groups.get("baseline", [])), values(groups.get("elmo", []))
        elmo_records, base_records = groups.get("elmo", []), groups.get("baseline", [])
    return base, elmo, base_records, elmo_records, cross_validated


def metrics_line(records: List[Record], task: str, budget: str) -> str:
    """One console line with a task's Table 1 numbers from ``records``: ``ner smoke: baseline F1 5.00,
    ELMo F1 0.00 (test, 1 seed each)``."""
    spec = TASKS[task]
    base, elmo, _, _, cross_validated = table_1_values(records, task)
    cells = [
        f"{name} {spec.metric_name} {mean_std(found)}" if found else f"{name} not run yet"
        for name, found in (("baseline", base), ("ELMo", elmo))
    ]
    seeds = f"{counted(len(base), 'seed')} each" if len(base) == len(elmo) else f"seeds {len(base)} / {len(elmo)}"
    where = f"test, mean over all {spec.split.label}s per seed" if cross_validated and spec.split else "test"
    return f"{task} {budget}: {', '.join(cells)} ({where}, {seeds})"


def sample_efficiency_runs(records: List[Record], task: str) -> Dict[str, Dict[float, List[Record]]]:
    """``{"baseline"|"elmo": {share of the training set: its runs}}``; empty without sample-efficiency
    runs. The full runs count as share 1 where they train on the same data as the samples."""
    spec = TASKS[task]
    runs = [r for r in records if r["task"] == task and on_default_split(r)]
    if not any(r.get("train_fraction") is not None for r in runs):
        return {}
    full_runs_included = spec.sample_efficiency is not None and spec.sample_efficiency.full_runs_included
    found: Dict[str, Dict[float, List[Record]]] = defaultdict(lambda: defaultdict(list))
    for record in runs:
        share: Optional[float] = record.get("train_fraction")
        if share is None and full_runs_included and record["variant"] in spec.configs:
            share = 1.0
        if share is not None and record.get("value") is not None:
            kind = "elmo" if record["variant"].startswith("elmo") else "baseline"
            found[kind][share].append(record)
    return {kind: dict(by_share) for kind, by_share in found.items()}


def mean_per_share(points: List[Tuple[float, float]]) -> Dict[float, float]:
    """Each share of the training set in ``points`` (ascending) with the mean metric of its runs: what the
    sample-efficiency plot draws and the report's data curve states."""
    by_share: Dict[float, List[float]] = defaultdict(list)
    for share, value in points:
        by_share[share].append(value)
    return {share: statistics.mean(by_share[share]) for share in sorted(by_share)}


def sample_efficiency_points(
    records: List[Record], task: str, outdated: Optional[bool] = None
) -> Dict[str, List[Tuple[float, float]]]:
    """``{"baseline"|"elmo": [(share of the training set, test metric)]}``, one point per run; with
    ``outdated``, only the runs that are (True) or are not (False) of an earlier config or biLM."""
    points = {
        kind: [
            (share, run["value"])
            for share, runs in by_share.items()
            for run in runs
            if outdated is None or bool(run.get("outdated")) == outdated
        ]
        for kind, by_share in sample_efficiency_runs(records, task).items()
    }
    return {kind: found for kind, found in points.items() if found}
