"""Span F1 with conlleval semantics: IOB1 data -> BIOUL -> SpanBasedF1Measure, hand-worked."""

import os
import random
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.data.dataset_readers import Conll2003DatasetReader
from allennlp.data.dataset_readers.dataset_utils.span_utils import iob1_tags_to_spans, to_bioul
from allennlp.training.metrics import SpanBasedF1Measure

from elmo_tasks.tasks.ner.metric import DistributedSpanBasedF1Measure
from elmo_tasks.tasks.ner.tags import bioul_spans, bioul_to_iob1, entities
from tests.conftest import SHARED_DATA

TYPES = ["PER", "LOC", "ORG", "MISC"]


def _spans_of_iob1(tags: List[str]) -> List[tuple]:
    return bioul_spans(to_bioul(tags))


# IOB1 edge cases, with the chunks conlleval finds in them (worked out by hand).
@pytest.mark.parametrize(
    "iob1, chunks",
    [
        # an entity may start with I- (the normal case in IOB1)
        (["I-PER", "I-PER", "O"], [("PER", (0, 1))]),
        # adjacent entities of the same type: the second starts with B-
        (["I-LOC", "B-LOC", "I-LOC"], [("LOC", (0, 0)), ("LOC", (1, 2))]),
        # a type change inside an I- run starts a new entity
        (["I-ORG", "I-MISC", "I-MISC"], [("ORG", (0, 0)), ("MISC", (1, 2))]),
        # B- after O (not needed in IOB1, but conlleval accepts it as a start)
        (["O", "B-PER", "I-PER"], [("PER", (1, 2))]),
        # B- of another type right after an entity
        (["I-PER", "B-LOC"], [("PER", (0, 0)), ("LOC", (1, 1))]),
        (["O", "O"], []),
    ],
)
def test_iob1_chunks_survive_bioul_conversion(iob1, chunks):
    assert _spans_of_iob1(iob1) == chunks
    # AllenNLP's own IOB1 chunker (conlleval's rules) agrees.
    assert sorted(iob1_tags_to_spans(iob1), key=lambda s: s[1][0]) == chunks


def _metric_on(gold: List[List[str]], predicted: List[List[str]]) -> dict:
    """SpanBasedF1Measure over a padded batch, both sides given in IOB1 and converted to BIOUL."""
    vocab = Vocabulary()
    for prefix in "BIUL":
        for span_type in TYPES:
            vocab.add_token_to_namespace(f"{prefix}-{span_type}", "labels")
    vocab.add_token_to_namespace("O", "labels")
    num_tags = vocab.get_vocab_size("labels")
    width = max(len(tags) for tags in gold)
    gold_ids = torch.zeros(len(gold), width, dtype=torch.long)
    scores = torch.zeros(len(gold), width, num_tags)
    mask = torch.zeros(len(gold), width, dtype=torch.bool)
    for row, (gold_tags, predicted_tags) in enumerate(zip(gold, predicted, strict=True)):
        for col, (g, p) in enumerate(zip(to_bioul(gold_tags), to_bioul(predicted_tags), strict=True)):
            gold_ids[row, col] = vocab.get_token_index(g, "labels")
            scores[row, col, vocab.get_token_index(p, "labels")] = 1.0
            mask[row, col] = True
    metric = SpanBasedF1Measure(vocab, tag_namespace="labels", label_encoding="BIOUL")
    metric(scores, gold_ids, mask)
    return metric.get_metric(reset=True)


