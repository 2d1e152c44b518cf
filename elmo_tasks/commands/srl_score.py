"""``allennlp srl-score``: score two props files with the project's srl-eval metric."""

import argparse
import sys

from elmo_tasks.cli_options import CommandError
from elmo_tasks.commands.registration import register_command
from elmo_tasks.tasks.data_files import read_lines
from elmo_tasks.tasks.srl.metric import (
    EXCLUDED_LABELS,
    lines_srl_eval_reads,
    metric_line,
    score_props,
    srl_eval_percentages,
)
from elmo_tasks.tasks.srl.props import read_props

DESCRIPTION = """Score PREDICTED_PROPS against GOLD_PROPS (both in the CoNLL-2005 props format, plain or
.gz, the same sentences in the same order) as srl-eval.pl does. Prints one line per argument label,
then 'precision P recall R f1 F' (fractions) as the last line."""


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("gold_props", help="gold props file")
    parser.add_argument("predicted_props", help="predicted props file")


def _run(args: argparse.Namespace) -> None:
    try:
        gold, predicted = read_lines(args.gold_props), read_lines(args.predicted_props)
        counts = score_props(
            read_props(lines_srl_eval_reads(gold, args.gold_props), args.gold_props),
            read_props(lines_srl_eval_reads(predicted, args.predicted_props), args.predicted_props),
            args.gold_props,
            args.predicted_props,
        )
    except (ValueError, OSError) as error:
        CommandError("srl-score")(error)
    print(f"{'':10s} {'corr.':>6s} {'excess':>6s} {'missed':>6s} {'prec.':>6s} {'rec.':>6s} {'F1':>6s}")
    for label in counts.labels():
        if label in EXCLUDED_LABELS:
            continue
        numbers = counts.correct[label], counts.excess[label], counts.missed[label]
        p, r, f = srl_eval_percentages(*numbers)
        print(f"{label:10s} {numbers[0]:6d} {numbers[1]:6d} {numbers[2]:6d} {p:6.2f} {r:6.2f} {f:6.2f}")
    print(f"srl-score: {counts.propositions} propositions, {counts.perfect_propositions} perfect", file=sys.stderr)
    print(metric_line(counts))


SrlScore = register_command("srl-score", DESCRIPTION, "Score SRL props files (srl-eval).", _add_arguments, _run)
