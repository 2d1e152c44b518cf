"""`allennlp export-bilm`: the original ELMo files from a model archive or a checkpoint."""

import argparse
import os
from typing import List

from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
from elmo_tasks.atomic_files import failed_write_errno, write_failure
from elmo_tasks.bilm.errors import WeightFileError
from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, archive_model_type, check_output_folder
from elmo_tasks.commands.registration import register_command
from elmo_tasks.stopping import stopped_with_one_line

_fail = CommandError("export-bilm")


DESCRIPTION = (
    "Write the biLM of a model archive as the original ELMo files (options.json + "
    "weights.hdf5; softmax.npz + vocabulary/ for a language model)."
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive_file", help="model.tar.gz (or a serialization directory)")
    parser.add_argument("output_dir", help="folder to write the files into")
    parser.add_argument("--float16", action="store_true", help="store weights as float16 (half the size)")
    parser.add_argument(
        "--weights-file",
        help="a checkpoint (e.g. model_state_e9.th in a serialization "
        "directory) to export instead of the archive's best weights: a run that is "
        "still going, or was stopped, can be exported this way",
    )
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")


def _export_from_args(args: argparse.Namespace) -> None:
    """Ctrl-C or SIGTERM ends it with one line (:mod:`elmo_tasks.stopping`): the files are written into
    a hidden folder beside OUTPUT_DIR and moved in only when all are complete, so a stopped export
    leaves an earlier one there as it was."""
    finished: List[bool] = []  # set when the files are in place, in case a signal arrives just after

    def outcome() -> str:
        if finished:
            return f"the export to {args.output_dir} was complete before it stopped; nothing to run again"
        return f"nothing was written to {args.output_dir} ({_earlier(args.output_dir)}); run the same command again"

    with stopped_with_one_line("export-bilm", outcome):
        _export(args, finished)


def _earlier(output_dir: str) -> str:
    if os.path.isfile(os.path.join(output_dir, "weights.hdf5")):
        return "an earlier export there is unchanged"
    return "it holds no export"


def _export(args: argparse.Namespace, finished: List[bool]) -> None:
    from allennlp.common.checks import ConfigurationError

    from elmo_tasks.tasks.lm.export import export_model

    try:
        archive_model_type(args.archive_file)
        check_output_folder(args.output_dir, "options.json and weights.hdf5")
        if args.weights_file is not None and not os.path.isfile(args.weights_file):
            raise CommandPathError(
                f"--weights-file {args.weights_file} is not a file; expected a checkpoint such as "
                "model_state_e9.th in the serialization folder"
            )
    except CommandPathError as error:
        _fail(str(error))
    try:
        archive = load_model_archive(args.archive_file, cuda_device=args.cuda_device, weights_file=args.weights_file)
    except ArchiveFileError as error:
        _fail(str(error))
    try:
        directory = export_model(archive.model, args.output_dir, "float16" if args.float16 else "float32")
    except ConfigurationError as error:  # no biLM in the model
        _fail(f"{args.archive_file}: {error}; export-bilm needs a biLM language model or a model using ELMo")
    except WeightFileError as error:
        _fail(str(error))
    except (OSError, RuntimeError) as error:  # RuntimeError: h5py's, for a failed write
        code = failed_write_errno(error)
        if code is None:
            raise
        _fail(f"{write_failure(args.output_dir, code)} ({_earlier(args.output_dir)})")
    finished.append(True)
    written = ["options.json", "weights.hdf5"] + [
        n for n in ("softmax.npz", "vocabulary") if os.path.exists(os.path.join(directory, n))
    ]
    print(f"wrote {', '.join(written)} to {directory}")


ExportBilm = register_command("export-bilm", DESCRIPTION, DESCRIPTION, _add_arguments, _export_from_args)
