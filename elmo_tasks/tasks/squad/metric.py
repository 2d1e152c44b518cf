"""SQuAD v1.1 scoring with the official evaluation script's semantics.

The official ``evaluate-v1.1.py`` normalises both strings (lowercase, drop ASCII punctuation,
drop the words ``a``/``an``/``the``, collapse whitespace), scores exact match and bag-of-tokens
F1 against every gold answer, keeps the best of each per question, and averages over ALL
questions of the dataset file (a question without a prediction scores 0), times 100.

The functions below follow those rules to the letter, including the corner cases that matter
for equality with the official numbers: punctuation is ``string.punctuation`` only (curly quotes
and dashes stay), an empty normalised answer has F1 0 even against an empty gold answer, and
exact match and F1 are maximised over the gold answers separately.
"""

import re
import string
from collections import Counter
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

from allennlp.training.metrics import Metric

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lowercase, strip punctuation, drop articles, collapse whitespace (in the official order)."""
    lowered = text.lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punctuation)
    return " ".join(no_articles.split())


def exact_match_score(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    """Token F1 of the normalised strings; 0 when they share no token (also when both are empty)."""
    predicted_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    shared = sum((Counter(predicted_tokens) & Counter(gold_tokens)).values())
    if shared == 0:
        return 0.0
    precision = shared / len(predicted_tokens)
    recall = shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def best_over_gold(prediction: str, gold_answers: Sequence[str]) -> Tuple[float, float]:
    """(exact match, F1) of one prediction, each the maximum over the gold answers."""
    if not gold_answers:
        raise ValueError("a SQuAD question needs at least one gold answer to be scored")
    return (
        max(exact_match_score(prediction, gold) for gold in gold_answers),
        max(f1_score(prediction, gold) for gold in gold_answers),
    )


def score_predictions(
    questions: Sequence[Tuple[str, Sequence[str]]], predictions: Mapping[str, str]
) -> Dict[str, float]:
    """The official numbers: ``exact_match`` and ``f1`` in percent over every question
    ``(question_id, gold answer texts)`` of the dataset, in file order (unanswered ones score 0;
    a repeated id counts each time, as officially), plus counts of questions, unanswered
    questions and predictions for ids that are not in the dataset (ignored, as officially).
    """
    if not questions:
        raise ValueError("the dataset has no questions to score")
    exact_total = f1_total = 0.0
    unanswered = 0
    for question_id, gold_answers in questions:
        if question_id not in predictions:
            unanswered += 1
            continue
        exact, f1 = best_over_gold(predictions[question_id], gold_answers)
        exact_total += exact
        f1_total += f1
    known_ids = {question_id for question_id, _ in questions}
    return {
        "exact_match": 100.0 * exact_total / len(questions),
        "f1": 100.0 * f1_total / len(questions),
        "questions": len(questions),
        "unanswered": unanswered,
        "unknown_ids": sum(1 for question_id in predictions if question_id not in known_ids),
    }


def metric_line(scores: Mapping[str, float]) -> str:
    """The last line of ``squad-predict`` and ``squad-score`` (full precision, as the official JSON)."""
    return f"exact_match {scores['exact_match']!r} f1 {scores['f1']!r}"


@Metric.register("squad_v1_em_f1")
class SquadEmAndF1(Metric):
    """Running official SQuAD v1.1 exact match and F1 (fractions 0-1, like other AllenNLP
    metrics) over every question passed in; ``allennlp evaluate`` on a dataset file therefore
    averages over all of its questions, since the reader keeps every question outside training.
    """

    def __init__(self) -> None:
        self._exact_total = 0.0
        self._f1_total = 0.0
        self._count = 0

    def __call__(  # type: ignore[override]  # why: a Metric takes what its task scores, not Metric's tensors
        self, best_span_strings: Iterable[str], gold_answers: Iterable[List[str]]
    ) -> None:
        for prediction, golds in zip(best_span_strings, gold_answers, strict=True):
            exact, f1 = best_over_gold(prediction, golds)
            self._exact_total += exact
            self._f1_total += f1
            self._count += 1

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        count = max(self._count, 1)
        metrics = {"em": self._exact_total / count, "f1": self._f1_total / count}
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._exact_total = 0.0
        self._f1_total = 0.0
        self._count = 0
