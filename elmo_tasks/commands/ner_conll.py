"""``allennlp ner-conll ARCHIVE INPUT OUTPUT``: a trained NER model's tags for a CoNLL-2003 file, as conlleval reads it.

Copies INPUT (CoNLL-2003 columns: word, POS tag, chunk tag, NER tag; plain or .gz) line by line
to OUTPUT with one column added: the predicted tag in CoNLL-2003's IOB1 (``O`` on ``-DOCSTART-``
lines). Columns are joined by single spaces, conlleval's delimiter, so the official
``conlleval < OUTPUT`` scores the file as it stands. The model's own span F1 over the same
sentences (what ``allennlp evaluate`` reports) is printed in conlleval's layout, with
``precision P recall R f1 F`` (fractions) as the last line.
"""

import argparse
import sys
import time
from typing import Dict, List, Tuple

import torch
from allennlp.common.tqdm import Tqdm
from allennlp.data import Batch, Instance
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.fields import SequenceLabelField
from allennlp.data.tokenizers import Token
from allennlp.models import Model
from allennlp.nn.util import move_to_device

from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, check_archive_task, check_output_file
from elmo_tasks.commands.registration import register_command
from elmo_tasks.counted_nouns import counted
from elmo_tasks.stopping import writing_output_file
from elmo_tasks.tasks.data_files import DataFileError, read_lines
from elmo_tasks.tasks.instance_fields import field_of
from elmo_tasks.tasks.ner.predictor import MAX_SENTENCE_TOKENS
from elmo_tasks.tasks.ner.reader import COLUMNS, DOCUMENT_START, check_conll2003_file

_fail = CommandError("ner-conll")

#: A sentence: the 0-based numbers of its token lines and those lines' columns.
Sentence = Tuple[List[int], List[List[str]]]


def conll2003_sentences(lines: List[str]) -> List[Sentence]:
    """The sentences of a checked CoNLL-2003 file, split where AllenNLP's ``conll2003`` reader
    splits them: at blank lines and ``-DOCSTART-`` lines."""
    sentences: List[Sentence] = []
    numbers: List[int] = []
    columns: List[List[str]] = []
    for number, line in enumerate(lines):
        fields = line.split()
        if fields and fields[0] != DOCUMENT_START:
            numbers.append(number)
            columns.append(fields)
        elif numbers:
            sentences.append((numbers, columns))
            numbers, columns = [], []
    return sentences + ([(numbers, columns)] if numbers else [])


def conlleval_lines(lines: List[str], sentences: List[Sentence], predicted: List[List[str]]) -> List[str]:
    """``lines`` with each token's predicted tag as a last column, single-space separated;
    ``-DOCSTART-`` lines get ``O`` (and CoNLL-2003's four columns if they had others) and blank
    lines stay blank."""
    tags: Dict[int, str] = {}
    for (numbers, _), sentence_tags in zip(sentences, predicted, strict=True):
        tags.update(zip(numbers, sentence_tags, strict=True))
    written = []
    for number, line in enumerate(lines):
        fields = line.split()
        if fields and fields[0] == DOCUMENT_START and len(fields) != len(COLUMNS):
            fields = [DOCUMENT_START, "-X-", "-X-", "O"]  # conlleval stops at a line with other columns
        written.append(" ".join([*fields, tags.get(number, "O")]) + "\n" if fields else "\n")
    return written


def _check_lengths(input_file: str, sentences: List[Sentence]) -> None:
    for numbers, columns in sentences:
        if len(columns) > MAX_SENTENCE_TOKENS:
            _fail(
                f"{input_file}, line {numbers[0] + 1}: a sentence of {len(columns):,} tokens, more than "
                f"ner-conll's limit of {MAX_SENTENCE_TOKENS:,}; split it with a blank line"
            )


def _check_tag_types(input_file: str, sentences: List[Sentence], instances: List[Instance], model: Model) -> None:
    """Every gold tag must be one the model has (AllenNLP would stop at it with a KeyError naming no line)."""
    namespace: str = getattr(model, "label_namespace", "labels")
    known = model.vocab.get_token_to_index_vocabulary(namespace)
    for (numbers, columns), instance in zip(sentences, instances, strict=True):
        labels = field_of(instance, "tags", SequenceLabelField).labels
        for number, fields, label in zip(numbers, columns, labels, strict=True):
            if label not in known:
                types = ", ".join(sorted({tag.split("-", 1)[1] for tag in known if "-" in tag}))
                _fail(
                    f"{input_file}, line {number + 1}: the NER tag {fields[3]!r} is of a type this model was not "
                    f"trained on (its types: {types}); score it on data with those types"
                )


