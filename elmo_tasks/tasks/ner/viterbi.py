"""The constrained CRF's best tag paths for a whole batch at once, as ``ConditionalRandomField.viterbi_tags``.

AllenNLP's ``viterbi_tags`` decodes one sentence at a time (``util.viterbi_decode`` on a tensor framed by
start and end tags): about a millisecond per sentence, half of a NER validation pass on the CPU. Here the
same recursion runs over the batch's sentences together, one step per token position, with each
sentence's scores carried unchanged past its end; the transitions are the ones ``viterbi_tags`` builds
(disallowed transitions, starts and ends scored -10000, AllenNLP's value) and the scores are added in the
same order, so the paths are the same (``tests/tasks/ner/test_viterbi.py`` compares them on random and
real scores). Two paths with exactly equal float scores may be broken differently.
"""

from typing import List, Sequence, Tuple

import torch
from allennlp.modules.conditional_random_field import ConditionalRandomField

# The score ``viterbi_tags`` gives a transition the constraints forbid.
FORBIDDEN = -10000.0


def allowed_matrix(allowed: Sequence[Tuple[int, int]], num_tags: int) -> torch.Tensor:
    """(num_tags + 2, num_tags + 2) booleans from ``allowed_transitions``' pairs: row or column
    ``num_tags`` is the start, ``num_tags + 1`` the end."""
    matrix = torch.zeros(num_tags + 2, num_tags + 2, dtype=torch.bool)
    for source, target in allowed:
        matrix[source, target] = True
    return matrix


def viterbi_paths(
    crf: ConditionalRandomField, allowed: torch.Tensor, logits: torch.Tensor, mask: torch.Tensor
) -> List[List[int]]:
    """Each sentence's best path: ``[path for path, _ in crf.viterbi_tags(logits, mask)]`` for a CRF built
    with the constraints ``allowed`` (:func:`allowed_matrix`)."""
    with torch.no_grad():
        transitions, start, end = _constrained(crf, allowed.to(logits.device), logits.size(2))
        mask = mask.to(torch.bool)
        lengths = mask.sum(1)
        score = start.unsqueeze(0) + logits[:, 0]
        backpointers = []
        for step in range(1, logits.size(1)):
            best, previous = (score.unsqueeze(2) + transitions).max(dim=1)
            score = torch.where(mask[:, step].unsqueeze(1), best + logits[:, step], score)
            backpointers.append(previous)
        current = (score + end.unsqueeze(0)).argmax(dim=1)
        tags = [current]
        for step in range(logits.size(1) - 1, 0, -1):
            # inside a sentence (step < its length) follow the pointer; past its end keep its last tag
            followed = backpointers[step - 1].gather(1, current.unsqueeze(1)).squeeze(1)
            current = torch.where(step < lengths, followed, current)
            tags.append(current)
        paths = torch.stack(tags[::-1], dim=1).tolist()
    return [path[:length] for path, length in zip(paths, lengths.tolist(), strict=True)]


def _constrained(
    crf: ConditionalRandomField, allowed: torch.Tensor, num_tags: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The transitions, start and end scores that ``viterbi_tags`` decodes with."""
    inside = allowed[:num_tags, :num_tags].to(crf.transitions.dtype)
    transitions = crf.transitions * inside + FORBIDDEN * (1 - inside)
    starts = allowed[num_tags, :num_tags].to(crf.transitions.dtype)
    ends = allowed[:num_tags, num_tags + 1].to(crf.transitions.dtype)
    if crf.include_start_end_transitions:
        start = crf.start_transitions * starts + FORBIDDEN * (1 - starts)
        end = crf.end_transitions * ends + FORBIDDEN * (1 - ends)
    else:
        start, end = FORBIDDEN * (1 - starts), FORBIDDEN * (1 - ends)
    return transitions, start, end
