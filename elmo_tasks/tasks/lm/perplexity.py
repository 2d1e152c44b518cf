"""Running forward/backward perplexity, labelled by how it was computed, plus throughput."""

import math
import time
from typing import Dict, Optional

import torch
import torch.distributed as dist


class PerplexityTracker:
    """Sums token NLLs per direction. ``ppl`` is ``exp`` of the mean of the two directions'
    mean NLLs (bilm-tf's "average perplexity"); ``tokens_per_s`` counts predicted tokens
    (each counted once, not once per direction) since the last reset, and ``tokens_*`` counts
    them. In distributed training the sums are added over all workers, so every worker reports
    the perplexity of everything the workers scored together (every worker must call
    :meth:`metrics` equally often, as AllenNLP's trainer does with its metrics).
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.reset()

    def reset(self) -> None:
        self.nll = {"fwd": 0.0, "bwd": 0.0}
        self.count = 0
        self._start: Optional[float] = None

    def start(self) -> None:
        """Call when a batch starts: the clock runs from the first batch after a reset."""
        if self._start is None:
            self._start = time.perf_counter()

    def add(self, fwd_nll_sum: float, bwd_nll_sum: float, tokens: int) -> None:
        self.start()
        self.nll["fwd"] += fwd_nll_sum
        self.nll["bwd"] += bwd_nll_sum
        self.count += tokens

    def metrics(self) -> Dict[str, float]:
        fwd_sum, bwd_sum, count = self.nll["fwd"], self.nll["bwd"], self.count
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            totals = torch.tensor([fwd_sum, bwd_sum, float(count)], dtype=torch.float64)
            dist.all_reduce(totals)
            fwd_sum, bwd_sum, count = float(totals[0]), float(totals[1]), int(totals[2])
        if count == 0:
            return {}
        fwd, bwd = fwd_sum / count, bwd_sum / count
        elapsed = time.perf_counter() - (self._start or time.perf_counter())
        out = {
            f"ppl_fwd_{self.label}": _safe_exp(fwd),
            f"ppl_bwd_{self.label}": _safe_exp(bwd),
            f"ppl_{self.label}": _safe_exp(0.5 * (fwd + bwd)),
            f"tokens_{self.label}": float(count),
        }
        if elapsed > 0:
            out["tokens_per_s"] = count / elapsed
        return out


def _safe_exp(value: float) -> float:
    return math.exp(min(value, 700.0))
