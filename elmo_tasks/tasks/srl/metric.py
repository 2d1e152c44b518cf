"""SRL precision, recall and F1 with the semantics of the CoNLL-2005 scorer srl-eval.pl.

The rules (Carreras and Marquez 2005, the shared task's README and srl-eval.pl's documented
behaviour), implemented here in our own code:

- An argument is correct when its label and its exact span match a gold argument.
- A discontinuous argument ``X ... C-X ... C-X`` is ONE argument of type ``X``; it is correct
  only when all and only its pieces match. A ``C-X`` with no ``X`` before it counts as an ``X``.
- ``R-X`` (reference) arguments are labels of their own.
- The predicate ``V`` (and ``C-V``) is not scored.
- Predicates are matched by position; a predicted predicate with another target string than
  the gold one counts all gold arguments as missed, one without a gold predicate is ignored.

Counts are kept per label (correct, excess, missed) so overall and per-label numbers come from
one place. Precision/recall/F1 are fractions (srl-eval prints percentages).
"""

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from allennlp.training.metrics.metric import Metric

from elmo_tasks.counted_nouns import counted
from elmo_tasks.tasks.data_files import DataFileError
from elmo_tasks.tasks.srl.props import (
    Argument,
    PropsSentence,
    arguments_of,
    bio_to_start_end,
)

logger = logging.getLogger(__name__)

EXCLUDED_LABELS = frozenset({"V"})


@dataclass
class SrlCounts:
    """Correct / excess / missed arguments per label, scored and excluded (``V``) apart."""

    correct: Dict[str, int] = field(default_factory=lambda: defaultdict(int))
    excess: Dict[str, int] = field(default_factory=lambda: defaultdict(int))
    missed: Dict[str, int] = field(default_factory=lambda: defaultdict(int))
    propositions: int = 0
    perfect_propositions: int = 0

    def add_proposition(
        self, gold_column: Sequence[str], predicted_column: Optional[Sequence[str]], where: str = "proposition"
    ) -> None:
        """Score one predicate; ``predicted_column=None`` means no (matching) prediction."""
        gold = arguments_of(gold_column, where + " (gold)")
        predicted = arguments_of(predicted_column, where + " (predicted)") if predicted_column is not None else []
        correct, excess, missed = match_arguments(gold, predicted)
        scored_errors = 0
        for argument in correct:
            self.correct[argument.label] += 1
        for argument in excess:
            self.excess[argument.label] += 1
            scored_errors += argument.label not in EXCLUDED_LABELS
        for argument in missed:
            self.missed[argument.label] += 1
            scored_errors += argument.label not in EXCLUDED_LABELS
        self.propositions += 1
        self.perfect_propositions += scored_errors == 0

    def add_sentence(self, gold: PropsSentence, predicted: PropsSentence, where: str = "sentence") -> None:
        """Score every gold predicate of a sentence against the predicted props of the same sentence."""
        if len(gold.targets) != len(predicted.targets):
            raise DataFileError(
                f"{where}: the gold sentence has {len(gold.targets)} words but the predicted one has "
                f"{len(predicted.targets)}; both files must hold the same sentences in the same order"
            )
        predicted_at = dict(zip(predicted.predicate_positions, predicted.columns, strict=True))
        for position, gold_column in zip(gold.predicate_positions, gold.columns, strict=True):
            column = predicted_at.get(position)
            if column is not None and predicted.targets[position] != gold.targets[position]:
                column = None
            self.add_proposition(gold_column, column, f"{where}, predicate at word {position + 1}")

    def totals(self) -> Tuple[int, int, int]:
        """Scored (non-``V``) correct, excess and missed arguments."""

        def total(counts: Dict[str, int]) -> int:
            return sum(n for label, n in counts.items() if label not in EXCLUDED_LABELS)

        return total(self.correct), total(self.excess), total(self.missed)

    def labels(self) -> List[str]:
        return sorted(set(self.correct) | set(self.excess) | set(self.missed))


def match_arguments(
    gold: List[Argument], predicted: List[Argument]
) -> Tuple[List[Argument], List[Argument], List[Argument]]:
    """(correct predicted, excess predicted, missed gold), srl-eval.pl's way.

    Gold arguments are looked up by (start, end) of their whole extent; a later gold argument
    with the same extent replaces an earlier one, as in srl-eval.pl. A matched gold argument is
    used up, so a second prediction of the same span is an excess. Discontinuous arguments match
    when the predicted pieces, each used once, are exactly the set of gold pieces: srl-eval.pl
    ticks gold pieces off a set, so a predicted argument that repeats a piece (a ``C-X`` nested
    in its own ``X`` joins it twice) never matches, even an identical gold one.
    """
    unmatched_gold = {(argument.start, argument.end): argument for argument in gold}
    correct, excess = [], []
    for argument in predicted:
        key = (argument.start, argument.end)
        candidate = unmatched_gold.get(key)
        if (
            candidate is not None
            and candidate.label == argument.label
            and candidate.single == argument.single
            and (candidate.single or _same_pieces(candidate.pieces, argument.pieces))
        ):
            correct.append(argument)
            del unmatched_gold[key]
        else:
            excess.append(argument)
    return correct, excess, list(unmatched_gold.values())


