"""The biLM of a trained model, loaded so that the model's archive survives a move.

A model's biLM weights are parameters of the model, so ``model.tar.gz`` holds them in its state
dict; to rebuild the model, loading needs only the biLM's ``options.json``. So, when a model is
built with a ``serialization_dir`` (AllenNLP passes it while training and while loading an
archive):

- training: the biLM is read from ``options_file`` + ``weight_file`` as given, and its options
  are copied to ``serialization_dir/elmo_bilm/`` (``include_in_archive: ["elmo_bilm"]`` in the
  config puts that folder into ``model.tar.gz``);
- loading: when that copy is there, the biLM is built from it and its weights are left to the
  state dict, so neither original file is needed: the archive alone predicts.

``options_file`` / ``weight_file`` may be package references (``elmo_tasks:pretrained/...``, see
:mod:`elmo_tasks.pretrained`), which hold no path of the machine they were written on.
"""

import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import Optional

from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.model import BiLM
from elmo_tasks.bilm.references import is_package_reference, resolve_bilm_file
from elmo_tasks.bilm.weights import load_bilm

logger = logging.getLogger(__name__)

ARCHIVE_FOLDER = "elmo_bilm"


def archived_options_path(serialization_dir: str, options_file: str) -> Path:
    """Where the copy of ``options_file`` lives in a serialization directory (or an unpacked archive).

    The name is derived from the option's value as written in the config, which is what a loaded
    config holds again, so several biLMs in one model each find their own copy.
    """
    digest = hashlib.sha1(options_file.encode("utf-8")).hexdigest()[:12]
    return Path(serialization_dir) / ARCHIVE_FOLDER / f"options-{digest}.json"


def load_model_bilm(
    options_file: str, weight_file: Optional[str], serialization_dir: Optional[str] = None, stateful: bool = False
) -> BiLM:
    """The biLM of a model, built as the module docstring says."""
    if serialization_dir is not None:
        copy = archived_options_path(serialization_dir, options_file)
        if copy.is_file():
            logger.info(
                "biLM options from %s (kept with the model); its weights come from the model's state dict", copy
            )
            return load_bilm(str(copy), None, stateful=stateful)
    resolved_options = resolve_bilm_file(options_file)
    try:
        bilm = load_bilm(resolved_options, resolve_bilm_file(weight_file) if weight_file else None, stateful=stateful)
    except BilmError as err:
        trained = serialization_dir is not None and any(
            (Path(serialization_dir) / name).is_file() for name in ("weights.th", "best.th")
        )
        if not trained:  # training, or no model around: the plain error says it all
            raise
        raise BilmError(
            f"{err}. The model in {serialization_dir} does not carry its biLM options "
            f"({ARCHIVE_FOLDER}/ is missing: it "
            f'was trained without include_in_archive: ["{ARCHIVE_FOLDER}"]); put the biLM back at that path, or point '
            "options_file (and weight_file) at a copy with -o / --overrides"
        ) from None
    if serialization_dir is not None:
        try:
            _keep_copy(resolved_options, archived_options_path(serialization_dir, options_file))
        except OSError as err:  # e.g. evaluating an older, read-only run: it loads fine without the copy
            logger.warning("could not keep a copy of the biLM options in %s: %s", serialization_dir, err)
            return bilm
        if not is_package_reference(options_file):
            _warn_unless_archived(serialization_dir, options_file)
    return bilm


def _keep_copy(options_path: str, copy: Path) -> None:
    copy.parent.mkdir(parents=True, exist_ok=True)
    with WholeFile(copy) as partial:
        shutil.copyfile(options_path, partial)


def _warn_unless_archived(serialization_dir: str, options_file: str) -> None:
    """Say so when the config (already written by ``allennlp train``) will not archive the copy."""
    config_path = Path(serialization_dir) / "config.json"
    try:
        included = json.loads(config_path.read_text(encoding="utf-8")).get("include_in_archive") or []
    except (OSError, ValueError):
        return
    if ARCHIVE_FOLDER not in included:
        logger.warning(
            'model.tar.gz will need the biLM at %s when it is loaded: add include_in_archive: ["%s"] to the config '
            "to keep its options inside the archive",
            options_file,
            ARCHIVE_FOLDER,
        )
