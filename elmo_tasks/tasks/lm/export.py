"""Getting the original-format biLM out of training: ``export_model`` and the trainer callback.

The ``allennlp export-bilm`` command that does the same for an archive lives in
``elmo_tasks/commands/export_bilm.py``.
"""

import logging
import os
from typing import Any, Dict, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks.callback import TrainerCallback

from elmo_tasks.atomic_files import WholeFolder
from elmo_tasks.tasks.lm.pretrained import export_language_model, find_bilm

logger = logging.getLogger(__name__)

DTYPES = ("float32", "float16")


def export_model(model, directory: str, dtype: str = "float32") -> str:
    """Export the biLM in ``model`` (with its softmax and vocabulary when it is a language model).

    The files are written into a hidden folder beside ``directory`` and moved in only when all of them
    are complete (:class:`~elmo_tasks.atomic_files.WholeFolder`): an interrupted or failed export leaves
    an earlier export in ``directory`` as it was, never a new ``options.json`` beside old weights."""
    _check_dtype(dtype)
    bilm = find_bilm(model)  # no biLM: refused before anything is created
    softmax = getattr(model, "softmax", None)
    namespace = getattr(model, "target_namespace", "lm_targets")
    with WholeFolder(directory) as partial:
        export_language_model(bilm, str(partial), dtype, softmax, getattr(model, "vocab", None), namespace)
    return directory


def _check_dtype(dtype: str) -> None:
    if dtype not in DTYPES:
        raise ConfigurationError(f"export_bilm dtype must be one of {DTYPES}, got {dtype!r}")


@TrainerCallback.register("export_bilm")
class ExportBilmCallback(TrainerCallback):
    """After a successful run, write ``serialization_dir/<subdirectory>/`` (``options.json`` +
    ``weights.hdf5``, the best epoch's weights, which the trainer has restored by then)."""

    def __init__(self, serialization_dir: str, subdirectory: str = "elmo", dtype: str = "float32") -> None:
        super().__init__(serialization_dir)
        _check_dtype(dtype)
        self.directory = os.path.join(serialization_dir, subdirectory)
        self.dtype = dtype

    def on_end(
        self,
        trainer,
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        if not is_primary:
            return
        if metrics is None:  # training raised: nothing finished to export
            logger.warning("training did not finish; the biLM was not exported")
            return
        export_model(trainer.model, self.directory, self.dtype)
