"""``allennlp srl-props``: a trained SRL model's predictions for a CoNLL file, in the props
format that the official scorer srl-eval.pl reads, plus the project's srl-eval score."""

import argparse
import contextlib
import sys
import time
from typing import TextIO

from allennlp.common.tqdm import Tqdm

from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, check_archive_task, check_output_file
from elmo_tasks.commands.registration import register_command
from elmo_tasks.counted_nouns import counted
from elmo_tasks.stopping import output_files_outcome, stopped_with_one_line
from elmo_tasks.tasks.srl.metric import SrlCounts, metric_line
from elmo_tasks.tasks.srl.props import write_props
from elmo_tasks.tasks.srl.reader import FORMATS, read_srl_sentences
from elmo_tasks.tasks.srl.sentence_prediction import predict_sentences

_fail = CommandError("srl-props")

DESCRIPTION = """Write the predicted props of every sentence of INPUT (a CoNLL-2005 file or release
folder, or a CoNLL-2012 *_gold_conll file) to OUTPUT, in input order: the first column copied from
the input, then one bracketed column per predicate. Score them with `srl-eval.pl GOLD_PROPS OUTPUT`;
the last line printed is the project's own score of the same predictions:
'precision P recall R f1 F' (fractions)."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive_file", help="model.tar.gz of an srl_elmo model")
    parser.add_argument(
        "input_file",
        help="CoNLL-2005 file or folder, or CoNLL-2012 *_gold_conll (suffixes such as '#holdout' work as in training)",
    )
    parser.add_argument("output_file", help="where to write the predicted props")
    parser.add_argument(
        "--gold-output",
        help="also write the input's gold props here (the file srl-eval.pl needs for CoNLL-2012 input)",
    )
    parser.add_argument(
        "--data-format", choices=sorted(FORMATS), help="format of INPUT (default: the one the model was trained on)"
    )
    add_option(parser, "--batch-size", type=int, default=64, help="predicates per batch")
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")


def _run(args: argparse.Namespace) -> None:
    """Ctrl-C or SIGTERM ends it with one line (:mod:`elmo_tasks.stopping`); the outputs are written
    under temporary names and renamed into place only when every sentence is in them."""
    outputs = [args.output_file, args.gold_output] if args.gold_output else [args.output_file]
    with stopped_with_one_line("srl-props", output_files_outcome(*outputs)):
        _predict(args)


def _predict(args: argparse.Namespace) -> None:
    if args.batch_size < 1:
        _fail("--batch-size must be at least 1")
    try:
        check_archive_task(args.archive_file, "srl-props", "srl")
        for path in filter(None, (args.output_file, args.gold_output)):
            check_output_file(path)
    except CommandPathError as error:
        _fail(str(error))
    started = time.time()
    try:
        archive = load_model_archive(args.archive_file, cuda_device=args.cuda_device)
    except ArchiveFileError as error:
        _fail(str(error))
    model = archive.model
    model.eval()
    reader = archive.validation_dataset_reader
    data_format = args.data_format or getattr(reader, "data_format", None)
    if data_format not in FORMATS:
        _fail(f"cannot tell the input format from the archive; pass --data-format ({', '.join(FORMATS)})")
    counts = SrlCounts()
    sentences = predicates = 0
    try:
        with contextlib.ExitStack() as files:
            output = _whole_text_file(files, args.output_file)
            gold_handle = _whole_text_file(files, args.gold_output) if args.gold_output else None
            stream = read_srl_sentences(args.input_file, data_format)
            for sentence, predicted in Tqdm.tqdm(
                predict_sentences(model, reader, stream, args.batch_size), desc="srl-props", unit=" sentences"
            ):
                write_props(output, predicted.targets, predicted.columns)
                if gold_handle is not None:
                    write_props(gold_handle, sentence.props.targets, sentence.props.columns)
                counts.add_sentence(sentence.props, predicted, sentence.where)
                sentences += 1
                predicates += len(predicted.columns)
    except (ValueError, OSError) as error:
        _fail(str(error))
    gold_note = f" and the gold props to {args.gold_output}" if args.gold_output else ""
    print(
        f"srl-props: wrote {counted(sentences, 'sentence')} ({counted(predicates, 'predicate')}) to "
        f"{args.output_file}{gold_note} "
        f"in {time.time() - started:.1f} s",
        file=sys.stderr,
    )
    print(metric_line(counts))


def _whole_text_file(files: contextlib.ExitStack, path: str) -> TextIO:
    """``path`` open for writing under a temporary name, renamed into place when ``files`` closes
    without an error (closed first), removed if it closes with one."""
    partial = files.enter_context(WholeFile(path))
    return files.enter_context(open(partial, "w", encoding="utf-8"))


SrlProps = register_command("srl-props", DESCRIPTION, "Predict SRL props for a CoNLL file.", _add_arguments, _run)