def _same_pieces(gold: Sequence[Tuple[int, int]], predicted: Sequence[Tuple[int, int]]) -> bool:
    return len(set(predicted)) == len(predicted) and set(predicted) == set(gold)


def precision_recall_f1(correct: int, excess: int, missed: int) -> Tuple[float, float, float]:
    """Fractions; 0 where a denominator is 0 (srl-eval.pl's convention)."""
    precision = correct / (correct + excess) if correct + excess else 0.0
    recall = correct / (correct + missed) if correct + missed else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def srl_eval_percentages(correct: int, excess: int, missed: int) -> Tuple[float, float, float]:
    """Precision, recall and F1 in percent, computed in srl-eval.pl's order (F1 from the
    percentages) so that they print (``%.2f``) to its digits: F1 from fractions can fall on the
    other side of a rounding tie (F1 = 84/128 prints 65.63 there, 65.62 from 0.65625 * 100).
    """
    precision = 100 * correct / (correct + excess) if correct + excess else 0.0
    recall = 100 * correct / (correct + missed) if correct + missed else 0.0
    f1 = (2 * precision * recall) / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def metric_line(counts: SrlCounts) -> str:
    """The last line of ``allennlp srl-props`` and ``srl-score``: fractions with four decimals,
    the digits of srl-eval.pl's Overall row (its percentages to two decimals, divided by 100)."""
    values = [Decimal(f"{value:.2f}") / 100 for value in srl_eval_percentages(*counts.totals())]
    return "precision {:.4f} recall {:.4f} f1 {:.4f}".format(*values)


def lines_srl_eval_reads(lines: Iterable[str], name: str) -> Iterator[str]:
    """The lines of a props file, refusing a file that srl-eval.pl would not read to its end.

    srl-eval.pl reads a sentence as the lines up to the next blank one, and takes an empty
    sentence (a blank line right after another, or at the top of the file) for the end of the
    file: in the gold file it silently scores only the sentences before it, in the predicted
    file it dies. Our reader skips such lines, which would score more than srl-eval.pl does.
    """
    after_blank = True
    empty_sentence_at = 0
    for number, line in enumerate(lines, start=1):
        if not line.split():
            if after_blank and not empty_sentence_at:
                empty_sentence_at = number
            after_blank = True
        elif empty_sentence_at:
            raise DataFileError(
                f"{name}, line {empty_sentence_at}: a blank line that ends no sentence (at the top of the "
                f"file or after another blank line); srl-eval.pl stops reading there and would not score "
                f"the sentences from line {number} on. Remove the extra blank line"
            )
        else:
            after_blank = False
        yield line


def score_props(
    gold: Iterable[PropsSentence],
    predicted: Iterable[PropsSentence],
    gold_name: str = "gold",
    predicted_name: str = "predicted",
) -> SrlCounts:
    """Score two props files sentence by sentence (they must hold the same sentences)."""
    counts = SrlCounts()
    gold_iter, predicted_iter = iter(gold), iter(predicted)
    index = 0
    while True:
        gold_sentence = next(gold_iter, None)
        predicted_sentence = next(predicted_iter, None)
        if gold_sentence is None and predicted_sentence is None:
            return counts
        index += 1
        if gold_sentence is None or predicted_sentence is None:
            shorter = gold_name if gold_sentence is None else predicted_name
            raise DataFileError(
                f"{shorter} ends after {counted(index - 1, 'sentence')} but the other file has more; "
                "both props files must hold the same sentences in the same order"
            )
        counts.add_sentence(
            gold_sentence,
            predicted_sentence,
            f"sentence {index} ({gold_name} line {gold_sentence.line}, {predicted_name} line "
            f"{predicted_sentence.line})",
        )


@Metric.register("srl_eval_scores")
class SrlEvalMetric(Metric):
    """srl-eval.pl's numbers over a model's BIO predictions, accumulated across batches.

    Called with predicted BIO tag strings and, per proposition, the gold props column (the
    reader keeps it in the metadata), so the gold side is scored exactly as in the file.
    ``get_metric`` gives ``precision-overall``, ``recall-overall``, ``f1-measure-overall`` and
    the same per label (``f1-measure-A0``...), as fractions.
    """

    def __init__(self) -> None:
        self._counts = SrlCounts()

    def __call__(  # type: ignore[override]  # why: a Metric takes what its task scores, not Metric's tensors
        self, predicted_bio: List[List[str]], gold_columns: List[List[str]]
    ) -> None:
        for tags, gold in zip(predicted_bio, gold_columns, strict=True):
            self._counts.add_proposition(gold, bio_to_start_end(tags))

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self._counts
        metrics: Dict[str, float] = {}
        for label in counts.labels():
            if label in EXCLUDED_LABELS:
                continue
            p, r, f = precision_recall_f1(counts.correct[label], counts.excess[label], counts.missed[label])
            metrics[f"precision-{label}"], metrics[f"recall-{label}"], metrics[f"f1-measure-{label}"] = p, r, f
        p, r, f = precision_recall_f1(*counts.totals())
        metrics["precision-overall"], metrics["recall-overall"], metrics["f1-measure-overall"] = p, r, f
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._counts = SrlCounts()
