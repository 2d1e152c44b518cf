"""Loading a task model for a component: any string ``load_archive`` takes, checked to be of the right task.

``model`` is what ``Predictor.from_path`` / ``load_archive`` accept: a ``model.tar.gz``, a serialization
folder, a URL, a shipped model's name (``elmo_tasks:pretrained/ner``, resolved here by
:func:`elmo_tasks.pretrained.catalogue.archive_path`, so no command start is needed). Whatever goes
wrong is one line naming the component and the archive: no model given, a missing or broken archive
(:func:`elmo_tasks.archive_errors.archive_problem`), a name of no shipped model, an archive of another
task (with the component that takes it), a GPU that is not there. A local archive's task is read from
its ``config.json`` before the model is loaded; any other's once it is.
Archives are extracted with the safe extraction every command uses (docs/ARCHIVE_SAFETY.md).
"""

import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from elmo_tasks.spacy_pipes.errors import ElmoPipeError

if TYPE_CHECKING:
    from allennlp.models.archival import Archive
    from allennlp.predictors import Predictor

#: The task predictors' names -> the component that takes such a model.
COMPONENTS: Dict[str, str] = {"ner": "elmo_ner", "srl": "elmo_srl", "coref": "elmo_coref", "sst5": "elmo_sst"}


def check_device(cuda_device: int, component: str) -> None:
    """ElmoPipeError unless ``cuda_device`` is -1 (the CPU) or a GPU torch can use."""
    import torch

    if isinstance(cuda_device, bool) or not isinstance(cuda_device, int) or cuda_device < -1:
        raise ElmoPipeError(f"{component}: cuda_device must be -1 (the CPU) or a GPU id from 0, got {cuda_device!r}")
    if cuda_device >= 0 and not torch.cuda.is_available():
        raise ElmoPipeError(
            f"{component}: cuda_device {cuda_device}: no GPU is available to torch here; use cuda_device -1 (the CPU)"
        )
    if cuda_device >= torch.cuda.device_count() > 0:
        raise ElmoPipeError(
            f"{component}: cuda_device {cuda_device}: there are only {torch.cuda.device_count()} GPUs (ids from 0)"
        )


def load_model(model: Optional[str], component: str, cuda_device: int, task: Optional[str] = None) -> "Archive":
    """The archive ``model`` names, loaded on ``cuda_device``; with ``task`` (a predictor's name) it must
    hold that task's model. Every failure the archive explains is one ElmoPipeError line."""
    if not isinstance(model, str) or not model:
        raise ElmoPipeError(
            f"{component}: no model given; name a trained model's archive, e.g. "
            f'nlp.add_pipe("{component}", config={{"model": "path/to/model.tar.gz"}})'
        )
    check_device(cuda_device, component)
    import elmo_tasks.plugin  # noqa: F401  (registers our models, readers and predictors)
    from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
    from elmo_tasks.commands.command_paths import CommandPathError, archive_model_type
    from elmo_tasks.pretrained.catalogue import archive_path
    from elmo_tasks.safe_archives import install_safe_extraction

    install_safe_extraction()
    try:
        path = archive_path(model)  # a shipped model's name (elmo_tasks:pretrained/ner): its archive
        if task is not None and os.path.exists(path):
            model_type = archive_model_type(path)
            if model_type is not None:
                check_task(model, model_type, component, task)
        archive = load_model_archive(path, cuda_device=cuda_device)
    except (ArchiveFileError, CommandPathError) as error:
        raise ElmoPipeError(f"{component}: {error}") from None
    if task is not None:
        check_task(model, archive.config["model"]["type"], component, task)
    return archive


def check_task(model: str, model_type: str, component: str, task: str) -> None:
    """ElmoPipeError unless the registered model type ``model_type`` is one of ``task``'s (its predictor)."""
    from elmo_tasks.commands.command_paths import TASK_COMMANDS, predictor_of

    found = predictor_of(model_type)
    if found == task:
        return
    wanted = TASK_COMMANDS[task].split(":")[0]
    if found is not None and found in TASK_COMMANDS:
        held = f"{TASK_COMMANDS[found].split(':')[0]} (`{model_type}`)"
    else:
        held = f"a `{model_type}` model, not one of elmo-tasks' task models"
    other = COMPONENTS.get(found or "")
    fix = f'; that one goes to nlp.add_pipe("{other}", ...)' if other else ""
    raise ElmoPipeError(f"{component}: {model} holds {held}; {component} needs {wanted} archive{fix}")


def task_predictor(
    model: Optional[str], component: str, task: str, cuda_device: int, **predictor_args: Any
) -> Tuple["Predictor", "Archive"]:
    """The task's predictor on the checked archive (``predictor_args``: its limits), and the archive."""
    from allennlp.predictors import Predictor

    archive = load_model(model, component, cuda_device, task)
    return Predictor.from_archive(archive, task, extra_args=predictor_args), archive
