"""``allennlp squad-predict ARCHIVE DATASET_JSON OUTPUT_JSON``: official-format SQuAD predictions.

Answers every question of a SQuAD v1.1 json file (a ``#fold=K/N`` suffix selects a fold, see
``elmo_tasks/tasks/squad/reader.py``) with a trained SQuAD model's archive (``squad_model``), writes
``{question_id: answer_text}`` (the format the official evaluation script reads), scores it
with the official v1.1 semantics and prints ``exact_match X f1 Y`` (percent) as its last line.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Dict, List, Tuple

from allennlp.common import Tqdm
from allennlp.data import Instance
from allennlp.predictors import Predictor

from elmo_tasks.archive_errors import ArchiveFileError, load_model_archive
from elmo_tasks.atomic_files import WholeFile, write_failure
from elmo_tasks.cli_options import CommandError, add_option
from elmo_tasks.commands.command_paths import CommandPathError, check_archive_task, check_output_file
from elmo_tasks.commands.registration import register_command
from elmo_tasks.counted_nouns import counted
from elmo_tasks.stopping import writing_output_file
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.data_selection import DataPathError
from elmo_tasks.tasks.input_limits import InputTooLong
from elmo_tasks.tasks.squad.articles import load_articles
from elmo_tasks.tasks.squad.metric import metric_line, score_predictions
from elmo_tasks.tasks.squad.names import PREDICTOR
from elmo_tasks.tasks.squad.predictor import SquadQaPredictor
from elmo_tasks.tasks.squad.reader import iter_questions

_fail = CommandError("squad-predict")

DESCRIPTION = """Predict an answer for every question of a SQuAD v1.1 json file with a trained
model archive; write {question_id: answer} (official predictions format) and print
'exact_match X f1 Y' (official v1.1 scoring, percent) as the last line."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive_file", help="model.tar.gz of a SQuAD model (squad_model) run")
    parser.add_argument("dataset_file", help="SQuAD v1.1 json (optionally ending in #fold=K/N)")
    parser.add_argument("output_file", help="where to write the {question_id: answer} json")
    add_option(parser, "--batch-size", type=int, default=32, help="questions per batch")
    add_option(parser, "--cuda-device", type=int, default=-1, help="GPU id, or -1 for the CPU")
    parser.add_argument(
        "-o", "--overrides", type=str, default="", help="a JSON structure to override the archive's config"
    )


def gold_answers(dataset_file: str) -> List[Tuple[str, List[str]]]:
    """``(question_id, gold answer texts)`` for every question of the (fold of the) file, in order."""
    questions = iter_questions(load_articles(dataset_file), dataset_file)
    return [(question.question_id, question.answer_texts) for question in questions]


def _predict(args: argparse.Namespace) -> None:
    if args.batch_size < 1:
        _fail("--batch-size must be at least 1")
    try:
        check_archive_task(args.archive_file, "squad-predict", PREDICTOR)
        check_output_file(args.output_file)
    except CommandPathError as error:
        _fail(str(error))
    started = time.time()
    try:
        gold = gold_answers(args.dataset_file)
    except (DataFileError, DataPathError, OSError) as error:
        _fail(str(error))
    try:
        archive = load_model_archive(args.archive_file, cuda_device=args.cuda_device, overrides=args.overrides)
    except ArchiveFileError as error:
        _fail(str(error))
    predictor = Predictor.from_archive(archive, PREDICTOR)
    assert isinstance(predictor, SquadQaPredictor)  # the class registered as PREDICTOR
    instances = list(predictor._dataset_reader.read(args.dataset_file))
    try:  # all checked before any is predicted
        for instance in instances:
            predictor.check_instance(instance)
    except InputTooLong as error:
        _fail(f"{args.dataset_file}: {error}")
    predictions: Dict[str, str] = {}
    batches = range(0, len(instances), args.batch_size)
    for offset in Tqdm.tqdm(batches, desc="squad-predict", total=len(batches)):
        batch: List[Instance] = instances[offset : offset + args.batch_size]
        for output in predictor.predict_batch_instance(batch):
            predictions[output["question_id"]] = output["answer"]
    try:
        Path(args.output_file).parent.mkdir(parents=True, exist_ok=True)
        with WholeFile(args.output_file) as partial, open(partial, "w", encoding="utf-8") as handle:
            json.dump(predictions, handle, ensure_ascii=False)
    except OSError as error:
        _fail(write_failure(args.output_file, error.errno or 0))
    scores = score_predictions(gold, predictions)
    answers, questions = counted(len(predictions), "answer"), counted(int(scores["questions"]), "question")
    print(
        f"squad-predict: wrote {answers} for {questions} of "
        f"{args.dataset_file} to {args.output_file} in {time.time() - started:.1f} s"
    )
    print(metric_line(scores))


SquadPredict = register_command(
    "squad-predict",
    DESCRIPTION,
    "Official-format SQuAD predictions and scores from a model archive.",
    _add_arguments,
    writing_output_file("squad-predict", _predict),
)
