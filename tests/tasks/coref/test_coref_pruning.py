"""Lee et al.'s pruning without crossing spans (``antecedents.non_crossing_best``, ``prune_spans`` with
``non_crossing_spans``): a hand-worked document, a brute-force check, and the model's switch."""

import random
from typing import List, Sequence, Tuple

import pytest
import torch
from allennlp.data import Vocabulary

from elmo_tasks.tasks.coref import antecedents as ranking
from tests.tasks.coref.test_coref_model import _instances, small_coref_model
from tests.tasks.hand_built_models import tensor_batch

# A hand-worked document: candidates in document order, with their mention scores.
HAND_SPANS = [(0, 0), (0, 2), (1, 3), (2, 4), (1, 2), (3, 3)]
HAND_SCORES = [1.0, 5.0, 6.0, 4.0, 3.0, 2.0]


def _crosses(first: Tuple[int, int], second: Tuple[int, int]) -> bool:
    """Lee et al.'s ``is_crossing``, written out."""
    (s1, e1), (s2, e2) = first, second
    return (s1 < s2 <= e1 < e2) or (s2 < s1 <= e2 < e1)


def _brute_force(spans: Sequence[Tuple[int, int]], scores: Sequence[float], keep: int) -> List[int]:
    """Lee et al.'s loop as their code writes it: best first, each checked against every span kept."""
    order = sorted(range(len(spans)), key=lambda index: (-scores[index], index))
    chosen: List[int] = []
    for index in order:
        if len(chosen) == keep:
            break
        if not any(_crosses(spans[index], spans[kept]) for kept in chosen):
            chosen.append(index)
    return sorted(chosen)


def test_a_hand_worked_document():
    """(1, 3) is best and kept; (0, 2) crosses it (0 < 1 <= 2 < 3) and (2, 4) too (1 < 2 <= 3 < 4): both are
    passed over; (1, 2) shares its start and (3, 3) lies inside it: nested, kept. Without the check the
    three best are (0, 2), (1, 3) and (2, 4), each crossing another."""
    starts, ends = zip(*HAND_SPANS, strict=True)
    order = sorted(range(len(HAND_SPANS)), key=lambda index: -HAND_SCORES[index])
    assert ranking.non_crossing_best(starts, ends, order, keep=3) == [2, 4, 5]
    assert ranking.non_crossing_best(starts, ends, order, keep=4) == [0, 2, 4, 5]

    scores = torch.tensor([HAND_SCORES])
    spans = torch.tensor([HAND_SPANS])
    span_mask = torch.ones(1, len(HAND_SPANS), dtype=torch.bool)
    num_tokens = torch.tensor([12])  # 0.25 spans per word: 3 kept
    crossing = ranking.prune_spans(scores, span_mask, num_tokens, 0.25)
    assert crossing.indices.tolist() == [[1, 2, 3]]
    kept = ranking.prune_spans(scores, span_mask, num_tokens, 0.25, non_crossing_spans=spans)
    assert kept.indices.tolist() == [[2, 4, 5]] and kept.mask.tolist() == [[True] * 3] and kept.counts.tolist() == [3]


def test_a_batch_keeps_each_documents_own_count_and_never_a_padding_span():
    """The second document has four real candidates and two padding spans (scored lowest, clamped to (0, 0))
    and keeps two: padded to the first document's three, its extra row masked."""
    spans = torch.tensor([HAND_SPANS, HAND_SPANS[:4] + [(0, 0), (0, 0)]])
    span_mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    scores = torch.tensor([HAND_SCORES, [1.0, 5.0, 6.0, 4.0, -1e30, -1e30]])
    kept = ranking.prune_spans(scores, span_mask, torch.tensor([12, 8]), 0.25, non_crossing_spans=spans)
    assert kept.counts.tolist() == [3, 2]
    assert kept.mask.tolist() == [[True, True, True], [True, True, False]]
    assert kept.indices[0].tolist() == [2, 4, 5] and kept.indices[1, :2].tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(20))
def test_the_selection_equals_lee_et_al_s_loop(seed):
    """Random documents of candidate spans up to 6 tokens wide, with ties among the scores."""
    rng = random.Random(seed)
    num_tokens = rng.randint(5, 40)
    spans = [(start, end) for start in range(num_tokens) for end in range(start, min(start + 6, num_tokens))]
    scores = [float(rng.randint(0, 30)) for _ in spans]
    keep = rng.randint(1, num_tokens)
    order = sorted(range(len(spans)), key=lambda index: (-scores[index], index))
    starts, ends = zip(*spans, strict=True)
    chosen = ranking.non_crossing_best(starts, ends, order, keep)
    assert chosen == _brute_force(spans, scores, keep)
    assert len(chosen) == keep  # one-token spans cross nothing: there are always enough
    assert not any(_crosses(spans[i], spans[j]) for i in chosen for j in chosen)


def test_the_models_switch_keeps_as_many_spans_and_no_crossing_pair():
    """Keeping one span per word, the same model (the same parameters) without the check keeps crossing
    pairs; with it, as many spans and no crossing pair."""
    instances = _instances(elmo=False)[:2]
    vocab = Vocabulary.from_instances(instances)
    tensors = tensor_batch(instances, vocab)
    torch.manual_seed(3)
    plain = small_coref_model(vocab, elmo=False, spans_per_word=1.0).eval()
    checked = small_coref_model(vocab, elmo=False, spans_per_word=1.0, non_crossing_pruning=True).eval()
    checked.load_state_dict(plain.state_dict())
    with torch.no_grad():
        outputs = {"plain": plain(**tensors), "checked": checked(**tensors)}

    def crossing_pairs(top_spans: torch.Tensor) -> int:
        spans = [tuple(span) for span in top_spans.tolist()]
        return sum(_crosses(first, second) for first in spans for second in spans)

    assert crossing_pairs(outputs["plain"]["top_spans"][0]) > 0
    assert outputs["checked"]["top_spans"].shape == outputs["plain"]["top_spans"].shape
    for document in range(2):
        assert crossing_pairs(outputs["checked"]["top_spans"][document]) == 0
