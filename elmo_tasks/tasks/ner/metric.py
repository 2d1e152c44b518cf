"""Span F1 (conlleval's numbers, see ``tags.py``) that also works in distributed training.

AllenNLP 2.10's ``SpanBasedF1Measure`` counts true positives, false positives and false
negatives per span type on each worker and refuses to report under torch.distributed. F1 is
not an average of per-worker F1s, so the counts themselves are summed over the workers when the
metric is read: every worker then reports the F1 of all the predictions the workers made
together, the number a single process computes on the same data.
"""

from collections import Counter
from typing import Dict, List, Optional, Tuple

import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.training.metrics import Metric, SpanBasedF1Measure

_Counts = Tuple[Counter, Counter, Counter]


@Metric.register("distributed_span_f1")
class DistributedSpanBasedF1Measure(SpanBasedF1Measure):
    """``SpanBasedF1Measure`` whose ``get_metric`` sums the per-type counts over all workers.

    Counting (``__call__``) is AllenNLP's. Every worker must call ``get_metric`` equally often
    (AllenNLP's trainer does, for every batch): it is a collective operation.
    """

    supports_distributed = True

    def _summed_counts(self) -> _Counts:
        """True positives, false positives and false negatives per span type, over all workers.

        Workers may have seen different span types, so the counts travel as dicts (one
        ``all_gather_object``) rather than as a tensor whose positions would have to agree.
        """
        local = (Counter(self._true_positives), Counter(self._false_positives), Counter(self._false_negatives))
        if not is_distributed():
            return local
        gathered: List[Optional[_Counts]] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, local)
        totals: _Counts = (Counter(), Counter(), Counter())
        for worker in gathered:
            assert worker is not None  # all_gather_object filled every slot
            for total, counts in zip(totals, worker, strict=True):
                total.update(counts)  # adds (``+`` would drop zero counts)
        return totals

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        """Precision, recall and F1 per span type and ``*-overall``, as AllenNLP names them."""
        true_positives, false_positives, false_negatives = self._summed_counts()
        metrics: Dict[str, float] = {}
        for tag in set(true_positives) | set(false_positives) | set(false_negatives):
            scores = self._compute_metrics(true_positives[tag], false_positives[tag], false_negatives[tag])
            metrics[f"precision-{tag}"], metrics[f"recall-{tag}"], metrics[f"f1-measure-{tag}"] = scores
        overall = self._compute_metrics(
            sum(true_positives.values()), sum(false_positives.values()), sum(false_negatives.values())
        )
        metrics["precision-overall"], metrics["recall-overall"], metrics["f1-measure-overall"] = overall
        if reset:
            self.reset()
        return metrics

    @staticmethod
    def _compute_metrics(true_positives: int, false_positives: int, false_negatives: int) -> Tuple[float, float, float]:
        """Precision, recall and F1 by conlleval's formulas (F1 from precision and recall), as fractions.

        AllenNLP adds 1e-13 to each denominator, so 3 of 32 gives a recall just under 9.375%,
        which prints as 9.37 where conlleval prints 9.38.
        """
        found, gold = true_positives + false_positives, true_positives + false_negatives
        precision = true_positives / found if found else 0.0
        recall = true_positives / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1
