"""Run records: what a finished run leaves (commands, settings, metrics, curves, layer weights), where it
is kept, and which records a run with given settings may reuse.

A record is a JSON object, ``record.json`` in its run directory and a copy under
``<records-dir>/<task>/<variant>/<run>.json``; its keys are those of ``build_record``.
"""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from elmo_tasks.atomic_files import WholeFile, write_failure
from elmo_tasks.reproduction.allennlp_runs import RunFailed
from elmo_tasks.reproduction.task_table import TASKS

Record = Dict[str, Any]
RECORD_VERSION = 2
# What decides the model a run trains besides its resolved config (config_sha256) and seed.
TWIN_KEYS = ("config_sha256", "data", "env", "bilm_weights_sha256", "bilm_finetuning", "word_vectors", "train_share")
_MISSING = object()


def same_settings(previous: Dict[str, Any], settings: Dict[str, Any]) -> bool:
    """Whether a record (or saved settings) was made with every one of ``settings``. The overrides count
    through the config they resolve to (``config_sha256``), not as written: a setting moved between an
    experiment file and a budget's overrides (the paper's recipe in the file, the mini budget's earlier
    value as an override) leaves the same run."""
    by_config = "config_sha256" in settings and "config_sha256" in previous
    return all(
        previous.get(key, _MISSING) == value
        for key, value in settings.items()
        if not (by_config and key == "overrides")
    )


# The fields the harness and the report read from every record of RECORD_VERSION, with their JSON types.
RECORD_FIELDS: Dict[str, Tuple[type, ...]] = {
    "record_version": (int,),
    "task": (str,),
    "variant": (str,),
    "seed_index": (int,),
    "run_name": (str,),
    "metric": (str,),
    "value": (int, float),
    "test_metrics": (dict,),
    "validation_curve": (list,),
    "layer_weights": (dict,),
    "best_epoch": (int, type(None)),
}
_JSON_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}
_RECORD_EXPECTED = "expected a run record written by scripts/reproduce.py"
_RECORD_REMEDY = "restore it (`git checkout -- FILE` for a committed record) or delete it to run that run again"


class RecordError(RunFailed):
    """A run record that cannot be read: not JSON, cut short, or without a field the harness reads; the
    message names the file (and line) and what to do. A subclass of RunFailed: the run it belongs to
    fails and the others go on."""


def _read(path: Path) -> Record:
    return json.loads(path.read_text())


def read_record(path: Path, every_field: bool = False) -> Record:
    """The record in ``path``, checked: a JSON object, with every field of RECORD_FIELDS of its type if it is
    of RECORD_VERSION or ``every_field`` (the report reads them all; a reuse check reads only the version
    of an older record). Raises RecordError naming the file and what is wrong."""
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not UTF-8 text; {_RECORD_EXPECTED}: {_RECORD_REMEDY}") from None
    except json.JSONDecodeError as error:
        at_the_end = error.pos >= len(error.doc.rstrip()) or error.msg.startswith("Unterminated string")
        cut = " (the file ends too early: cut short?)" if at_the_end else ""
        raise RecordError(
            f"{path}, line {error.lineno}: not valid JSON ({error.msg}, column {error.colno}){cut}; "
            f"{_RECORD_EXPECTED}: {_RECORD_REMEDY}"
        ) from None
    if not isinstance(record, dict):
        raise RecordError(
            f"{path} holds {_json_type(record)} instead of a JSON object; {_RECORD_EXPECTED}: {_RECORD_REMEDY}"
        )
    _in_todays_data_modes(record)
    if record.get("record_version") != RECORD_VERSION and not every_field:
        return record
    for field, types in RECORD_FIELDS.items():
        if field not in record:
            raise RecordError(
                f"{path} has no field {field!r}; {_RECORD_EXPECTED} (version {RECORD_VERSION}): {_RECORD_REMEDY}"
            )
        value = record[field]
        if isinstance(value, bool) or not isinstance(value, types):
            wanted = " or ".join(dict.fromkeys(_JSON_TYPE_NAMES.get(t, "null") for t in types))
            raise RecordError(
                f"{path}: field {field!r} is {_json_type(value)}; expected {wanted}, as in a run record written by "
                f"scripts/reproduce.py: {_RECORD_REMEDY}"
            )
    if record["task"] not in TASKS:
        raise RecordError(f"{path}: task {record['task']!r} is none of {', '.join(TASKS)}; {_RECORD_REMEDY}")
    return record


def _in_todays_data_modes(record: Record) -> None:
    """Names a mini record's data mode as today's modes do. Until 2026-11-29 ``ELMO_TASKS_DATA=full`` meant
    the real data with substitutes where the paper's training sets are not at hand; that mode is now
    ``substitutes`` (the same files, so the same resolved configs), and ``full`` reads the official files.
    The record's ``commands`` still show the command as it was run."""
    if record.get("budget") == "mini" and record.get("data") == "full":
        record["data"] = "substitutes"


