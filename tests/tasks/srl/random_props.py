"""Random props files for comparing the metric with srl-eval.pl (see test_srl_metric.py)."""

import random
from typing import List, TextIO, Tuple

from elmo_tasks.tasks.srl.props import write_props

LABELS = ["A0", "A1", "A2", "AM-TMP", "R-A0", "R-A1", "C-A0", "C-A1", "C-R-A1", "V", "C-V"]


def random_column(rng: random.Random, length: int, predicate: int) -> List[str]:
    """Non-overlapping phrases (sometimes one embedded phrase), the predicate marked V."""
    column = ["*"] * length
    position = 0
    while position < length:
        if position == predicate:
            column[position] = "(V*)"
            position += 1
            continue
        if rng.random() < 0.4:
            end = position
            while end + 1 < length and end + 1 != predicate and rng.random() < 0.5:
                end += 1
            label = rng.choice(LABELS[:-2] if rng.random() < 0.9 else LABELS)
            if end > position and rng.random() < 0.1:  # an embedded phrase inside this one
                inner = rng.choice(LABELS[:4])
                column[position] = f"({label}({inner}*)" if end > position else column[position]
                column[end] = "*)"
            elif end == position:
                column[position] = f"({label}*)"
            else:
                column[position] = f"({label}*"
                column[end] = "*)"
            position = end + 1
        else:
            position += 1
    return column


def perturb(rng: random.Random, column: List[str]) -> List[str]:
    """A prediction near the gold column: some phrases moved, relabelled or dropped."""
    if rng.random() < 0.3:
        return list(column)
    predicate = column.index("(V*)")
    if rng.random() < 0.5:
        return random_column(rng, len(column), predicate)
    other = list(column)
    for i, tag in enumerate(other):
        if tag.startswith("(") and tag != "(V*)" and rng.random() < 0.3:
            other[i] = tag.replace(tag[1 : tag.index("*")].split("(")[0], rng.choice(LABELS[:-2]), 1)
    return other


def write_pair(rng: random.Random, gold: TextIO, predicted: TextIO, sentences: int) -> Tuple[int, int]:
    propositions = 0
    for _ in range(sentences):
        length = rng.randint(1, 12)
        count = rng.randint(0, min(3, length))
        positions = sorted(rng.sample(range(length), count))
        targets = ["-"] * length
        for p in positions:
            targets[p] = rng.choice(["go", "say", "make"])
        gold_columns = [random_column(rng, length, p) for p in positions]
        predicted_targets = list(targets)
        predicted_columns = [perturb(rng, c) for c in gold_columns]
        if positions and rng.random() < 0.05:  # a predicted verb that differs from the gold one
            predicted_targets[positions[0]] = "other"
        write_props(gold, targets, gold_columns)
        write_props(predicted, predicted_targets, predicted_columns)
        propositions += count
    return sentences, propositions