def test_span_f1_matches_hand_worked_conlleval_counts():
    gold = [
        ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "O"],  # PER(0,1) LOC(3,3) LOC(4,4)
        ["I-ORG", "I-MISC", "I-MISC", "O", "B-PER"],  # ORG(0,0) MISC(1,2) PER(4,4)
        ["O", "O"],
        ["I-PER", "I-PER", "O", "I-ORG"],  # PER(0,1) ORG(3,3)
    ]
    predicted = [
        ["I-PER", "I-PER", "O", "I-LOC", "I-LOC", "O"],  # PER ok; LOC(3,4) wrong
        ["I-ORG", "I-ORG", "I-MISC", "O", "I-PER"],  # ORG(0,1), MISC(2,2) wrong; PER ok
        ["I-LOC", "O"],  # LOC(0,0) spurious
        ["I-PER", "I-PER", "O", "O"],  # PER ok; ORG missed
    ]
    # By hand: TP = 3 (all PER), FP = 4 (LOC x2, ORG, MISC), FN = 5 (LOC x2, ORG x2, MISC).
    metrics = _metric_on(gold, predicted)
    assert metrics["precision-overall"] == pytest.approx(3 / 7)
    assert metrics["recall-overall"] == pytest.approx(3 / 8)
    assert metrics["f1-measure-overall"] == pytest.approx(2 * 3 / (2 * 3 + 4 + 5))  # 0.4
    assert metrics["f1-measure-PER"] == pytest.approx(1.0)
    assert metrics["precision-LOC"] == pytest.approx(0.0)
    assert metrics["recall-ORG"] == pytest.approx(0.0)
    assert metrics["f1-measure-MISC"] == pytest.approx(0.0)


def test_perfect_prediction_scores_one_and_boundary_error_scores_zero():
    gold = [["I-LOC", "B-LOC", "O"]]
    assert _metric_on(gold, gold)["f1-measure-overall"] == pytest.approx(1.0)
    # Merging the two adjacent LOCs into one is wrong twice (conlleval: 0 TP, 1 FP, 2 FN).
    merged = _metric_on(gold, [["I-LOC", "I-LOC", "O"]])
    assert merged["f1-measure-overall"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    "bioul, iob1",
    [
        (["U-LOC", "U-LOC"], ["I-LOC", "B-LOC"]),
        (["B-PER", "L-PER", "U-ORG", "O"], ["I-PER", "I-PER", "I-ORG", "O"]),
        (["U-PER", "O", "U-PER"], ["I-PER", "O", "I-PER"]),
        (["B-MISC", "I-MISC", "L-MISC", "B-MISC", "L-MISC"], ["I-MISC"] * 3 + ["B-MISC", "I-MISC"]),
    ],
)
def test_bioul_to_iob1_round_trips(bioul, iob1):
    assert bioul_to_iob1(bioul) == iob1
    assert to_bioul(iob1) == bioul


def test_bad_bioul_is_a_clear_error():
    with pytest.raises(ValueError, match="well-formed BIOUL"):
        bioul_to_iob1(["I-PER", "L-PER"])
    with pytest.raises(ValueError, match="2 words but 1 tags"):
        entities(["a", "b"], ["O"])


def test_entities_lists_spans_left_to_right():
    words = ["Ann", "Lee", "met", "Bo", "in", "Rusk"]
    tags = ["B-PER", "L-PER", "O", "U-PER", "O", "U-LOC"]
    assert entities(words, tags) == [
        {"text": "Ann Lee", "type": "PER", "start": 0, "end": 1},
        {"text": "Bo", "type": "PER", "start": 3, "end": 3},
        {"text": "Rusk", "type": "LOC", "start": 5, "end": 5},
    ]


CONLL = SHARED_DATA / "conll2003"


@pytest.mark.needs_shared
@pytest.mark.skipif(not CONLL.exists(), reason="../shared/data/conll2003 is absent")
@pytest.mark.parametrize(
    "name, sentences, mentions",
    [("eng.train", 14041, 23499), ("eng.testa", 3250, 5942), ("eng.testb", 3453, 5648)],
)
def test_real_conll_conversion_keeps_every_conlleval_chunk(name, sentences, mentions):
    """The reader copes with this copy's -DOCSTART- placement and BIOUL keeps every chunk."""
    reader = Conll2003DatasetReader(tag_label="ner")
    count = found = 0
    for instance in reader.read(str(CONLL / name)):
        iob1 = instance["tags"].labels  # type: ignore[attr-defined]
        chunks = sorted(iob1_tags_to_spans(iob1), key=lambda s: s[1][0])
        assert _spans_of_iob1(iob1) == chunks, (name, count, iob1)
        assert bioul_to_iob1(to_bioul(iob1)) == iob1, (name, count, iob1)
        count += 1
        found += len(chunks)
    assert (count, found) == (sentences, mentions)


