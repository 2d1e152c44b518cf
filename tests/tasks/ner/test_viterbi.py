"""viterbi_paths against AllenNLP's ConditionalRandomField.viterbi_tags: the same best paths."""

import pytest
import torch
from allennlp.modules.conditional_random_field import ConditionalRandomField, allowed_transitions

from elmo_tasks.tasks.ner.viterbi import allowed_matrix, viterbi_paths

LABELS = ["O"] + [f"{prefix}-{kind}" for kind in ("PER", "LOC", "ORG", "MISC") for prefix in "BIUL"]


def _crf(include_start_end: bool, seed: int):
    allowed = allowed_transitions("BIOUL", dict(enumerate(LABELS)))
    torch.manual_seed(seed)
    crf = ConditionalRandomField(len(LABELS), constraints=allowed, include_start_end_transitions=include_start_end)
    with torch.no_grad():
        for parameter in crf.parameters():
            if parameter.requires_grad:  # learned-looking transitions, some above 0 (not the constraint mask)
                parameter.normal_(0, 2)
    return crf, allowed_matrix(allowed, len(LABELS))


@pytest.mark.parametrize("include_start_end", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_the_paths_equal_allennlps_viterbi_tags(include_start_end, seed):
    crf, allowed = _crf(include_start_end, seed)
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 25, (32,), generator=generator)
    lengths[0] = 30
    mask = torch.arange(30).unsqueeze(0) < lengths.unsqueeze(1)
    logits = torch.randn(32, 30, len(LABELS), generator=generator) * 4
    expected = [path for path, _score in crf.viterbi_tags(logits, mask)]
    paths = viterbi_paths(crf, allowed, logits, mask)
    assert [len(path) for path in paths] == lengths.tolist()
    assert paths == expected
    assert any(path != [0] * len(path) for path in paths)  # not a trivial all-O answer


def test_the_constraints_hold_where_the_scores_alone_would_break_them():
    """I-PER scores highest everywhere, but BIOUL allows it only between B-PER and L-PER."""
    crf, allowed = _crf(False, 0)
    with torch.no_grad():
        crf.transitions.zero_()
    logits = torch.zeros(1, 4, len(LABELS))
    logits[0, :, LABELS.index("I-PER")] = 5.0
    logits[0, :, LABELS.index("O")] = 1.0
    mask = torch.ones(1, 4, dtype=torch.bool)
    paths = viterbi_paths(crf, allowed, logits, mask)
    assert [LABELS[tag] for tag in paths[0]] == ["B-PER", "I-PER", "I-PER", "L-PER"]
    assert paths == [path for path, _ in crf.viterbi_tags(logits, mask)]
