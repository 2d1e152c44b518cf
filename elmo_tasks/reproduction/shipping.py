"""Shipping a task model: ``scripts/reproduce.py TASK --budget BUDGET --ship`` makes
``elmo_tasks/pretrained/<task>/`` from the run records of the task's variant (``elmo`` unless
``--variants`` names another) in that budget, and makes it again when a better run is recorded.

1. **Choose by validation.** Among the records of the task, variant and budget (the task's default
   split; ELMo runs only with the biLM the package ships now, not fine-tuned), the best validation
   score wins (ties: the lower seed index). Test scores play no part: choosing by them would report a
   test score chosen on the test set.
2. **Check the run.** Its ``model.tar.gz`` must be there (``runs/`` is scratch space) and hold the
   config the record describes; unless it is the run shipped already, whose weights and scores then
   stand while the card's list of the runs it was chosen from is brought up to date.
3. **Make it portable** (:mod:`elmo_tasks.pretrained.portable`): the biLM named by package reference and
   left out of the weights; the float32 portable archive must load into the very tensors of the original.
4. **Measure float16.** Both portable archives are evaluated on the task's test file, as ``allennlp
   evaluate`` scores it; float16 ships when the test metric moves by less than
   :data:`FLOAT16_TOLERANCE_POINTS`, else float32 (also when the test file is not at hand). The numbers go
   into ``shipped.json`` and the card.
5. **Write the folder whole**: ``model.tar.gz``, ``MODEL_CARD.md`` (:mod:`elmo_tasks.reproduction.model_card`),
   ``record.json`` (the record's file as it is) and ``shipped.json``, replacing the task's earlier
   model only when all of it is written and every shipped model together stays within
   :data:`~elmo_tasks.pretrained.catalogue.SHIPPED_MODELS_BUDGET_BYTES`.
"""

import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from elmo_tasks.archive_errors import archive_problem
from elmo_tasks.atomic_files import WholeFolder
from elmo_tasks.bilm.references import resolve_bilm_file
from elmo_tasks.pretrained import SMALL_WEIGHT_REFERENCE
from elmo_tasks.pretrained.catalogue import (
    ARCHIVE_FILE,
    CARD_FILE,
    RECORD_FILE,
    SHIPPED_FILE,
    SHIPPED_MODELS_BUDGET_BYTES,
    ShippedModel,
    catalogue_root,
    folder_size,
    shipped_models,
    size_text,
)
from elmo_tasks.pretrained.portable import CONFIG_FILE, PortableArchiveError, differing_tensor, write_portable_archive
from elmo_tasks.reproduction import configs
from elmo_tasks.reproduction.allennlp_runs import ROOT
from elmo_tasks.reproduction.model_card import card_text
from elmo_tasks.reproduction.records import RECORD_VERSION, Record, RecordError, read_record
from elmo_tasks.reproduction.task_table import TASKS
from elmo_tasks.tasks.official_files import found_data_path

#: float16 ships when it moves the test metric (in the records' points) by less than this.
FLOAT16_TOLERANCE_POINTS = 0.05
DEFAULT_VARIANT = "elmo"

Say = Callable[[str], None]


class ShipError(Exception):
    """A model that cannot be shipped; the one-line message says why and what to do."""


@dataclass(frozen=True)
class RecordFile:
    """A run record and the file it was read from (copied into the shipped folder as it is)."""

    path: Path
    record: Record

    @property
    def run_name(self) -> str:
        return str(self.record["run_name"])

    @property
    def validation(self) -> float:
        return float(self.record["best_validation"])


def ship_command(task: str, budget: str, variant: str) -> str:
    """The harness command that ships ``task`` from ``budget``'s runs (what a card says it was made by)."""
    chosen = "" if variant == DEFAULT_VARIANT else f" --variants {variant}"
    return f"scripts/reproduce.py {task} --budget {budget} --ship{chosen}"


