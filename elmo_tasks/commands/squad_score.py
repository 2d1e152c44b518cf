"""``allennlp squad-score DATASET_JSON PREDICTIONS_JSON``: the official SQuAD v1.1 scores.

Scores a ``{question_id: answer_text}`` file against every question of a SQuAD v1.1 json file
(a ``#fold=K/N`` suffix scores one fold) with the official evaluation script's semantics, and
prints ``exact_match X f1 Y`` (percent) as the last line. Unanswered questions score 0 and are
counted; answers to ids not in the dataset are ignored and counted.
"""

import argparse
import json

from elmo_tasks.cli_options import CommandError
from elmo_tasks.commands.registration import register_command
from elmo_tasks.commands.squad_predict import gold_answers
from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.squad.metric import metric_line, score_predictions

_fail = CommandError("squad-score")

DESCRIPTION = """Score SQuAD v1.1 predictions ({question_id: answer} json) against a SQuAD v1.1
dataset file with the official evaluation semantics; the last line is 'exact_match X f1 Y'."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset_file", help="SQuAD v1.1 json (optionally ending in #fold=K/N)")
    parser.add_argument("predictions_file", help="json object {question_id: answer text}")


def _run(args: argparse.Namespace) -> None:
    try:
        with open(args.predictions_file, "r", encoding="utf-8") as handle:
            predictions = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        _fail(f"cannot read {args.predictions_file}: {error}")
    if not isinstance(predictions, dict) or not all(isinstance(v, str) for v in predictions.values()):
        _fail(f"{args.predictions_file}: expected a JSON object {{question_id: answer text}} with string answers")
    scores = score_predictions(gold_answers(args.dataset_file), predictions)
    print(
        f"squad-score: {counted(int(scores['questions']), 'question')} in {args.dataset_file}, {scores['unanswered']} "
        f"unanswered (scored 0), {counted(int(scores['unknown_ids']), 'prediction')} for unknown ids (ignored)"
    )
    print(metric_line(scores))


SquadScore = register_command(
    "squad-score", DESCRIPTION, "Official SQuAD v1.1 EM/F1 of a predictions file.", _add_arguments, _run
)