def _random_bioul(rng: random.Random, length: int) -> List[str]:
    """A well-formed BIOUL sequence (what constrained Viterbi predicts) with random entities."""
    tags: List[str] = []
    while len(tags) < length:
        if rng.random() < 0.4:
            tags.append("O")
            continue
        span_type, size = rng.choice(TYPES), min(rng.randint(1, 3), length - len(tags))
        inside = [f"I-{span_type}"] * (size - 2)
        tags.extend([f"U-{span_type}"] if size == 1 else [f"B-{span_type}", *inside, f"L-{span_type}"])
    return tags


def _random_iob1(rng: random.Random, length: int) -> List[str]:
    """Gold tags as a CoNLL file may hold them: IOB1 with B- anywhere (after O too) and type changes."""
    prefixes = [rng.choice("OOIIIB") for _ in range(length)]
    return ["O" if prefix == "O" else f"{prefix}-{rng.choice(TYPES)}" for prefix in prefixes]


def _conlleval(path: Path) -> Tuple[Tuple[int, int, int], Dict[str, Tuple[float, ...]]]:
    """conlleval's (gold chunks, predicted chunks, correct chunks) and its printed precision,
    recall and F1 (percentages) per type and ``overall``."""
    with path.open() as lines:
        output = subprocess.run(
            ["perl", os.environ["CONLLEVAL_PL"]], stdin=lines, capture_output=True, text=True, check=True
        ).stdout
    first, *rest = output.splitlines()
    totals = re.fullmatch(r"processed \d+ tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.", first)
    assert totals is not None, output
    scores: Dict[str, Tuple[float, ...]] = {}
    for line in rest:
        printed = re.search(r"precision:\s*([\d.]+)%; recall:\s*([\d.]+)%; FB1:\s*([\d.]+)", line)
        assert printed is not None, line
        name = "overall" if line.startswith("accuracy") else line.split(":")[0].strip()
        scores[name] = tuple(float(n) for n in printed.groups())
    gold, found, correct = (int(n) for n in totals.groups())
    return (gold, found, correct), scores


@pytest.mark.skipif(not os.environ.get("CONLLEVAL_PL"), reason="set CONLLEVAL_PL to the official conlleval script")
def test_equals_the_official_conlleval_on_random_files(tmp_path):
    """Gold IOB1 as read from a file against the IOB1 tags our predictor writes (``iob1_tags``):
    the NER metric counts conlleval's chunks, and its precision, recall and F1 per type and
    overall are what conlleval prints, on 200 random files."""
    vocab = Vocabulary()
    for prefix in "BIUL":
        for span_type in TYPES:
            vocab.add_token_to_namespace(f"{prefix}-{span_type}", "labels")
    vocab.add_token_to_namespace("O", "labels")
    for seed in range(200):
        rng = random.Random(seed)
        sentences = [(_random_iob1(rng, n), _random_bioul(rng, n)) for n in (rng.randint(1, 12) for _ in range(25))]
        path = tmp_path / "conlleval_input.txt"
        with path.open("w") as out:
            for gold, predicted in sentences:
                for index, (g, p) in enumerate(zip(gold, bioul_to_iob1(predicted), strict=True)):
                    out.write(f"w{index} {g} {p}\n")
                out.write("\n")
        metric = DistributedSpanBasedF1Measure(vocab, tag_namespace="labels", label_encoding="BIOUL")
        for gold, predicted in sentences:
            gold_ids = torch.tensor([[vocab.get_token_index(t, "labels") for t in to_bioul(gold)]])
            scores = torch.zeros(1, len(gold), vocab.get_vocab_size("labels"))
            for col, tag in enumerate(predicted):
                scores[0, col, vocab.get_token_index(tag, "labels")] = 1.0
            metric(scores, gold_ids, torch.ones(1, len(gold), dtype=torch.bool))
        true_positives, false_positives, false_negatives = metric._summed_counts()
        (gold_chunks, found, correct), printed = _conlleval(path)
        matched = sum(true_positives.values())
        counts = (matched + sum(false_negatives.values()), matched + sum(false_positives.values()), matched)
        assert counts == (gold_chunks, found, correct), seed
        metrics = metric.get_metric()
        for name, conlleval_scores in printed.items():
            ours = [100 * metrics[f"{kind}-{name}"] for kind in ("precision", "recall", "f1-measure")]
            # conlleval prints two decimals (a value on a rounding boundary may print either way).
            assert ours == pytest.approx(conlleval_scores, abs=0.005 + 1e-9), (seed, name)
