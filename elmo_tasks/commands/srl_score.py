"""``allennlp srl-score``: score two props files with the project's srl-eval metric."""

import argparse
import gzip
import sys

from allennlp.commands.subcommand import Subcommand

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


@Subcommand.register("srl-score")
class SrlScore(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        sub = parser.add_parser(self.name, description=DESCRIPTION, help="Score SRL props files (srl-eval).")
        sub.add_argument("gold_props", help="gold props file")
        sub.add_argument("predicted_props", help="predicted props file")
        sub.set_defaults(func=_run)
        return sub


def _open(path: str):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, "r", encoding="utf-8")


def _run(args: argparse.Namespace) -> None:
    try:
        with _open(args.gold_props) as gold, _open(args.predicted_props) as predicted:
            counts = score_props(
                read_props(lines_srl_eval_reads(gold, args.gold_props), args.gold_props),
                read_props(lines_srl_eval_reads(predicted, args.predicted_props), args.predicted_props),
                args.gold_props,
                args.predicted_props,
            )
    except (ValueError, OSError) as error:
        print(f"srl-score: error: {error}", file=sys.stderr)
        sys.exit(2)
    print(f"{'':10s} {'corr.':>6s} {'excess':>6s} {'missed':>6s} {'prec.':>6s} {'rec.':>6s} {'F1':>6s}")
    for label in counts.labels():
        if label in EXCLUDED_LABELS:
            continue
        numbers = counts.correct[label], counts.excess[label], counts.missed[label]
        p, r, f = srl_eval_percentages(*numbers)
        print(f"{label:10s} {numbers[0]:6d} {numbers[1]:6d} {numbers[2]:6d} {p:6.2f} {r:6.2f} {f:6.2f}")
    print(f"srl-score: {counts.propositions} propositions, {counts.perfect_propositions} perfect", file=sys.stderr)
    print(metric_line(counts))
