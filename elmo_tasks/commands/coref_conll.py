"""``allennlp coref-conll ARCHIVE INPUT OUTPUT``: a trained coreference model's clusters in CoNLL-2012 format.

Copies INPUT (a CoNLL-2012 file, plain or .gz) line for line to OUTPUT, replacing the last
column of every token line with the predicted clusters in bracket notation (``(12``, ``12)``,
``(12)``, ``(3)|(12``, ``-``), so the official ``scorer.pl all INPUT OUTPUT`` can score it. Then it
scores OUTPUT against INPUT exactly as ``allennlp coref-score INPUT OUTPUT`` does (reading the
written file back, so both see the same mentions) and prints ``muc F bcub F ceafe F avg F`` as
its last line.

Two mentions of one predicted cluster that cross (neither inside the other) cannot be told apart
in bracket notation; such pairs are counted and reported (the scored numbers are those of the
file as written).
"""

import argparse
import functools
import logging
import sys
import time
from typing import Any, Dict, List, Sequence, Tuple

import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.tqdm import Tqdm
from allennlp.data import DatasetReader

from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, check_archive_task, check_output_file
from elmo_tasks.commands.coref_score import report, score_files
from elmo_tasks.commands.registration import register_command
from elmo_tasks.counted_nouns import counted
from elmo_tasks.stopping import writing_output_file
from elmo_tasks.tasks.coref.conll import coref_cells, parse_conll_lines, replace_last_column
from elmo_tasks.tasks.coref.metric import ResponseRejected
from elmo_tasks.tasks.coref.predictor import MAX_DOCUMENT_TOKENS, MAX_PADDED_TOKENS, check_document_size
from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.input_limits import InputTooLong

_fail = CommandError("coref-conll")

logger = logging.getLogger(__name__)


def crossing_pairs(clusters: Sequence[Sequence[Tuple[int, int]]]) -> int:
    """Pairs of mentions in one cluster that overlap without nesting (ambiguous in bracket notation)."""
    count = 0
    for cluster in clusters:
        for i, (s1, e1) in enumerate(cluster):
            for s2, e2 in cluster[i + 1 :]:
                if s1 < s2 <= e1 < e2 or s2 < s1 <= e2 < e1:
                    count += 1
    return count


def predict_file(
    archive_file: str, input_file: str, output_file: str, cuda_device: int = -1, overrides: str = ""
) -> Tuple[int, int]:
    """Writes OUTPUT; returns (documents, crossing same-cluster mention pairs)."""
    archive = load_model_archive(archive_file, cuda_device=cuda_device, overrides=overrides)
    model = archive.model.eval()
    reader_params = archive.config.get("validation_dataset_reader", None) or archive.config["dataset_reader"]
    reader_config = reader_params.duplicate().as_dict()
    reader_config.pop("max_sentences", None)  # whole documents, always
    reader = DatasetReader.from_params(Params(reader_config))
    lines = list(read_lines(input_file))
    documents = list(parse_conll_lines(lines, input_file))
    crossing = 0
    output_lines = list(lines)
    for document in documents:  # all checked before any is predicted
        where = f"{input_file}: document {document.name!r}"
        check_document_size(
            document.sentences,
            MAX_DOCUMENT_TOKENS,
            MAX_PADDED_TOKENS,
            "coref-conll",
            None,
            functools.partial(str, where),
        )
    with torch.no_grad():
        for document in Tqdm.tqdm(documents, desc="coref-conll"):
            instance = reader.text_to_instance(document.sentences, document.speakers, document.genre, document.name)
            reader.apply_token_indexers(instance)
            # AllenNLP declares numpy arrays, but outputs that are lists (coref's clusters) stay lists
            outputs: Dict[str, Any] = model.forward_on_instance(instance)
            clusters: List[List[Tuple[int, int]]] = outputs["clusters"]
            crossing += crossing_pairs(clusters)
            for line_number, cell in zip(document.token_lines, coref_cells(document.num_tokens, clusters), strict=True):
                output_lines[line_number - 1] = replace_last_column(lines[line_number - 1], cell)
    with WholeFile(output_file) as partial, open(partial, "w", encoding="utf-8") as handle:
        handle.writelines(output_lines)  # renamed onto output_file when whole
    return len(documents), crossing


#: The command's line in ``allennlp --help``.
SUMMARY = "Write a coreference model's predictions as a CoNLL-2012 file and score it."


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive_file", help="model.tar.gz of a coref_elmo model")
    parser.add_argument("input_file", help="CoNLL-2012 file to annotate (plain or .gz); also the key for scoring")
    parser.add_argument("output_file", help="where to write the copy with predicted clusters")
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")
    parser.add_argument("-o", "--overrides", type=str, default="", help="JSON overrides of the archived config")


def _predict(args: argparse.Namespace) -> None:
    start = time.monotonic()
    try:
        check_archive_task(args.archive_file, "coref-conll", "coref")
        check_output_file(args.output_file)
    except CommandPathError as error:
        _fail(str(error))
    try:
        documents, crossing = predict_file(
            args.archive_file, args.input_file, args.output_file, args.cuda_device, args.overrides
        )
        scores = score_files(args.input_file, args.output_file)
    except (ArchiveFileError, DataFileError, ResponseRejected, ConfigurationError, InputTooLong, OSError) as error:
        _fail(str(error))
    lines = report(scores)
    print("\n".join(lines[:-1]))
    if crossing:
        print(
            f"coref-conll: {counted(crossing, 'pair')} of crossing mentions in one predicted cluster could not be "
            "written "
            "unambiguously; the scores are those of the file as written",
            file=sys.stderr,
        )
    print(
        f"coref-conll: wrote {counted(documents, 'document')} to {args.output_file} in "
        f"{time.monotonic() - start:.1f} s",
        file=sys.stderr,
    )
    print(lines[-1])


CorefConll = register_command(
    "coref-conll", __doc__, SUMMARY, _add_arguments, writing_output_file("coref-conll", _predict)
)