def predict_file(
    archive_file: str, input_file: str, output_file: str, batch_size: int, cuda_device: int
) -> Tuple[int, int, Dict[str, float]]:
    """Writes OUTPUT; returns (sentences, tokens, the model's span metrics over them)."""
    check_conll2003_file(input_file)
    lines = list(read_lines(input_file))
    sentences = conll2003_sentences(lines)
    if not sentences:
        _fail(f"{input_file} holds no sentence; expected CoNLL-2003 lines ({', '.join(COLUMNS)})")
    _check_lengths(input_file, sentences)
    archive = load_model_archive(archive_file, cuda_device=cuda_device)
    model = archive.model.eval()
    reader = archive.validation_dataset_reader
    if not isinstance(reader, Conll2003DatasetReader):
        _fail(f"{archive_file}: its dataset reader is not `ner_reader` or `conll2003`, so it cannot read {input_file}")
    instances: List[Instance] = [
        reader.text_to_instance([Token(fields[0]) for fields in columns], ner_tags=[fields[3] for fields in columns])
        for _, columns in sentences
    ]
    for instance in instances:
        reader.apply_token_indexers(instance)
    if "tags" not in instances[0].fields:
        _fail(f"{archive_file}: its dataset reader does not read the NER column (its tag_label is not 'ner')")
    _check_tag_types(input_file, sentences, instances, model)
    predicted: List[List[str]] = [[] for _ in instances]
    by_length = sorted(range(len(instances)), key=lambda index: len(sentences[index][1]))
    model.get_metrics(reset=True)
    with torch.no_grad():
        for start in Tqdm.tqdm(range(0, len(by_length), batch_size), desc="ner-conll", unit=" batches"):
            batch = by_length[start : start + batch_size]
            tensors = Batch([instances[index] for index in batch])
            tensors.index_instances(model.vocab)
            # the model's forward itself (not forward_on_instances, which warns that the loss has no batch rows)
            output = model.make_output_human_readable(model(**move_to_device(tensors.as_tensor_dict(), cuda_device)))
            for index, tags in zip(batch, output.get("iob1_tags", output["tags"]), strict=True):
                predicted[index] = list(tags)
    with WholeFile(output_file) as partial, open(partial, "w", encoding="utf-8") as handle:
        handle.writelines(conlleval_lines(lines, sentences, predicted))  # renamed onto output_file when whole
    return len(sentences), sum(len(columns) for _, columns in sentences), model.get_metrics(reset=True)


def report(metrics: Dict[str, float]) -> List[str]:
    """conlleval's layout (percentages, two decimals): the overall line, one line per type, then
    the fractions."""

    def scores(name: str) -> str:
        precision, recall, f1 = (100 * metrics[f"{kind}-{name}"] for kind in ("precision", "recall", "f1-measure"))
        return f"precision: {precision:6.2f}%; recall: {recall:6.2f}%; FB1: {f1:6.2f}"

    types = sorted(
        key[len("f1-measure-") :] for key in metrics if key.startswith("f1-measure-") and key != "f1-measure-overall"
    )
    overall = [metrics[f"{kind}-overall"] for kind in ("precision", "recall", "f1-measure")]
    return [
        f"overall: {scores('overall')}",
        *(f"{name:>17}: {scores(name)}" for name in types),
        "precision {:.4f} recall {:.4f} f1 {:.4f}".format(*overall),
    ]


#: The command's line in ``allennlp --help``.
SUMMARY = "Write a NER model's tags for a CoNLL-2003 file, for conlleval, and score them."


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive_file", help="model.tar.gz of a NER model (ner_model) run")
    parser.add_argument("input_file", help="CoNLL-2003 file to tag (plain or .gz); its NER column is the gold")
    parser.add_argument("output_file", help="where to write the copy with the predicted tags as a last column")
    add_option(parser, "--batch-size", type=int, default=64, help="sentences per batch")
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")


def _predict(args: argparse.Namespace) -> None:
    if args.batch_size < 1:
        _fail("--batch-size must be at least 1")
    started = time.monotonic()
    try:
        check_archive_task(args.archive_file, "ner-conll", "ner")
        check_output_file(args.output_file)
    except CommandPathError as error:
        _fail(str(error))
    try:
        sentences, tokens, metrics = predict_file(
            args.archive_file, args.input_file, args.output_file, args.batch_size, args.cuda_device
        )
    except (ArchiveFileError, DataFileError, OSError) as error:
        _fail(str(error))
    print(
        f"ner-conll: wrote {counted(sentences, 'sentence')} ({counted(tokens, 'token')}) to {args.output_file} "
        f"in {time.monotonic() - started:.1f} s; score it with `conlleval < {args.output_file}`",
        file=sys.stderr,
    )
    print("\n".join(report(metrics)))


NerConll = register_command("ner-conll", __doc__, SUMMARY, _add_arguments, writing_output_file("ner-conll", _predict))