def _json_type(value: Any) -> str:
    """``value``'s JSON type, with an article: "an object", "a string", "null", "true"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def finished_run_record(run_dir: Path, settings: Dict[str, Any]) -> Optional[Record]:
    """The record in ``run_dir`` of a run finished with ``settings`` (trained, evaluated, recorded), if any."""
    record_file = run_dir / "record.json"
    if not (record_file.exists() and (run_dir / "test_metrics.json").exists()):
        return None
    record = read_record(record_file)
    return record if same_settings(record, settings) else None


def kept_record(records_dir: Path, task: str, variant: str, name: str, settings: Dict[str, Any]) -> Optional[Record]:
    """The record kept in the records directory of a run made with ``settings``, if any.

    Run directories are scratch space (``runs/`` is not committed) while the records of ``mini``
    and ``paper`` runs are: a finished run whose directory is gone is still finished.
    """
    record_file = records_dir / task / variant / f"{name}.json"
    if not record_file.exists():
        return None
    record = read_record(record_file)
    return record if record.get("record_version") == RECORD_VERSION and same_settings(record, settings) else None


def twin_record(records_dir: Path, task: str, variant: str, name: str, settings: Dict[str, Any]) -> Optional[Record]:
    """The record of a finished run of any variant of ``task``, with the same run name (seed and split),
    that trained the very model ``settings`` ask for: e.g. an analysis variant whose overrides the config
    file has since adopted, or one whose overrides equal the config. Reusing it saves a whole training."""
    for record_file in sorted((records_dir / task).glob(f"*/{name}.json")):
        record = read_record(record_file)
        if record.get("record_version") != RECORD_VERSION:
            continue
        if record["variant"] == variant and "trained_as" not in record:
            continue  # the variant's own run: reused through its run directory or record (or resumed) instead
        if all(record.get(key) == settings.get(key) for key in TWIN_KEYS):
            return record
    return None


def _validation_curve(run_dir: Path, metric: str) -> List[float]:
    values = []
    epoch = 0
    while (run_dir / f"metrics_epoch_{epoch}.json").exists():
        metrics = _read(run_dir / f"metrics_epoch_{epoch}.json")
        if f"validation_{metric}" in metrics:
            values.append(float(metrics[f"validation_{metric}"]))
        epoch += 1
    return values


def _layer_weights(run_dir: Path) -> Dict[str, List[float]]:
    """Softmax-normalised ELMo mixing weights of the best model (mix index as a string)."""
    best = run_dir / "best.th"
    if not best.exists():
        return {}
    import torch

    from elmo_tasks.reproduction.plots import state_layer_weights

    state = torch.load(best, map_location="cpu", weights_only=True)
    return {str(mix): weights for mix, weights in state_layer_weights(state).items()}


def _test_metrics(run_dir: Path, metric: str) -> Dict[str, Dict[str, Any]]:
    """``test name -> metrics`` of every ``test*_metrics.json`` that `allennlp evaluate` wrote."""
    tests = {}
    for metrics_file in sorted(run_dir.glob("test*_metrics.json")):
        metrics = _read(metrics_file)
        if metric not in metrics:
            raise RunFailed(f"{metrics_file} has no metric {metric!r} (has {sorted(metrics)})")
        tests[metrics_file.name[: -len("_metrics.json")]] = metrics
    return tests


def build_record(
    task: str, variant: str, k: int, seed: int, run_dir: Path, settings: Dict[str, Any], base: Dict[str, Any]
) -> Record:
    """The record of a finished run: ``base`` (commands, times, commit) plus what its files hold."""
    spec = TASKS[task]
    tests = _test_metrics(run_dir, spec.metric)
    final = _read(run_dir / "metrics.json") if (run_dir / "metrics.json").exists() else {}
    config = _read(run_dir / "config.json") if (run_dir / "config.json").exists() else None
    best_validation = final.get(f"best_validation_{spec.metric}")
    return {
        **base,
        "record_version": RECORD_VERSION,
        "task": task,
        "variant": variant,
        "seed_index": k,
        "seed": seed,
        "train_fraction": settings.get("train_share"),
        "split": settings["env"].get(spec.split.env, spec.split.default) if spec.split else None,
        "run_name": run_dir.name,
        **settings,
        "metric": spec.metric,
        "value": tests["test"][spec.metric] * spec.scale,
        "test_metrics": tests,
        "best_validation": None if best_validation is None else best_validation * spec.scale,
        "best_epoch": final.get("best_epoch"),
        "validation_curve": [v * spec.scale for v in _validation_curve(run_dir, spec.metric)],
        "layer_weights": _layer_weights(run_dir),
        "config_resolved": config,
    }


def write_whole(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` under a temporary name and renames it into place: another harness
    process reading the file meanwhile (several may share a runs directory), or a killed writer, finds
    the old content or the whole new one, never a record cut short."""
    try:
        with WholeFile(path) as partial:
            partial.write_text(text, encoding="utf-8")
    except OSError as error:  # a full disk, a read-only folder: the run fails with one line, the old file stays
        raise RunFailed(write_failure(path, error.errno or 0) + f" ({path} is unchanged)") from None


def save_record(record: Record, records_dir: Path) -> Record:
    """Writes the record into the records directory."""
    copy = records_dir / record["task"] / record["variant"] / f"{record['run_name']}.json"
    copy.parent.mkdir(parents=True, exist_ok=True)
    write_whole(copy, json.dumps(record, indent=2) + "\n")
    return record


def save_run_record(record: Record, run_dir: Path, records_dir: Path, budget: str) -> Record:
    """Writes the record, with its budget, into the run directory and into the records directory."""
    record = {**record, "budget": budget}
    write_whole(run_dir / "record.json", json.dumps(record, indent=2))
    return save_record(record, records_dir)


def load_records(records_dir: Path) -> List[Record]:
    """Every ``<task>/<variant>/<run>.json`` under ``records_dir``, in a stable order; RecordError for the
    first that cannot be read or lacks a field the report reads."""
    if not records_dir.exists():
        return []
    records = [read_record(path, every_field=True) for path in sorted(records_dir.glob("*/*/*.json"))]
    order = list(TASKS)
    return sorted(records, key=lambda r: (order.index(r["task"]), r["variant"], r.get("split") or "", r["seed_index"]))
