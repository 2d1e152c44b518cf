"""The task models shipped with elmo-tasks, by name: ``elmo_tasks:pretrained/<name>`` is the archive
``elmo_tasks/pretrained/<name>/model.tar.gz`` of the installed package.

A shipped model is a folder of the package, made from a run record by ``scripts/reproduce.py TASK
--budget BUDGET --ship`` (:mod:`elmo_tasks.reproduction.shipping`): ``model.tar.gz`` (a portable archive,
:mod:`elmo_tasks.pretrained.portable`), ``MODEL_CARD.md``, ``record.json`` (the run record it comes
from) and ``shipped.json`` (what :func:`shipped_models` and the list read). The folder's name is the
model's name (its task's: ``ner``). Like the biLM's package references
(:mod:`elmo_tasks.bilm.references`), a name holds no path of the machine it was written on.

A name works wherever an archive path does once a command has started: :func:`install_model_names`
(a step of :func:`elmo_tasks.command_start.start_command`) makes AllenNLP's ``load_archive`` resolve it,
so ``allennlp predict elmo_tasks:pretrained/ner ...``, ``Predictor.from_path``, ``load_archive`` and the
demo take it; :func:`archive_path` resolves one without any of that. No AllenNLP import here.
"""

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from elmo_tasks.archive_errors import ArchiveFileError
from elmo_tasks.bilm.references import PACKAGE_REFERENCE_PREFIX, PACKAGE_ROOT

MODEL_NAME_PREFIX = PACKAGE_REFERENCE_PREFIX + "pretrained/"
#: For tests: a folder to take in place of the package's ``elmo_tasks/pretrained`` as the catalogue
#: (the biLM's references still name the package's files).
ROOT_VARIABLE = "ELMO_TASKS_PRETRAINED_ROOT"
ARCHIVE_FILE = "model.tar.gz"
CARD_FILE = "MODEL_CARD.md"
RECORD_FILE = "record.json"
SHIPPED_FILE = "shipped.json"
#: What every shipped task model together may weigh in the repository (issue 57): ``--ship`` refuses more.
SHIPPED_MODELS_BUDGET_BYTES = 80_000_000
SHIP_COMMAND = "scripts/reproduce.py TASK --budget BUDGET --ship"

_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")


class PretrainedModelError(ArchiveFileError):
    """A name of the ``elmo_tasks:pretrained/`` form that names no shipped model; the one-line message
    says which are shipped (an :class:`ArchiveFileError`, so commands end with that line)."""


@dataclass(frozen=True)
class ShippedModel:
    """One shipped model: its folder and what ``shipped.json`` there says of it."""

    folder: Path
    facts: Dict[str, Any]

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def reference(self) -> str:
        """The name to load it by: ``elmo_tasks:pretrained/<name>``."""
        return MODEL_NAME_PREFIX + self.name

    @property
    def archive(self) -> Path:
        return self.folder / ARCHIVE_FILE

    @property
    def card(self) -> Path:
        return self.folder / CARD_FILE

    @property
    def size_bytes(self) -> int:
        """Every file of the folder: what the model adds to the repository."""
        return folder_size(self.folder)

    def metric_line(self) -> str:
        """``F1: validation 93.93, test 88.72`` (the scale of the run records: percent)."""
        facts = self.facts
        return f"{facts['metric_name']}: validation {facts['validation']:.2f}, test {facts['test']:.2f}"


def catalogue_root() -> Path:
    """The folder of the shipped models: the package's ``pretrained/``, or ``ELMO_TASKS_PRETRAINED_ROOT``."""
    chosen = os.environ.get(ROOT_VARIABLE)
    return Path(chosen).resolve() if chosen else PACKAGE_ROOT / "pretrained"


def shipped_models(root: Optional[Path] = None) -> List[ShippedModel]:
    """Every shipped model in ``root`` (default :func:`catalogue_root`), by name: each folder with an
    archive and ``shipped.json`` (the biLM's folder has neither)."""
    folder = root if root is not None else catalogue_root()
    if not folder.is_dir():
        return []
    found = []
    for entry in sorted(folder.iterdir()):
        if _NAME.match(entry.name) and (entry / ARCHIVE_FILE).is_file() and (entry / SHIPPED_FILE).is_file():
            found.append(ShippedModel(entry, json.loads((entry / SHIPPED_FILE).read_text(encoding="utf-8"))))
    return found


def is_package_name(text: str) -> bool:
    """Whether ``text`` is an ``elmo_tasks:`` name (a model's, or a mistaken one), not a path or URL."""
    return text.startswith(PACKAGE_REFERENCE_PREFIX)


def archive_path(name_or_path: str, root: Optional[Path] = None) -> str:
    """The archive that ``name_or_path`` names: ``elmo_tasks:pretrained/<name>`` becomes the shipped
    model's ``model.tar.gz``; anything else (a path, a URL) is returned unchanged. Raises
    :class:`PretrainedModelError` for an ``elmo_tasks:`` name of no shipped model."""
    if not is_package_name(name_or_path):
        return name_or_path
    name = name_or_path[len(MODEL_NAME_PREFIX) :].rstrip("/") if name_or_path.startswith(MODEL_NAME_PREFIX) else ""
    models = {model.name: model for model in shipped_models(root)}
    if name in models:
        return str(models[name].archive)
    raise PretrainedModelError(f"{name_or_path} names no shipped task model; {_what_is_shipped(models)}")


def _what_is_shipped(models: Dict[str, ShippedModel]) -> str:
    if not models:
        return f"none is shipped yet: `{SHIP_COMMAND}` ships one from a finished run (docs/PRETRAINED.md)"
    names = ", ".join(f"{model.reference} ({model.facts.get('task_title', model.name)})" for model in models.values())
    return f"the shipped ones are {names} (`elmo-tasks pretrained-models` lists them)"


def install_model_names() -> None:
    """Makes AllenNLP's ``load_archive`` take shipped models' names (:func:`archive_path`); idempotent.
    Called where a command starts (:mod:`elmo_tasks.command_start`), never at import."""
    from elmo_tasks.allennlp_internals import resolve_archive_names

    resolve_archive_names(archive_path)


def folder_size(folder: Path) -> int:
    """The bytes of every file under ``folder``."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def size_text(size_bytes: int) -> str:
    """A size for people: ``4.2 MB``, or ``45 kB`` below a megabyte."""
    return f"{size_bytes / 1e6:.1f} MB" if size_bytes >= 1_000_000 else f"{size_bytes / 1e3:.0f} kB"


def listing_lines(models: List[ShippedModel]) -> List[str]:
    """What ``elmo-tasks pretrained-models`` prints: a line per model, then the total against the budget."""
    if not models:
        return [
            f"No task model is shipped yet ({catalogue_root()} holds none). `{SHIP_COMMAND}` ships the best run "
            "of a task by validation score (docs/PRETRAINED.md)."
        ]
    lines = []
    for model in models:
        facts = model.facts
        lines.append(
            f"{model.reference}  {facts['task_title']} ({facts['variant']}, {facts['budget']} budget, seed "
            f"{facts['seed']})  {model.metric_line()}  {size_text(model.size_bytes)} ({facts['precision']})  "
            f"card: {model.card}"
        )
    total = sum(model.size_bytes for model in models)
    lines.append(f"{len(models)} shipped, {size_text(total)} of the {size_text(SHIPPED_MODELS_BUDGET_BYTES)} budget")
    return lines
