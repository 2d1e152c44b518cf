"""The NER span F1 in distributed training: 2 gloo processes sum their counts, on hand-made tags.

Rank 0 sees a right PER, a LOC cut short (one false positive, one false negative); rank 1 a right
ORG, a right PER and a MISC that is not there (one false positive). Over both: 3 true positives,
2 false positives, 1 false negative, so P = 3/5, R = 3/4, F1 = 2/3 (rank 0 alone: 1/2, rank 1
alone: 4/5), and every rank must report 2/3.
"""

import json
import os
import time
from typing import Dict, List, Tuple

import pytest
import torch

TAGS = ["O", "U-PER", "B-LOC", "L-LOC", "U-LOC", "U-ORG", "U-MISC"]
# (gold, predicted) sentences per rank
SENTENCES: List[List[Tuple[List[str], List[str]]]] = [
    [
        (["U-PER", "O", "B-LOC", "L-LOC"], ["U-PER", "O", "U-LOC", "O"]),
        (["O", "O"], ["O", "O"]),
    ],
    [(["U-ORG", "O", "U-PER", "O", "O"], ["U-ORG", "U-MISC", "U-PER", "O", "O"])],
]


def _metric():
    from allennlp.data import Vocabulary

    from elmo_tasks.tasks.ner.metric import DistributedSpanBasedF1Measure

    vocab = Vocabulary(non_padded_namespaces=["labels"])
    for tag in TAGS:
        vocab.add_token_to_namespace(tag, "labels")
    return DistributedSpanBasedF1Measure(vocab, tag_namespace="labels", label_encoding="BIOUL")


def _batch(sentences: List[Tuple[List[str], List[str]]]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One-hot predicted scores, gold ids and the mask of ``sentences``, padded with ``O``."""
    length = max(len(gold) for gold, _ in sentences)
    gold_ids = torch.zeros(len(sentences), length, dtype=torch.long)
    predicted_ids = torch.zeros_like(gold_ids)
    mask = torch.zeros_like(gold_ids, dtype=torch.bool)
    for row, (gold, predicted) in enumerate(sentences):
        gold_ids[row, : len(gold)] = torch.tensor([TAGS.index(t) for t in gold])
        predicted_ids[row, : len(predicted)] = torch.tensor([TAGS.index(t) for t in predicted])
        mask[row, : len(gold)] = True
    return torch.nn.functional.one_hot(predicted_ids, len(TAGS)).float(), gold_ids, mask


def _score(rank: int, port: int, out_dir: str) -> None:
    """This rank's metric (read twice, then reset) over its sentences, to ``out_dir/rank<N>.json``."""
    import torch.distributed as dist

    torch.set_num_threads(1)  # a forked child cannot use the parent's OpenMP pool (as DataLoader workers)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=2, rank=rank)
    try:
        metric = _metric()
        metric(*_batch(SENTENCES[rank]))
        first = metric.get_metric()
        again = metric.get_metric(reset=True)  # reading must not add the other rank's counts twice
        after_reset = metric.get_metric()
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as out:
            json.dump({"first": first, "again": again, "after_reset": after_reset}, out)
    finally:
        dist.destroy_process_group()


def test_single_process_numbers_are_allennlps():
    from allennlp.data import Vocabulary
    from allennlp.training.metrics import SpanBasedF1Measure

    vocab = Vocabulary(non_padded_namespaces=["labels"])
    for tag in TAGS:
        vocab.add_token_to_namespace(tag, "labels")
    ours, allennlps = _metric(), SpanBasedF1Measure(vocab, tag_namespace="labels", label_encoding="BIOUL")
    batch = _batch(SENTENCES[0] + SENTENCES[1])
    ours(*batch)
    allennlps(*batch)
    # The same keys and numbers, but for AllenNLP's 1e-13 added to each denominator (ours has none).
    assert ours.get_metric(reset=True) == pytest.approx(allennlps.get_metric(), rel=1e-12)
    assert ours.get_metric()["f1-measure-overall"] == 0.0


def test_two_gloo_workers_report_the_f1_of_all_their_counts(tmp_path):
    from allennlp.common.util import find_open_port

    # fork, not spawn: the workers inherit the imported AllenNLP instead of importing it again (~7 s
    # each); a deadline turns a hung fork into a failure rather than a stuck test run
    workers = torch.multiprocessing.start_processes(
        _score, args=(find_open_port(), str(tmp_path)), nprocs=2, join=False, start_method="fork"
    )
    deadline = time.monotonic() + 120
    while not workers.join(timeout=1):
        if time.monotonic() > deadline:
            for process in workers.processes:
                process.kill()
            pytest.fail("the 2 forked gloo workers did not finish in 120 s")
    ranks: List[Dict] = [json.loads((tmp_path / f"rank{r}.json").read_text(encoding="utf-8")) for r in range(2)]
    assert ranks[0] == ranks[1]
    metrics = ranks[0]["first"]
    assert metrics == ranks[0]["again"]
    assert metrics["precision-overall"] == pytest.approx(3 / 5)
    assert metrics["recall-overall"] == pytest.approx(3 / 4)
    assert metrics["f1-measure-overall"] == pytest.approx(2 / 3)
    # per type: types only one rank saw are reported too
    assert metrics["f1-measure-PER"] == pytest.approx(1.0)
    assert metrics["f1-measure-ORG"] == pytest.approx(1.0)
    assert metrics["precision-LOC"] == metrics["recall-LOC"] == 0.0
    assert metrics["precision-MISC"] == 0.0 and "f1-measure-MISC" in metrics
    assert ranks[0]["after_reset"]["f1-measure-overall"] == 0.0 and "f1-measure-PER" not in ranks[0]["after_reset"]
