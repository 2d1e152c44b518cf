"""The archives ``elmo-demo`` serves: named, checked before any is loaded, loaded with their predictors.

Each archive is given as ``ARCHIVE`` (a path, or a shipped model's name, ``elmo_tasks:pretrained/ner``;
its page is named after its task: ``ner``, ``srl``,
``coref``, ``squad``, ``snli``, ``sst5``) or ``NAME=ARCHIVE`` (e.g. to serve a baseline and an
ELMo model of one task side by side). Every path, task and name is checked first, from the
archives' ``config.json`` alone, so a typo in the fifth archive does not cost four model loads.
"""

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.models import Model

from elmo_tasks.commands.command_paths import CommandPathError, archive_model_type, describe_archive
from elmo_tasks.demo.archive_info import ArchiveScores, BilmFiles, archive_scores, bilm_files
from elmo_tasks.demo.mixing_weights import LayerMix, learned_mixes
from elmo_tasks.demo.task_pages import TASKS, DemoTask, task_of_predictor
from elmo_tasks.pretrained.catalogue import archive_path
from elmo_tasks.tasks.predictor_input import JsonLinesPredictor

#: Page names: they appear in URLs (``/models/NAME``, ``/api/NAME/predict``).
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class DemoSetupError(ValueError):
    """An archive argument the demo cannot serve; the message names it and says what to do."""


@dataclass(frozen=True)
class ArchiveSpec:
    """One ARCHIVE argument: the archive's path and the page name given with ``NAME=`` (or None)."""

    name: Optional[str]
    archive_file: str


@dataclass
class LoadedModel:
    """A served model: its page name, task, predictor and what the index page says about it."""

    name: str
    task: DemoTask
    archive_file: str
    model_type: str
    predictor: JsonLinesPredictor
    bilms: List[BilmFiles]
    scores: ArchiveScores
    mixes: List[LayerMix]

    def summary(self) -> Dict[str, Any]:
        """What ``GET /api/models`` says about the model."""
        return {
            "name": self.name,
            "task": self.task.name,
            "title": self.task.title,
            "archive": self.archive_file,
            "model_type": self.model_type,
            "bilm": [vars(bilm) for bilm in self.bilms],
            "metric": self.scores.metric,
            "scores": self.scores.scores,
            "best_epoch": self.scores.best_epoch,
            "mixing_weights": [mix.as_json() for mix in self.mixes],
        }


def parse_archive_spec(argument: str) -> ArchiveSpec:
    """``NAME=ARCHIVE`` or ``ARCHIVE`` (a path that exists is always an archive, ``=`` or not)."""
    name, equals, path = argument.partition("=")
    if equals and path and NAME_PATTERN.match(name) and not os.path.exists(argument):
        return ArchiveSpec(name, path)
    return ArchiveSpec(None, argument)


def _task_of_archive(archive_file: str) -> Tuple[str, DemoTask]:
    """(model type, task) of the archive, from its config alone; DemoSetupError when it is not a task model."""
    try:
        model_type = archive_model_type(archive_file)
    except CommandPathError as error:
        raise DemoSetupError(str(error)) from None
    if model_type is None:
        raise DemoSetupError(f"{archive_file}: a URL; the demo serves local archives: download it first")
    try:
        predictor = getattr(Model.resolve_class_name(model_type)[0], "default_predictor", None)
    except ConfigurationError:
        predictor = None
    task = task_of_predictor(predictor)
    if task is None:
        tasks = ", ".join(task.name for task in TASKS)
        raise DemoSetupError(
            f"{archive_file} holds {describe_archive(archive_file, model_type)}; the demo serves the models of "
            f"these tasks: {tasks}"
        )
    return model_type, task


class CheckedArchive(NamedTuple):
    """An archive argument whose path and task are known good, and its page name."""

    name: str
    archive_file: str
    model_type: str
    task: DemoTask


def check_archives(arguments: Sequence[str]) -> List[CheckedArchive]:
    """Each argument checked; DemoSetupError for a bad path, an archive of no task, or a name clash."""
    checked = []
    for argument in arguments:
        spec = parse_archive_spec(argument)
        model_type, task = _task_of_archive(spec.archive_file)
        checked.append(CheckedArchive(spec.name or task.name, spec.archive_file, model_type, task))
    seen: Dict[str, str] = {}
    for name, archive_file, _, task in checked:
        if name in seen:
            raise DemoSetupError(
                f"two archives would be served as {name!r} ({seen[name]} and {archive_file}); name them with "
                f"NAME=ARCHIVE, e.g. {task.name}_a={seen[name]} {task.name}_b={archive_file}"
            )
        seen[name] = archive_file
    return checked


def load_models(arguments: Sequence[str], cuda_device: int = -1) -> List[LoadedModel]:
    """Every archive, checked (:func:`check_archives`), then loaded with its task's predictor."""
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    loaded = []
    for name, archive_file, model_type, task in check_archives(arguments):
        archive = load_archive(archive_file, cuda_device=cuda_device)
        archive.model.eval()
        predictor = Predictor.from_archive(archive, task.predictor)
        assert isinstance(predictor, JsonLinesPredictor)  # every task in TASKS names one of our predictors
        config = archive.config.as_dict(quiet=True)
        loaded.append(
            LoadedModel(
                name,
                task,
                archive_file,
                model_type,
                predictor,
                bilm_files(config),
                archive_scores(archive_path(archive_file), config),  # a shipped model's: its folder's
                learned_mixes(archive.model.named_parameters()),
            )
        )
    return loaded