def shipped_bilm_sha256() -> str:
    """The start of the sha256 of the shipped biLM's weights, as run records give a biLM
    (``bilm_weights_sha256``, elmo_tasks/reproduction/configs.py)."""
    digest = hashlib.sha256()
    with open(resolve_bilm_file(SMALL_WEIGHT_REFERENCE), "rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def shippable_records(records_dir: Path, task: str, variant: str) -> Tuple[List[RecordFile], List[str]]:
    """The records of ``task``'s ``variant`` in ``records_dir`` that may be shipped, and a line for each
    one left out saying why. ShipError for a record that cannot be read."""
    spec = TASKS[task]
    current_bilm = shipped_bilm_sha256()
    shippable, left_out = [], []
    for path in sorted((records_dir / task / variant).glob("*.json")):
        try:
            record = read_record(path, every_field=True)
        except RecordError as error:
            raise ShipError(str(error)) from None
        name = record["run_name"]
        bilm = record.get("bilm_weights_sha256")
        if record.get("record_version") != RECORD_VERSION:
            left_out.append(f"{name}: a record of version {record.get('record_version')}, not {RECORD_VERSION}")
        elif record.get("split") not in (None, spec.default_split):
            left_out.append(f"{name}: split {record['split']}, not the task's default {spec.default_split}")
        elif not isinstance(record.get("best_validation"), (int, float)):
            left_out.append(f"{name}: no validation score")
        elif record.get("bilm_finetuning"):
            left_out.append(f"{name}: its biLM was fine-tuned, so it is not the shipped one")
        elif bilm is not None and bilm != current_bilm:
            left_out.append(f"{name}: trained with the biLM {bilm}, not the shipped one ({current_bilm})")
        else:
            shippable.append(RecordFile(path, record))
    return shippable, left_out


def best_by_validation(candidates: List[RecordFile]) -> RecordFile:
    """The record with the best validation score (the lower seed index on a tie); never the test score."""
    return max(candidates, key=lambda candidate: (candidate.validation, -int(candidate.record["seed_index"])))


def ship_task(
    task: str,
    budget: str,
    runs_dir: Path,
    records_dir: Path,
    variant: str = DEFAULT_VARIANT,
    root: Optional[Path] = None,
    say: Say = print,
) -> ShippedModel:
    """Ships ``task`` (see the module docstring) into ``root`` (default: the catalogue,
    elmo_tasks/pretrained); the shipped model. ShipError when it cannot."""
    from allennlp.models.archival import load_archive

    spec = TASKS[task]
    candidates, left_out = shippable_records(records_dir, task, variant)
    for line in left_out:
        say(f"left out: {line}")
    if not candidates:
        raise ShipError(
            f"no record of {task} {variant} to ship in {records_dir / task / variant}; train it first: "
            f"scripts/reproduce.py {task} --budget {budget}"
        )
    chosen = best_by_validation(candidates)
    record = chosen.record
    scores = ", ".join(f"{candidate.run_name} {candidate.validation:.2f}" for candidate in candidates)
    say(f"{chosen.run_name}: the best validation {spec.metric_name} of {len(candidates)} ({scores})")
    # A record copied from another variant's run of the same model names that run (``trained_as``).
    archive = runs_dir / task / record.get("trained_as", f"{variant}/{chosen.run_name}") / ARCHIVE_FILE
    if not archive.is_file():
        refreshed = _refresh_choice(root or catalogue_root(), task, chosen, candidates, say)
        if refreshed is not None:
            return refreshed
        raise ShipError(
            f"{chosen.path} is the best run by validation, but its archive {archive} is gone (runs/ is scratch "
            f"space): train it again (scripts/reproduce.py {task} --budget {budget} --force --only-seeds "
            f"{record['seed_index']}), or give the runs folder that holds it (--runs-dir)"
        )
    _check_archive_is_the_record(chosen, archive)
    original = load_archive(str(archive))
    facts: Dict[str, Any] = {
        "name": task,
        "task": task,
        "task_title": spec.name,
        "variant": variant,
        "budget": budget,
        "run_name": chosen.run_name,
        "seed": record.get("seed"),
        "seed_index": record["seed_index"],
        "model_type": original.config["model"]["type"],
        "predictor": getattr(type(original.model), "default_predictor", None) or task,
        "metric": spec.metric,
        "metric_name": spec.metric_name,
        "scale": spec.scale,
        "validation": chosen.validation,
        "test_as_recorded": record["value"],
        "best_epoch": record.get("best_epoch"),
        "bilm_weights_sha256": record.get("bilm_weights_sha256"),
        "chosen_from": [{"run_name": c.run_name, "validation": c.validation} for c in candidates],
        "made_by": ship_command(task, budget, variant),
    }
    with tempfile.TemporaryDirectory(prefix=f"ship-{task}-") as scratch:
        full, half = Path(scratch) / "float32.tar.gz", Path(scratch) / "float16.tar.gz"
        try:
            write_portable_archive(archive, full, original.model, half_precision=False)
            write_portable_archive(archive, half, original.model, half_precision=True)
        except PortableArchiveError as error:
            raise ShipError(str(error)) from None
        portable = load_archive(str(full))
        differing = differing_tensor(original.model.state_dict(), portable.model.state_dict())
        if differing is not None:
            raise ShipError(
                f"{archive}: its portable archive loads a model that differs from it at {differing}; its biLM is "
                "not the shipped one as it is: ship a model trained with the frozen shipped biLM"
            )
        del original, portable
        facts.update(_precision_check(record, full, half, say))
        shipped_archive = half if facts["precision"] == "float16" else full
        facts["archive_bytes"] = shipped_archive.stat().st_size
        facts["test"] = facts["precision_check"].get(facts["precision"], record["value"])
        facts["scores"] = {"best validation": chosen.validation / spec.scale, "test": facts["test"] / spec.scale}
        model = _write_folder(root or catalogue_root(), task, shipped_archive, chosen, facts)
    total = sum(shipped.size_bytes for shipped in shipped_models(model.folder.parent))
    say(
        f"shipped {model.reference}: {model.metric_line()}, weights in {facts['precision']}; {model.folder} is "
        f"{size_text(model.size_bytes)} (archive {size_text(facts['archive_bytes'])}); every shipped model: "
        f"{size_text(total)} of the {size_text(SHIPPED_MODELS_BUDGET_BYTES)} budget"
    )
    return model


def _refresh_choice(
    root: Path, task: str, chosen: RecordFile, candidates: List[RecordFile], say: Say
) -> Optional[ShippedModel]:
    """When the best run is the one shipped already (the record beside it is the chosen record's file, byte
    for byte), its weights, precision check and test scores stand, and only the runs it was chosen from
    have changed (a seed recorded since that does not lead): ``shipped.json`` and the card say so, and the
    run's archive, which the first shipping needed, is not needed again. None when another run leads."""
    folder = root / task
    shipped_record = folder / RECORD_FILE
    if not shipped_record.is_file() or shipped_record.read_bytes() != chosen.path.read_bytes():
        return None
    facts = json.loads((folder / SHIPPED_FILE).read_text(encoding="utf-8"))
    facts["chosen_from"] = [{"run_name": c.run_name, "validation": c.validation} for c in candidates]
    model = _write_folder(root, task, folder / ARCHIVE_FILE, chosen, facts)
    say(
        f"{chosen.run_name} is shipped already ({model.reference}) and still leads: its weights and test scores "
        f"stand (its archive is not needed again); the card now names the {len(candidates)} runs it was chosen from"
    )
    return model


def _check_archive_is_the_record(chosen: RecordFile, archive: Path) -> None:
    """The archive holds the config the record was written from (else the run was trained again since)."""
    recorded = chosen.record.get("config_resolved")
    if recorded is None:
        return
    try:
        with tarfile.open(archive, "r:gz") as members:
            member = members.extractfile(CONFIG_FILE)
            config = json.load(member) if member is not None else None
    except (tarfile.TarError, KeyError, OSError, EOFError, ValueError) as error:
        raise ShipError(archive_problem(archive) or f"{archive}: cannot read its {CONFIG_FILE} ({error})") from None
    if json.dumps(recorded, sort_keys=True) != json.dumps(config, sort_keys=True):
        raise ShipError(
            f"{archive} is not the model {chosen.path} describes (its config.json differs from the record's "
            "config_resolved: was the run trained again after the record was written?); record it again "
            "(scripts/reproduce.py --reuse-only) or train it again"
        )


def _precision_check(record: Record, full: Path, half: Path, say: Say) -> Dict[str, Any]:
    """``precision`` (float16 or float32), ``precision_check`` (the numbers) and ``test_file``: both
    archives evaluated on the task's test file, as ``allennlp evaluate`` scores it."""
    spec = TASKS[record["task"]]
    env = configs.run_env(record.get("data", "fixtures"), int(record.get("seed") or 0), record.get("env") or {})
    test_file = configs.files_to_evaluate(record["task"], env).get("test")
    if test_file is None or found_data_path(str(ROOT / test_file.split("#")[0])) is None:
        reason = f"no test file at {test_file} (docs/DATA.md)" if test_file else "the task names no test file"
        say(f"float16 not measured: {reason}; the weights ship in float32")
        return {"precision": "float32", "precision_check": {"not_measured": reason}, "test_file": test_file}
    scores = {}
    for precision, archive in (("float32", full), ("float16", half)):
        scores[precision] = _test_score(archive, str(ROOT / test_file), spec.metric) * spec.scale
    change = abs(scores["float16"] - scores["float32"])
    precision = "float16" if change < FLOAT16_TOLERANCE_POINTS else "float32"
    say(
        f"test {spec.metric_name} ({test_file}): as recorded {record['value']:.4f}, float32 {scores['float32']:.4f}, "
        f"float16 {scores['float16']:.4f}: float16 moves it by {change:.4f}, "
        f"{'less' if precision == 'float16' else 'not less'} than {FLOAT16_TOLERANCE_POINTS}: the weights ship in "
        f"{precision}"
    )
    check = {**scores, "tolerance": FLOAT16_TOLERANCE_POINTS}
    return {"precision": precision, "precision_check": check, "test_file": test_file}


def _test_score(archive: Path, test_file: str, metric: str) -> float:
    """The test metric of ``archive`` on ``test_file``, computed as ``allennlp evaluate`` computes it. Into a
    log file (standard error not a terminal) its progress bar writes a line every 2 s, as ``allennlp evaluate
    --file-friendly-logging`` does, instead of a carriage-return update per batch."""
    from allennlp.commands.evaluate import evaluate_from_archive
    from allennlp.common import logging as common_logging

    file_friendly_before = common_logging.FILE_FRIENDLY_LOGGING  # evaluate_from_archive sets it
    try:
        file_friendly = file_friendly_before or not sys.stderr.isatty()
        return float(evaluate_from_archive(str(archive), test_file, file_friendly_logging=file_friendly)[metric])
    finally:
        common_logging.FILE_FRIENDLY_LOGGING = file_friendly_before


def _write_folder(root: Path, name: str, archive: Path, chosen: RecordFile, facts: Dict[str, Any]) -> ShippedModel:
    """``root/name`` with the archive, record, facts and card, replaced whole (elmo_tasks/atomic_files.py),
    unless every shipped model together would weigh more than the budget."""
    others = {model.name: model.size_bytes for model in shipped_models(root) if model.name != name}
    with WholeFolder(root / name) as partial:
        shutil.copyfile(archive, partial / ARCHIVE_FILE)
        shutil.copyfile(chosen.path, partial / RECORD_FILE)
        (partial / SHIPPED_FILE).write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
        (partial / CARD_FILE).write_text(card_text(chosen.record, facts), encoding="utf-8")
        size = folder_size(partial)
        if sum(others.values()) + size > SHIPPED_MODELS_BUDGET_BYTES:
            held = ", ".join(f"{other} {size_text(bytes_)}" for other, bytes_ in others.items()) or "none"
            total = size_text(sum(others.values()) + size)
            raise ShipError(
                f"{name} ({size_text(size)}) would bring the shipped models to {total}, "
                f"above the {size_text(SHIPPED_MODELS_BUDGET_BYTES)} budget (others: {held}); nothing was replaced: "
                "make the model smaller, or remove another from elmo_tasks/pretrained"
            )
    return ShippedModel(root / name, facts)
