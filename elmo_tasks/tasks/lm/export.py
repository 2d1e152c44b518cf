"""Getting the original-format biLM out of training: a trainer callback and ``allennlp export-bilm``."""
import argparse
import logging
import os
from typing import Any, Dict, Optional

from allennlp.commands.subcommand import Subcommand
from allennlp.training.callbacks.callback import TrainerCallback

from elmo_tasks.tasks.lm.pretrained import export_language_model, find_bilm

logger = logging.getLogger(__name__)

DTYPES = ("float32", "float16")


def export_model(model, directory: str, dtype: str = "float32") -> str:
    """Export the biLM in ``model`` (with its softmax and vocabulary when it is a language model)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    softmax = getattr(model, "softmax", None)
    namespace = getattr(model, "target_namespace", "lm_targets")
    return export_language_model(find_bilm(model), directory, dtype, softmax, getattr(model, "vocab", None), namespace)


@TrainerCallback.register("export_bilm")
class ExportBilmCallback(TrainerCallback):
    """After a successful run, write ``serialization_dir/<subdirectory>/`` (``options.json`` +
    ``weights.hdf5``, the best epoch's weights, which the trainer has restored by then)."""

    def __init__(self, serialization_dir: str, subdirectory: str = "elmo", dtype: str = "float32") -> None:
        super().__init__(serialization_dir)
        if dtype not in DTYPES:
            raise ValueError(f"export_bilm dtype must be one of {DTYPES}, got {dtype!r}")
        self.directory = os.path.join(serialization_dir, subdirectory)
        self.dtype = dtype

    def on_end(self, trainer, metrics: Optional[Dict[str, Any]] = None, epoch: Optional[int] = None,
               is_primary: bool = True, **kwargs) -> None:
        if not is_primary:
            return
        if metrics is None:  # training raised: nothing finished to export
            logger.warning("training did not finish; the biLM was not exported")
            return
        export_model(trainer.model, self.directory, self.dtype)


@Subcommand.register("export-bilm")
class ExportBilm(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = ("Write the biLM of a model archive as the original ELMo files (options.json + "
                       "weights.hdf5; softmax.npz + vocabulary/ for a language model).")
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("archive_file", help="model.tar.gz (or a serialization directory)")
        subparser.add_argument("output_dir", help="folder to write the files into")
        subparser.add_argument("--float16", action="store_true", help="store weights as float16 (half the size)")
        subparser.add_argument("--weights-file", help="a checkpoint (e.g. model_state_e9.th in a serialization "
                               "directory) to export instead of the archive's best weights: a run that is "
                               "still going, or was stopped, can be exported this way")
        subparser.add_argument("--cuda-device", type=int, default=-1)
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    from allennlp.models.archival import load_archive

    archive = load_archive(args.archive_file, cuda_device=args.cuda_device, weights_file=args.weights_file)
    directory = export_model(archive.model, args.output_dir, "float16" if args.float16 else "float32")
    print(f"wrote {os.path.join(directory, 'options.json')} and {os.path.join(directory, 'weights.hdf5')}")
