"""The paths a command is given, checked before any work: one clear line for a wrong one.

Archives: an archive's ``config.json`` says which model it holds, so the check reads only that
file (from the ``model.tar.gz`` or the serialization folder) before the model is loaded. Each of
our models names its predictor (``default_predictor``), which says the task and so the command
that fits. An archive with a member that would be extracted outside its folder (or is a device)
is refused here too, before AllenNLP extracts it (:mod:`elmo_tasks.safe_archives`). Outputs: a
file path that is a folder, or a folder path under a file, is refused before the command computes
anything.
"""

import json
import os
import tarfile
import zlib
from typing import Mapping, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.models import Model

from elmo_tasks.archive_errors import ARCHIVE_EXPECTED, archive_problem
from elmo_tasks.atomic_files import unwritable_folder_errno, write_failure
from elmo_tasks.pretrained.catalogue import PretrainedModelError, archive_path
from elmo_tasks.safe_archives import UnsafeArchiveError, refuse_unsafe_members
from elmo_tasks.tasks.registry import TaskView

# predictor (the task) -> what the archive holds and the commands that use it ({archive} is its path), from each
# task's spec (archive_holds, archive_command in elmo_tasks/tasks/<task>/spec.py)
TASK_COMMANDS: Mapping[str, str] = TaskView(lambda spec: spec.archive_commands)


class CommandPathError(ValueError):
    """A path a command cannot use; the message names it, says what is wrong and what was expected."""


def archive_model_type(archive_file: str) -> Optional[str]:
    """The registered type of the model in ``archive_file`` (None for a URL, which AllenNLP fetches itself);
    a shipped model's name (``elmo_tasks:pretrained/ner``) is read from its archive."""
    try:
        archive_file = archive_path(archive_file)
    except PretrainedModelError as unknown:
        raise CommandPathError(str(unknown)) from None
    if "://" in archive_file:
        return None
    if not os.path.exists(archive_file):
        raise CommandPathError(f"{archive_file} does not exist; expected {ARCHIVE_EXPECTED}")
    try:
        if os.path.isdir(archive_file):
            with open(os.path.join(archive_file, "config.json"), encoding="utf-8") as handle:
                config = json.load(handle)
        else:
            with tarfile.open(archive_file) as archive:
                refuse_unsafe_members(archive, archive_file)  # reads the member list, as extractfile would
                member = archive.extractfile("config.json")
                if member is None:
                    raise KeyError("config.json")
                config = json.load(member)
    except UnsafeArchiveError as error:
        raise CommandPathError(str(error)) from None
    except (EOFError, zlib.error):  # a gzip stream cut short or damaged: say which
        raise CommandPathError(
            archive_problem(archive_file) or f"{archive_file} is corrupt; expected {ARCHIVE_EXPECTED}"
        ) from None
    except (tarfile.TarError, KeyError, OSError, ValueError):  # ValueError: JSON or UTF-8
        kind = "folder" if os.path.isdir(archive_file) else "file"
        raise CommandPathError(
            f"{archive_file} is not a model archive (a {kind} without a readable config.json); "
            f"expected {ARCHIVE_EXPECTED}"
        ) from None
    model = config.get("model") if isinstance(config, dict) else None
    model_type = model.get("type") if isinstance(model, dict) else None
    if not isinstance(model_type, str):
        raise CommandPathError(f"{archive_file}: its config.json names no model type; expected {ARCHIVE_EXPECTED}")
    return model_type


def predictor_of(model_type: str) -> Optional[str]:
    """The default predictor of the registered model type ``model_type`` (None: none, or not registered)."""
    try:
        return getattr(Model.resolve_class_name(model_type)[0], "default_predictor", None)
    except ConfigurationError:  # not a registered model
        return None


def describe_archive(archive_file: str, model_type: str) -> str:
    """What the archive holds, and which commands use it."""
    commands = TASK_COMMANDS.get(predictor_of(model_type) or "")
    if commands is not None:
        return f"`{model_type}`, {commands.format(archive=archive_file)}"
    if model_type == "bilm_language_model":
        return f"`{model_type}`, a biLM language model: use `allennlp export-bilm` (then `allennlp bilm-perplexity`)"
    return f"a `{model_type}` model, not one of elmo-tasks' task models"


def check_archive_task(archive_file: str, command: str, wanted_predictor: str) -> None:
    """Raises CommandPathError unless ``archive_file`` is an archive of the task of ``wanted_predictor``."""
    model_type = archive_model_type(archive_file)
    if model_type is None or predictor_of(model_type) == wanted_predictor:
        return
    wanted = TASK_COMMANDS[wanted_predictor].split(":")[0]
    raise CommandPathError(
        f"{archive_file} holds {describe_archive(archive_file, model_type)}; "
        f"`allennlp {command}` needs {wanted} archive"
    )


def check_output_file(path: str) -> None:
    """Raises CommandPathError when ``path`` cannot become a file: it is a folder, or lies under a file."""
    if os.path.isdir(path):
        raise CommandPathError(f"{path} is a folder; expected the path of a file to write")
    _check_writable_folder(os.path.dirname(os.path.abspath(path)), path)


def check_output_folder(path: str, holds: str) -> None:
    """Raises CommandPathError when ``path`` cannot become a folder (``holds``: what is written into it)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandPathError(
            f"{path} is a file; expected a folder to write {holds} into (it is created if it does not exist)"
        )
    _check_writable_folder(path, path)


def _check_writable_folder(folder: str, path: str) -> None:
    """The nearest existing folder at or above ``folder`` must be a folder we may write in."""
    existing = os.path.abspath(folder)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise CommandPathError(f"cannot write {path}: {existing} is a file, not a folder")
    code = unwritable_folder_errno(existing)
    if code is not None:
        raise CommandPathError(f"{write_failure(path, code)} (checked in {existing} before any work)")
